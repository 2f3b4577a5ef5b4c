# shellcheck shell=bash
# A throwaway PgBouncer in transaction mode in front of a cluster of scripts/lib/postgres.sh.
# Source this file (after postgres.sh and herald_pg_start), then:
#   herald_pgb_start   new PgBouncer in a fresh temp dir, on a Unix socket of its own; exports
#                      HERALD_PGB_DIR, HERALD_PGB_PORT and HERALD_PGB_DATABASE_URL (the herald
#                      database through PgBouncer; a client also needs HERALD_DB_PREPARED=0)
#   herald_pgb_stop    stop it and delete its dir (safe to call twice)
# HERALD_PGB_POOL_SIZE (default 20) is the server connections per database and user: small values
# make clients share server connections, which is what the tests want to exercise.
# HERALD_PGB_USERS: roles of the cluster, besides postgres, that may log in through it (space-separated).
# Installs Debian's pgbouncer (1.18) through scripts/setup when it is missing.

HERALD_PGB_BIN="${HERALD_PGB_BIN:-/usr/sbin/pgbouncer}"

herald_pgb__install() {
    [[ -x "$HERALD_PGB_BIN" ]] && return 0
    # scripts/setup installs every package the scripts need (without starting its service).
    "$(dirname "${BASH_SOURCE[0]}")/../setup" >&2 || return 1
    [[ -x "$HERALD_PGB_BIN" ]]
}

herald_pgb_start() {
    if [[ -z "${HERALD_PG_SOCKET_DIR:-}" ]]; then
        echo "pgbouncer: no Postgres (call herald_pg_start first)" >&2
        return 1
    fi
    if [[ -n "${HERALD_PGB_DIR:-}" && -d "${HERALD_PGB_DIR:-}" ]]; then
        echo "pgbouncer: already running in $HERALD_PGB_DIR" >&2
        return 1
    fi
    herald_pgb__install || return 1
    HERALD_PGB_DIR="$(mktemp -d /tmp/herald-pgb.XXXXXX)"
    HERALD_PGB_PORT="${HERALD_PGB_PORT:-6432}"
    export HERALD_PGB_DIR HERALD_PGB_PORT
    # PgBouncer refuses to run as root; it runs as postgres, like the cluster.
    chown postgres:postgres "$HERALD_PGB_DIR"
    chmod 755 "$HERALD_PGB_DIR"
    # trust still needs the user in auth_file; the cluster itself trusts local connections.
    local user
    # shellcheck disable=SC2086  # a list of names
    for user in postgres ${HERALD_PGB_USERS:-}; do printf '"%s" ""\n' "$user"; done >"$HERALD_PGB_DIR/userlist.txt"
    cat >"$HERALD_PGB_DIR/pgbouncer.ini" <<INI
[databases]
* = host=$HERALD_PG_SOCKET_DIR port=$HERALD_PG_PORT

[pgbouncer]
pool_mode = transaction
listen_addr =
listen_port = $HERALD_PGB_PORT
unix_socket_dir = $HERALD_PGB_DIR
auth_type = trust
auth_file = $HERALD_PGB_DIR/userlist.txt
default_pool_size = ${HERALD_PGB_POOL_SIZE:-20}
max_client_conn = 1000
logfile = $HERALD_PGB_DIR/pgbouncer.log
pidfile = $HERALD_PGB_DIR/pgbouncer.pid
INI
    chown postgres:postgres "$HERALD_PGB_DIR"/*
    if ! (cd "$HERALD_PGB_DIR" && runuser -u postgres -- "$HERALD_PGB_BIN" -d "$HERALD_PGB_DIR/pgbouncer.ini"); then
        echo "pgbouncer: failed to start" >&2
        tail -n 20 "$HERALD_PGB_DIR/pgbouncer.log" >&2 2>/dev/null || true
        herald_pgb_stop
        return 1
    fi
    # Ready when it answers, not when its socket file appears: the file exists from bind(), and a
    # connect before listen() is refused. The admin database answers without a server connection.
    local i
    for ((i = 0; i < 300; i++)); do
        "${HERALD_PG_BIN:-/usr/lib/postgresql/15/bin}/pg_isready" -q -h "$HERALD_PGB_DIR" -p "$HERALD_PGB_PORT" \
            -U postgres -d pgbouncer && break
        sleep 0.1
    done
    if ((i == 300)); then
        echo "pgbouncer: not accepting connections after 30 s" >&2
        tail -n 20 "$HERALD_PGB_DIR/pgbouncer.log" >&2 2>/dev/null || true
        herald_pgb_stop
        return 1
    fi
    HERALD_PGB_DATABASE_URL="postgresql://postgres@/herald?host=$HERALD_PGB_DIR&port=$HERALD_PGB_PORT"
    export HERALD_PGB_DATABASE_URL
}

herald_pgb_stop() {
    [[ -z "${HERALD_PGB_DIR:-}" ]] && return 0
    if [[ -f "$HERALD_PGB_DIR/pgbouncer.pid" ]]; then
        local pid
        pid="$(cat "$HERALD_PGB_DIR/pgbouncer.pid" 2>/dev/null || true)"
        if [[ "$pid" =~ ^[0-9]+$ ]]; then
            kill -TERM "$pid" 2>/dev/null || true
            local i
            for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    case "$HERALD_PGB_DIR" in
        /tmp/herald-pgb.*) rm -rf "$HERALD_PGB_DIR" ;;
    esac
    unset HERALD_PGB_DIR HERALD_PGB_DATABASE_URL
}
