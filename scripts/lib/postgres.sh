# shellcheck shell=bash
# Throwaway PostgreSQL 15 clusters for tests, benchmarks and the demo.
# Source this file, then:
#   herald_pg_start         new cluster in a fresh temp dir, database "herald"; exports
#                           HERALD_PG_DIR, HERALD_PG_SOCKET_DIR, HERALD_PG_PORT,
#                           HERALD_DATABASE_URL (and HERALD_DATABASE_TCP_URL with TCP)
#   herald_pg_stop          stop the server and delete everything (safe to call twice)
#   herald_pg_stop_server   stop the server, keep the data (outage tests)
#   herald_pg_start_server  start the same cluster again
#   herald_pg_psql ARGS...  psql against the herald database
# HERALD_PG_STOP_CMD / HERALD_PG_START_CMD hold the last two as single /bin/sh command lines.
# Set HERALD_PG_PORT before herald_pg_start to also listen on localhost:PORT (benchmarks);
# otherwise the server listens on its Unix socket only. HERALD_PG_SETTINGS (postgresql.conf lines)
# is appended to the cluster's settings (bench/delivery's BENCH_STATEMENTS loads pg_stat_statements).

HERALD_PG_BIN="${HERALD_PG_BIN:-/usr/lib/postgresql/15/bin}"

# Percent-encodes a string for a URI query value (keeps unreserved characters and '/').
herald_pg__urlencode() {
    local LC_ALL=C # walk bytes, not characters
    local s="$1" out="" c i
    for ((i = 0; i < ${#s}; i++)); do
        c="${s:i:1}"
        case "$c" in
            [A-Za-z0-9._~/-]) out+="$c" ;;
            *) out+="$(printf '%%%02X' "'$c")" ;;
        esac
    done
    printf '%s' "$out"
}

# Runs a command as the postgres user from inside the cluster dir (postgres warns when it
# cannot read its working directory, e.g. /root).
herald_pg__as_postgres() {
    (cd "$HERALD_PG_DIR" && runuser -u postgres -- "$@")
}

herald_pg__show_log() {
    if [[ -n "${HERALD_PG_DIR:-}" && -f "$HERALD_PG_DIR/postgres.log" ]]; then
        echo "--- last lines of $HERALD_PG_DIR/postgres.log ---" >&2
        tail -n 30 "$HERALD_PG_DIR/postgres.log" >&2 || true
    fi
}

herald_pg__wait_ready() {
    local i
    for ((i = 0; i < 100; i++)); do
        if "$HERALD_PG_BIN/pg_isready" -q -h "$HERALD_PG_SOCKET_DIR" -p "$HERALD_PG_PORT" -U postgres; then
            return 0
        fi
        sleep 0.1
    done
    echo "postgres: not ready after 10 s" >&2
    herald_pg__show_log
    return 1
}

herald_pg_start() {
    if [[ -n "${HERALD_PG_DIR:-}" && -d "${HERALD_PG_DIR:-}" ]]; then
        echo "postgres: a cluster is already running in $HERALD_PG_DIR" >&2
        return 1
    fi
    local listen=""
    HERALD_PG__TCP=0
    if [[ -n "${HERALD_PG_PORT:-}" ]]; then
        listen="localhost"
        HERALD_PG__TCP=1
    else
        # Socket only: the port number just names the socket file, and the directory is
        # private, so the default cannot clash with anything.
        HERALD_PG_PORT=5432
    fi

    # Under /tmp, not $TMPDIR: the postgres user must be able to reach it, and the socket
    # path must stay under the 107-byte limit of sun_path.
    HERALD_PG_DIR="$(mktemp -d /tmp/herald-pg.XXXXXX)"
    HERALD_PG_SOCKET_DIR="$HERALD_PG_DIR"
    export HERALD_PG_DIR HERALD_PG_SOCKET_DIR HERALD_PG_PORT
    chown postgres:postgres "$HERALD_PG_DIR"
    chmod 755 "$HERALD_PG_DIR" # any local user may reach the socket; data/ stays 0700

    # --no-sync: initdb's own fsyncs only; the running server keeps fsync=on below.
    if ! herald_pg__as_postgres "$HERALD_PG_BIN/initdb" -D "$HERALD_PG_DIR/data" \
        -A trust -U postgres -E UTF8 --locale=C.UTF-8 --no-sync \
        >"$HERALD_PG_DIR/initdb.log" 2>&1; then
        echo "postgres: initdb failed:" >&2
        cat "$HERALD_PG_DIR/initdb.log" >&2
        herald_pg_stop
        return 1
    fi

    # Settings go into postgresql.conf instead of pg_ctl -o, so a restart of the same cluster
    # (herald_pg_start_server, HERALD_TEST_PG_START) needs no options and cannot drift.
    # fsync stays on: benchmarks should measure a durable commit.
    cat >>"$HERALD_PG_DIR/data/postgresql.conf" <<EOF

# --- herald scripts/lib/postgres.sh ---
listen_addresses = '$listen'
port = $HERALD_PG_PORT
unix_socket_directories = '$HERALD_PG_SOCKET_DIR'
fsync = on
max_connections = 400
shared_buffers = 256MB
# The WAL settings docs/operations.md recommends for the outbox ("Postgres settings"): with the 1 GB
# default a drain at 25,000 deliveries/s checkpoints every ~12 s, and the first change of every page
# after a checkpoint writes a full-page image (autovacuum of a 10M-row outbox: 400,000 per pass).
max_wal_size = 8GB
checkpoint_timeout = 15min
# The outbox is vacuumed every 10 s, not once a minute (docs/operations.md, "Postgres settings"): a drain
# with inserts leaves a minute's dead rows (over a million) between passes at the default.
autovacuum_naptime = 10s
log_min_messages = warning
${HERALD_PG_SETTINGS:-}
EOF

    HERALD_PG_START_CMD="cd $HERALD_PG_DIR && runuser -u postgres -- $HERALD_PG_BIN/pg_ctl -D $HERALD_PG_DIR/data -l $HERALD_PG_DIR/postgres.log -w -t 30 start"
    HERALD_PG_STOP_CMD="cd $HERALD_PG_DIR && runuser -u postgres -- $HERALD_PG_BIN/pg_ctl -D $HERALD_PG_DIR/data -m fast -w -t 30 stop"
    export HERALD_PG_START_CMD HERALD_PG_STOP_CMD

    if ! herald_pg_start_server; then
        herald_pg_stop
        return 1
    fi

    if ! "$HERALD_PG_BIN/psql" -X -q -h "$HERALD_PG_SOCKET_DIR" -p "$HERALD_PG_PORT" -U postgres \
        -d postgres -v ON_ERROR_STOP=1 -c 'CREATE DATABASE herald' >/dev/null; then
        echo "postgres: could not create database herald" >&2
        herald_pg_stop
        return 1
    fi

    HERALD_DATABASE_URL="postgresql://postgres@/herald?host=$(herald_pg__urlencode "$HERALD_PG_SOCKET_DIR")"
    if ((HERALD_PG__TCP)); then
        HERALD_DATABASE_URL+="&port=$HERALD_PG_PORT"
        HERALD_DATABASE_TCP_URL="postgresql://postgres@localhost:$HERALD_PG_PORT/herald"
        export HERALD_DATABASE_TCP_URL
    fi
    export HERALD_DATABASE_URL
}

herald_pg_start_server() {
    if [[ -z "${HERALD_PG_DIR:-}" || ! -d "$HERALD_PG_DIR/data" ]]; then
        echo "postgres: no cluster (call herald_pg_start first)" >&2
        return 1
    fi
    if ! /bin/sh -c "$HERALD_PG_START_CMD" >/dev/null 2>&1; then
        echo "postgres: pg_ctl start failed" >&2
        herald_pg__show_log
        return 1
    fi
    herald_pg__wait_ready
}

herald_pg_stop_server() {
    if [[ -z "${HERALD_PG_DIR:-}" || ! -f "$HERALD_PG_DIR/data/postmaster.pid" ]]; then
        return 0 # nothing running
    fi
    if ! /bin/sh -c "$HERALD_PG_STOP_CMD" >/dev/null 2>&1; then
        # Fast shutdown waits for nothing but can still hang on a stuck backend.
        herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$HERALD_PG_DIR/data" -m immediate -w -t 10 stop \
            >/dev/null 2>&1 || true
    fi
    if [[ -f "$HERALD_PG_DIR/data/postmaster.pid" ]]; then
        # Last resort: the postmaster's own pid (first line of postmaster.pid).
        local pid
        pid="$(head -n 1 "$HERALD_PG_DIR/data/postmaster.pid" 2>/dev/null || true)"
        if [[ "$pid" =~ ^[0-9]+$ ]]; then
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
        fi
        rm -f "$HERALD_PG_DIR/data/postmaster.pid"
    fi
}

herald_pg_stop() {
    if [[ -z "${HERALD_PG_DIR:-}" ]]; then
        return 0
    fi
    if [[ -d "$HERALD_PG_DIR" ]]; then
        herald_pg_stop_server || true
        # Only ever delete a directory this file created.
        case "$HERALD_PG_DIR" in
            /tmp/herald-pg.*) rm -rf "$HERALD_PG_DIR" ;;
        esac
    fi
    # HERALD_PG_PORT stays only if the caller chose it (TCP mode), so a later start behaves alike.
    if [[ "${HERALD_PG__TCP:-0}" != 1 ]]; then
        unset HERALD_PG_PORT
    fi
    unset HERALD_PG_DIR HERALD_PG_SOCKET_DIR HERALD_DATABASE_URL HERALD_DATABASE_TCP_URL \
        HERALD_PG_START_CMD HERALD_PG_STOP_CMD HERALD_PG__TCP
}

herald_pg_psql() {
    "$HERALD_PG_BIN/psql" -X -v ON_ERROR_STOP=1 -P pager=off \
        -h "$HERALD_PG_SOCKET_DIR" -p "$HERALD_PG_PORT" -U postgres -d herald "$@"
}
