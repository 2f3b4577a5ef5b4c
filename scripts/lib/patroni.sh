# shellcheck shell=bash
# A throwaway three-node Patroni cluster on etcd, on loopback, for benchmarks and tests
# (deploy/patroni/patroni.yml.in; docs/runbooks/postgres.md, "Failover with Patroni").
# Source this file (after scripts/lib/postgres.sh for HERALD_PG_BIN), then:
#   herald_patroni_install        etcd-server (Debian) and a venv with deploy/patroni/requirements.txt
#                                 (HERALD_PATRONI_VENV, default /opt/herald/patroni-venv)
#   herald_patroni_start [strict] three etcd members and three Patroni nodes (herald1..3) in a fresh temp dir;
#                                 returns once there is a leader, a synchronous standby and a streaming replica,
#                                 and the database "herald" exists. "strict" sets synchronous_mode_strict.
#                                 Exports HERALD_PATRONI_DIR and HERALD_PATRONI_URL (the three nodes,
#                                 target_session_attrs=read-write: what Herald's HERALD_DATABASE_URL is set to)
#   herald_patroni_stop           stops everything and deletes the directory (safe to call twice)
#   herald_patroni_cluster        GET /cluster from the first node whose REST API answers (JSON)
#   herald_patroni_leader         the leader's name (empty when there is none)
#   herald_patroni_sync_standby   the synchronous standby's name (empty when there is none)
#   herald_patroni_wait_leader [NOT [SECONDS]]  waits for a leader other than NOT that accepts writes; prints it
#   herald_patroni_wait_members [SECONDS]  waits for a leader, a synchronous standby and a streaming replica
#   herald_patroni_kill NODE      kill -9 the node's Patroni and its postmaster
#   herald_patroni_freeze NODE / herald_patroni_thaw NODE   SIGSTOP / SIGCONT both (a hung node)
#   herald_patroni_start_node NODE   starts the node's Patroni again (it starts or rejoins its Postgres)
#   herald_patroni_etcd_stop N / herald_patroni_etcd_start N   stops / starts etcd member N (1..3)
#   herald_patroni_etcd_wait_quorum N [SECONDS]   waits until member N reports a healthy etcd cluster
#   herald_patroni_switchover [CANDIDATE]   a planned switchover through the REST API (POST /switchover)
#   herald_patroni_set_strict true|false    synchronous_mode_strict, at run time (PATCH /config)
#   herald_patroni_in_recovery NODE         t on a replica or a demoted leader, f on the writable leader
#   herald_patroni_sql NODE SQL   one statement on NODE's database herald; prints the value
#   herald_patroni_psql NODE ARGS...        psql on NODE's database herald (-qAt, ON_ERROR_STOP)
#   herald_patroni_ctl ARGS...    patronictl against the cluster
#   herald_patroni_port KIND N    the loopback port of node or member N: KIND pg, rest, etcd or peer
#   herald_patroni_index NODE     herald1..3 -> 1..3
# Ports (loopback, from HERALD_PATRONI_PORT_BASE, default 15430): Postgres BASE+1..3, Patroni's REST API
# BASE+11..13, etcd clients BASE+21..23, etcd peers BASE+31..33.

HERALD_PG_BIN="${HERALD_PG_BIN:-/usr/lib/postgresql/15/bin}"
HERALD_PATRONI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Outside the checkout: Patroni runs as postgres, who must reach the venv, and a checkout may sit under a
# directory only root can enter (/root).
HERALD_PATRONI_VENV="${HERALD_PATRONI_VENV:-/opt/herald/patroni-venv}"
HERALD_PATRONI_NODES=(herald1 herald2 herald3)

herald_patroni_port() { # KIND N: the loopback port of node or member N (1..3)
    local base="${HERALD_PATRONI_PORT_BASE:-15430}"
    case "$1" in
        pg) printf '%s' $((base + $2)) ;;
        rest) printf '%s' $((base + 10 + $2)) ;;
        etcd) printf '%s' $((base + 20 + $2)) ;;
        peer) printf '%s' $((base + 30 + $2)) ;;
    esac
}

herald_patroni_index() { # NODE -> 1..3
    case "$1" in
        herald1) echo 1 ;;
        herald2) echo 2 ;;
        herald3) echo 3 ;;
        *)
            echo "patroni: unknown node '$1' (herald1, herald2 or herald3)" >&2
            return 1
            ;;
    esac
}

herald_patroni_install() {
    if ! command -v etcd >/dev/null 2>&1; then
        if [[ "$(id -u)" -ne 0 ]]; then
            echo "patroni: etcd is missing (apt-get install etcd-server) and this is not root" >&2
            return 1
        fi
        "$HERALD_PATRONI_ROOT/scripts/setup" || return 1
    fi
    local requirements="$HERALD_PATRONI_ROOT/deploy/patroni/requirements.txt" stamp wanted
    stamp="$HERALD_PATRONI_VENV/.requirements.sha256"
    wanted="$(cat "$requirements" - <<<"/usr/bin/python3" | sha256sum | cut -d' ' -f1)"
    if [[ ! -x "$HERALD_PATRONI_VENV/bin/patroni" || "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
        echo "patroni: installing deploy/patroni/requirements.txt into $HERALD_PATRONI_VENV"
        mkdir -p "$(dirname "$HERALD_PATRONI_VENV")"
        chmod 755 "$(dirname "$HERALD_PATRONI_VENV")"
        # Debian's python3, not the first on PATH: Patroni runs as postgres, who must be able to reach the
        # interpreter the venv links to (a pyenv under /root is out of its reach).
        rm -rf "$HERALD_PATRONI_VENV"
        /usr/bin/python3 -m venv "$HERALD_PATRONI_VENV" || return 1
        "$HERALD_PATRONI_VENV/bin/pip" install -q --disable-pip-version-check -r "$requirements" || return 1
        echo "$wanted" >"$stamp"
    fi
}

herald_patroni__show_logs() {
    local node
    for node in "${HERALD_PATRONI_NODES[@]}"; do
        echo "--- last lines of $node's Patroni log ---" >&2
        tail -n 15 "$HERALD_PATRONI_DIR/$node/patroni.log" >&2 2>/dev/null || true
    done
}

herald_patroni_start() {
    local strict=false i node port kind
    if [[ "${1:-}" == strict ]]; then strict=true; fi
    if [[ -n "${HERALD_PATRONI_DIR:-}" && -d "$HERALD_PATRONI_DIR" ]]; then
        echo "patroni: a cluster is already running in $HERALD_PATRONI_DIR" >&2
        return 1
    fi
    for kind in pg rest etcd peer; do
        for i in 1 2 3; do
            port="$(herald_patroni_port "$kind" "$i")"
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                echo "patroni: port $port is in use (set HERALD_PATRONI_PORT_BASE)" >&2
                return 1
            fi
        done
    done
    herald_patroni_install || return 1
    HERALD_PATRONI_DIR="$(mktemp -d /tmp/herald-patroni.XXXXXX)"
    export HERALD_PATRONI_DIR
    chmod 755 "$HERALD_PATRONI_DIR"

    local cluster="" hosts=""
    for i in 1 2 3; do
        cluster+="${cluster:+,}etcd$i=http://127.0.0.1:$(herald_patroni_port peer "$i")"
        hosts+="${hosts:+,}127.0.0.1:$(herald_patroni_port etcd "$i")"
    done
    printf '%s\n' "$cluster" >"$HERALD_PATRONI_DIR/etcd-cluster"
    for i in 1 2 3; do herald_patroni_etcd_start "$i" new; done
    for i in 1 2 3; do
        herald_patroni_etcd_wait_quorum "$i" || {
            herald_patroni_stop
            return 1
        }
    done

    for node in "${HERALD_PATRONI_NODES[@]}"; do
        i="$(herald_patroni_index "$node")"
        mkdir -p "$HERALD_PATRONI_DIR/$node/log"
        sed -e "s|@NODE_NAME@|$node|g" -e "s|@NODE_DIR@|$HERALD_PATRONI_DIR/$node|g" \
            -e "s|@REST_PORT@|$(herald_patroni_port rest "$i")|g" -e "s|@PG_PORT@|$(herald_patroni_port pg "$i")|g" \
            -e "s|@ETCD_HOSTS@|$hosts|g" -e "s|@SYNC_STRICT@|$strict|g" \
            "$HERALD_PATRONI_ROOT/deploy/patroni/patroni.yml.in" >"$HERALD_PATRONI_DIR/$node/patroni.yml"
        chown -R postgres:postgres "$HERALD_PATRONI_DIR/$node"
        chmod 755 "$HERALD_PATRONI_DIR/$node" # the Unix socket is reachable; data/ stays 0700
        herald_patroni_start_node "$node"
        # The first node bootstraps alone, so the leader is known and the others clone from it.
        if [[ "$node" == herald1 ]]; then
            herald_patroni_wait_leader "" 60 >/dev/null || {
                herald_patroni__show_logs
                herald_patroni_stop
                return 1
            }
        fi
    done
    if ! herald_patroni_wait_members 120; then
        herald_patroni__show_logs
        herald_patroni_stop
        return 1
    fi
    if ! herald_patroni__psql_on "$(herald_patroni_leader)" postgres -c "CREATE DATABASE herald" >/dev/null; then
        echo "patroni: could not create database herald" >&2
        herald_patroni_stop
        return 1
    fi
    HERALD_PATRONI_URL="postgresql://postgres@127.0.0.1:$(herald_patroni_port pg 1)"
    HERALD_PATRONI_URL+=",127.0.0.1:$(herald_patroni_port pg 2),127.0.0.1:$(herald_patroni_port pg 3)"
    HERALD_PATRONI_URL+="/herald?target_session_attrs=read-write"
    export HERALD_PATRONI_URL
}

herald_patroni_etcd_start() { # N [new|existing]
    local i="$1" state="${2:-existing}" dir="$HERALD_PATRONI_DIR/etcd$1" port
    port="$(herald_patroni_port etcd "$i")"
    mkdir -p "$dir"
    setsid etcd --name "etcd$i" --data-dir "$dir/data" \
        --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
        --listen-peer-urls "http://127.0.0.1:$(herald_patroni_port peer "$i")" \
        --initial-advertise-peer-urls "http://127.0.0.1:$(herald_patroni_port peer "$i")" \
        --initial-cluster "$(cat "$HERALD_PATRONI_DIR/etcd-cluster")" --initial-cluster-state "$state" \
        --initial-cluster-token "herald-${HERALD_PATRONI_DIR##*.}" >>"$dir/etcd.log" 2>&1 &
    echo "$!" >"$dir/pid"
    disown "$!"
}

herald_patroni_etcd_wait_quorum() { # N [SECONDS]: until member N reports a healthy cluster (a quorum)
    local port deadline=$((SECONDS + ${2:-30}))
    port="$(herald_patroni_port etcd "$1")"
    until [[ "$(curl -s --max-time 1 "http://127.0.0.1:$port/health" | jq -r '.health' 2>/dev/null)" == true ]]; do
        if ((SECONDS >= deadline)); then
            echo "patroni: etcd member $1 not healthy after ${2:-30} s" >&2
            tail -n 20 "$HERALD_PATRONI_DIR/etcd$1/etcd.log" >&2
            return 1
        fi
        sleep 0.1
    done
}

herald_patroni_etcd_stop() { # N
    local pid i
    pid="$(cat "$HERALD_PATRONI_DIR/etcd$1/pid" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    # A member without its peers can take a while to leave; 5 s, then SIGKILL (etcd's WAL is fsynced).
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$HERALD_PATRONI_DIR/etcd$1/pid"
}

herald_patroni_start_node() { # NODE
    local node="$1" dir="$HERALD_PATRONI_DIR/$1"
    herald_patroni_index "$node" >/dev/null || return 1
    # As postgres (initdb and postgres refuse root), through exec only: $! is Patroni's own pid.
    (cd "$dir" && exec env HOME="$dir" setpriv --reuid=postgres --regid=postgres --init-groups -- \
        "$HERALD_PATRONI_VENV/bin/patroni" "$dir/patroni.yml") >>"$dir/patroni.log" 2>&1 &
    echo "$!" >"$dir/patroni.pid"
    disown "$!" # its kill -9 is a scenario, not news
}

herald_patroni__patroni_pid() { cat "$HERALD_PATRONI_DIR/$1/patroni.pid" 2>/dev/null || true; }
herald_patroni__postmaster_pid() { head -n 1 "$HERALD_PATRONI_DIR/$1/data/postmaster.pid" 2>/dev/null || true; }

# The process ids of the node's Patroni and postmaster, as their pid files record them, one a line.
herald_patroni__pids() { # NODE
    local pid
    for pid in "$(herald_patroni__patroni_pid "$1")" "$(herald_patroni__postmaster_pid "$1")"; do
        if [[ "$pid" =~ ^[0-9]+$ ]]; then echo "$pid"; fi
    done
}

herald_patroni_kill() { # NODE
    local pid
    for pid in $(herald_patroni__pids "$1"); do
        kill -KILL "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    done
}

herald_patroni_freeze() { # NODE
    local pid
    for pid in $(herald_patroni__pids "$1"); do kill -STOP "$pid" 2>/dev/null || true; done
}

herald_patroni_thaw() { # NODE
    local pid
    for pid in $(herald_patroni__pids "$1"); do kill -CONT "$pid" 2>/dev/null || true; done
}

herald_patroni_cluster() {
    local i
    for i in 1 2 3; do
        if curl -sf --max-time 2 "http://127.0.0.1:$(herald_patroni_port rest "$i")/cluster"; then return 0; fi
    done
    return 1
}

herald_patroni__member() { # ROLE [STATE]: the first member with that role (and state)
    herald_patroni_cluster 2>/dev/null |
        jq -r --arg role "$1" --arg state "${2:-}" \
            'first(.members[] | select(.role == $role and ($state == "" or .state == $state)) | .name) // empty'
}
herald_patroni_leader() { herald_patroni__member leader running; }
herald_patroni_sync_standby() { herald_patroni__member sync_standby streaming; }

herald_patroni_wait_leader() { # [NOT [SECONDS]]
    local not="${1:-}" deadline=$((SECONDS + ${2:-60})) leader
    while ((SECONDS < deadline)); do
        leader="$(herald_patroni_leader)"
        if [[ -n "$leader" && "$leader" != "$not" ]] &&
            [[ "$(herald_patroni_in_recovery "$leader" 2>/dev/null)" == f ]]; then
            printf '%s\n' "$leader"
            return 0
        fi
        sleep 0.2
    done
    echo "patroni: no leader${not:+ other than $not} after ${2:-60} s" >&2
    return 1
}

herald_patroni_wait_members() { # [SECONDS]
    local deadline=$((SECONDS + ${1:-60})) counts
    while ((SECONDS < deadline)); do
        counts="$(herald_patroni_cluster 2>/dev/null | jq -r '[
            ([.members[] | select(.role == "leader" and .state == "running")] | length),
            ([.members[] | select(.role == "sync_standby" and .state == "streaming")] | length),
            ([.members[] | select(.role == "replica" and .state == "streaming")] | length)] | join(" ")')"
        [[ "$counts" == "1 1 1" ]] && return 0
        sleep 0.2
    done
    echo "patroni: no leader, synchronous standby and streaming replica after ${1:-60} s" >&2
    herald_patroni_ctl list >&2 || true
    return 1
}

herald_patroni_switchover() { # [CANDIDATE]
    local leader body status
    leader="$(herald_patroni_leader)"
    [[ -n "$leader" ]] || {
        echo "patroni: no leader to switch over from" >&2
        return 1
    }
    body="$(jq -nc --arg leader "$leader" --arg candidate "${1:-}" \
        '{leader: $leader} + (if $candidate == "" then {} else {candidate: $candidate} end)')"
    status="$(curl -s -o "$HERALD_PATRONI_DIR/switchover.out" -w '%{http_code}' --max-time 60 -X POST \
        -H 'Content-Type: application/json' -d "$body" \
        "http://127.0.0.1:$(herald_patroni_port rest "$(herald_patroni_index "$leader")")/switchover")"
    if [[ "$status" != 200 ]]; then
        echo "patroni: switchover answered $status: $(cat "$HERALD_PATRONI_DIR/switchover.out")" >&2
        return 1
    fi
}

herald_patroni_sql() { herald_patroni_psql "$1" -c "$2"; }
herald_patroni_psql() { # NODE [psql arguments]: psql on NODE's database herald
    local node="$1"
    shift
    herald_patroni__psql_on "$node" herald "$@"
}
herald_patroni__psql_on() { # NODE DATABASE [psql arguments]
    local i node="$1" db="$2"
    i="$(herald_patroni_index "$node")" || return 1
    shift 2
    "$HERALD_PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(herald_patroni_port pg "$i")" \
        -U postgres -d "$db" "$@"
}

# t while NODE is a replica (or a demoted leader), f on the writable leader; fails when it does not answer.
herald_patroni_in_recovery() { herald_patroni__psql_on "$1" postgres -c "SELECT pg_is_in_recovery()"; }

herald_patroni_set_strict() { # true|false: synchronous_mode_strict in the cluster's configuration in etcd
    case "$1" in true | false) ;; *) return 1 ;; esac
    if ! curl -sf --max-time 10 -X PATCH -H 'Content-Type: application/json' -d "{\"synchronous_mode_strict\": $1}" \
        "http://127.0.0.1:$(herald_patroni_port rest 1)/config" >/dev/null; then
        echo "patroni: could not set synchronous_mode_strict=$1" >&2
        return 1
    fi
}

herald_patroni_ctl() {
    "$HERALD_PATRONI_VENV/bin/patronictl" -c "$HERALD_PATRONI_DIR/herald1/patroni.yml" "$@"
}

herald_patroni_stop() {
    [[ -n "${HERALD_PATRONI_DIR:-}" && -d "$HERALD_PATRONI_DIR" ]] || return 0
    local node pid i
    for node in "${HERALD_PATRONI_NODES[@]}"; do
        herald_patroni_thaw "$node"
        pid="$(herald_patroni__patroni_pid "$node")"
        # SIGTERM: Patroni stops its Postgres (fast) and gives up the leader key.
        if [[ "$pid" =~ ^[0-9]+$ ]]; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    for node in "${HERALD_PATRONI_NODES[@]}"; do
        pid="$(herald_patroni__patroni_pid "$node")"
        [[ "$pid" =~ ^[0-9]+$ ]] || continue
        for ((i = 0; i < 200; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        herald_patroni_kill "$node"
    done
    for i in 1 2 3; do herald_patroni_etcd_stop "$i"; done
    case "$HERALD_PATRONI_DIR" in
        /tmp/herald-patroni.*) rm -rf "$HERALD_PATRONI_DIR" ;;
    esac
    unset HERALD_PATRONI_DIR HERALD_PATRONI_URL
}
