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
# Failover (docs/runbooks/postgres.md, "Without Patroni"). NODE is "primary" (the first cluster, $HERALD_PG_DIR/data)
# or "standby" ($HERALD_PG_DIR/standby), named by where they started, whatever their role now:
#   herald_pg_start_standby [sync]  a hot standby of the running cluster (pg_basebackup -R, streaming
#                           replication); "sync" makes the primary wait for it on every commit
#                           (synchronous_standby_names), so an acknowledged commit is on both. Exports
#                           HERALD_PG_STANDBY_DIR, HERALD_PG_STANDBY_PORT and HERALD_DATABASE_FAILOVER_URL
#                           (both nodes, target_session_attrs=read-write: libpq connects to the primary)
#   herald_pg_promote [NODE]        pg_ctl promote (default standby); returns once it accepts writes
#   herald_pg_kill NODE             kill -9 the node's postmaster (a crash)
#   herald_pg_restart NODE [fast|immediate]   pg_ctl restart -m MODE (default fast); starts a killed node
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
max_connections = 800
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
    # Built from HERALD_PG_DIR, never the exported HERALD_PG_START_CMD: a shell that inherited another
    # cluster's variables (a test's private cluster under scripts/test) must act on its own cluster.
    if ! herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$HERALD_PG_DIR/data" -l "$HERALD_PG_DIR/postgres.log" \
        -w -t 30 start >/dev/null 2>&1; then
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
    # Built from HERALD_PG_DIR, never the exported HERALD_PG_STOP_CMD (see herald_pg_start_server).
    if ! herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$HERALD_PG_DIR/data" -m fast -w -t 30 stop \
        >/dev/null 2>&1; then
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
        herald_pg__stop_node standby || true
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
        HERALD_PG_START_CMD HERALD_PG_STOP_CMD HERALD_PG__TCP \
        HERALD_PG_STANDBY_DIR HERALD_PG_STANDBY_PORT HERALD_DATABASE_FAILOVER_URL
}

herald_pg_psql() {
    "$HERALD_PG_BIN/psql" -X -v ON_ERROR_STOP=1 -P pager=off \
        -h "$HERALD_PG_SOCKET_DIR" -p "$HERALD_PG_PORT" -U postgres -d herald "$@"
}

# --- failover: a hot standby, promotion, crashes and restarts ---

# The data directory of NODE (primary|standby).
herald_pg__node_dir() {
    case "$1" in
        primary) printf '%s' "$HERALD_PG_DIR/data" ;;
        standby) printf '%s' "$HERALD_PG_DIR/standby" ;;
        *)
            echo "postgres: unknown node '$1' (primary or standby)" >&2
            return 1
            ;;
    esac
}

herald_pg__node_port() {
    case "$1" in
        primary) printf '%s' "$HERALD_PG_PORT" ;;
        standby) printf '%s' "${HERALD_PG_STANDBY_PORT:-$((HERALD_PG_PORT + 1))}" ;;
    esac
}

herald_pg__node_ready() {
    local port i
    port="$(herald_pg__node_port "$1")"
    for ((i = 0; i < 300; i++)); do
        if "$HERALD_PG_BIN/pg_isready" -q -h "$HERALD_PG_SOCKET_DIR" -p "$port" -U postgres; then
            return 0
        fi
        sleep 0.1
    done
    echo "postgres: $1 not ready after 30 s" >&2
    tail -n 30 "$HERALD_PG_DIR/$1.log" >&2 2>/dev/null || true
    return 1
}

# Runs one statement on NODE's postgres database and prints the value.
herald_pg__node_sql() {
    "$HERALD_PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$HERALD_PG_SOCKET_DIR" \
        -p "$(herald_pg__node_port "$1")" -U postgres -d postgres -c "$2"
}

herald_pg_start_standby() {
    local mode="${1:-async}" dir i state
    if [[ -z "${HERALD_PG_DIR:-}" || ! -f "$HERALD_PG_DIR/data/postmaster.pid" ]]; then
        echo "postgres: no running cluster (call herald_pg_start first)" >&2
        return 1
    fi
    dir="$(herald_pg__node_dir standby)"
    HERALD_PG_STANDBY_PORT="${HERALD_PG_STANDBY_PORT:-$((HERALD_PG_PORT + 1))}"
    HERALD_PG_STANDBY_DIR="$dir"
    export HERALD_PG_STANDBY_DIR HERALD_PG_STANDBY_PORT
    # -R writes primary_conninfo and standby.signal; -X stream copies the WAL written meanwhile.
    if ! herald_pg__as_postgres "$HERALD_PG_BIN/pg_basebackup" -h "$HERALD_PG_SOCKET_DIR" -p "$HERALD_PG_PORT" \
        -U postgres -D "$dir" -R -X stream -c fast >"$HERALD_PG_DIR/basebackup.log" 2>&1; then
        echo "postgres: pg_basebackup failed:" >&2
        cat "$HERALD_PG_DIR/basebackup.log" >&2
        return 1
    fi
    # The copied postgresql.conf names the primary's port; the later line wins. cluster_name is the
    # application_name the standby's WAL receiver reports, which synchronous_standby_names lists.
    printf '\n# --- herald scripts/lib/postgres.sh: standby ---\nport = %s\ncluster_name = %s\n' \
        "$HERALD_PG_STANDBY_PORT" "'herald_standby'" >>"$dir/postgresql.conf"
    if ! herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$dir" -l "$HERALD_PG_DIR/standby.log" -w -t 30 start \
        >/dev/null 2>&1; then
        echo "postgres: the standby did not start" >&2
        tail -n 30 "$HERALD_PG_DIR/standby.log" >&2 || true
        return 1
    fi
    herald_pg__node_ready standby || return 1
    if [[ "$mode" == sync ]]; then
        # On the primary only (ALTER SYSTEM after the copy): a promoted standby must not wait for a
        # standby it does not have. synchronous_commit keeps its default, on.
        herald_pg__node_sql primary "ALTER SYSTEM SET synchronous_standby_names = 'herald_standby'" >/dev/null || return 1
        herald_pg__node_sql primary "SELECT pg_reload_conf()" >/dev/null || return 1
    fi
    # Streaming (and counted as synchronous, for sync) before returning.
    for ((i = 0; i < 300; i++)); do
        state="$(herald_pg__node_sql primary "SELECT sync_state FROM pg_stat_replication
            WHERE application_name = 'herald_standby' AND state = 'streaming'" 2>/dev/null || true)"
        if [[ "$mode" == sync && "$state" == sync ]] || [[ "$mode" != sync && -n "$state" ]]; then
            break
        fi
        sleep 0.1
    done
    if ((i == 300)); then
        echo "postgres: the standby is not streaming after 30 s" >&2
        return 1
    fi
    if ((HERALD_PG__TCP)); then
        HERALD_DATABASE_FAILOVER_URL="postgresql://postgres@localhost:$HERALD_PG_PORT,localhost:$HERALD_PG_STANDBY_PORT"
        HERALD_DATABASE_FAILOVER_URL+="/herald?target_session_attrs=read-write"
    else
        local socket
        socket="$(herald_pg__urlencode "$HERALD_PG_SOCKET_DIR")"
        HERALD_DATABASE_FAILOVER_URL="postgresql://postgres@/herald?host=$socket,$socket"
        HERALD_DATABASE_FAILOVER_URL+="&port=$HERALD_PG_PORT,$HERALD_PG_STANDBY_PORT&target_session_attrs=read-write"
    fi
    export HERALD_DATABASE_FAILOVER_URL
}

herald_pg_promote() {
    local node="${1:-standby}" dir i
    dir="$(herald_pg__node_dir "$node")" || return 1
    herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$dir" -w -t 30 promote >/dev/null || return 1
    for ((i = 0; i < 300; i++)); do
        if [[ "$(herald_pg__node_sql "$node" "SELECT pg_is_in_recovery()" 2>/dev/null)" == f ]]; then
            return 0
        fi
        sleep 0.1
    done
    echo "postgres: $node still in recovery after 30 s" >&2
    return 1
}

herald_pg_kill() {
    local dir pid
    dir="$(herald_pg__node_dir "${1:?node}")" || return 1
    pid="$(head -n 1 "$dir/postmaster.pid" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    kill -KILL "$pid" 2>/dev/null || true
    # Gone before returning, so the caller's next step meets a dead server.
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}

herald_pg_restart() {
    local node="${1:?node}" mode="${2:-fast}" dir pid i
    case "$mode" in
        fast | immediate) ;;
        *)
            echo "postgres: the restart mode is fast or immediate" >&2
            return 1
            ;;
    esac
    dir="$(herald_pg__node_dir "$node")" || return 1
    pid="$(head -n 1 "$dir/postmaster.pid" 2>/dev/null || true)"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
        herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$dir" -l "$HERALD_PG_DIR/$node.log" -m "$mode" \
            -w -t 60 restart >/dev/null || return 1
    else
        # A killed node: its backends may outlive the postmaster briefly and still hold its shared memory.
        for ((i = 0; i < 100; i++)); do
            if herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$dir" -l "$HERALD_PG_DIR/$node.log" -w -t 60 start \
                >/dev/null 2>&1; then
                break
            fi
            sleep 0.1
        done
    fi
    herald_pg__node_ready "$node"
}

# Stops NODE if it runs (immediate: the cluster is about to be deleted).
herald_pg__stop_node() {
    local dir
    dir="$(herald_pg__node_dir "$1")" || return 1
    [[ -f "$dir/postmaster.pid" ]] || return 0
    herald_pg__as_postgres "$HERALD_PG_BIN/pg_ctl" -D "$dir" -m immediate -w -t 10 stop >/dev/null 2>&1 ||
        herald_pg_kill "$1"
}
