# shellcheck shell=bash
# bench/failover --patroni: the scenarios of the header of bench/failover, on one Patroni cluster. Sourced by
# bench/failover once the simulator runs; uses its variables (bin, sim, creds, auth, key_hash, work, the
# BENCH_ settings) and helpers (die, free_port, wait_http, seconds_between, stop_run_pids).

WAKE_PROMPT_S=2          # a wake-up is prompt when delivered within this, far under the poll interval below
WORKER_POLL_MS=10000     # the worker's poll fallback: a delivery this late means no NOTIFY woke it
header='bench/failover --patroni: %s pushes/s, fault after %s s, %s s more, hold %s s, scenarios %s, %s users, '
header+='%s cores, commit %s\n'
# shellcheck disable=SC2059  # the format is built above
printf "$header" "$RATE" "$KILL_AFTER" "$AFTER" "$HOLD" "$SCENARIOS" "$USERS" "$(nproc)" "$commit"

herald_patroni_start || die "the Patroni cluster did not start"
url="$HERALD_PATRONI_URL"
echo "cluster: $(herald_patroni_cluster | jq -r '[.members[] | "\(.name) \(.role)"] | join(", ")'); Herald's URL: $url"

# psql on whichever node accepts writes now (libpq picks it from the three hosts).
leader_psql() { "$HERALD_PG_BIN/psql" -X -qtAX -v ON_ERROR_STOP=1 "$url" "$@"; }

HERALD_DATABASE_URL="$url" "$bin/heraldctl" migrate >/dev/null || die "migrate failed"
leader_psql -v key_hash="$key_hash" >/dev/null <<'SQL'
INSERT INTO tenants (id) VALUES ('bench');
INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
VALUES ('00000000-0000-4000-8000-000000000001', 'fun.pull.gacha', 'Pull', 'bench', :'key_hash', 1000000, 100000000);
SQL
# hb_seed_iphone_users writes through herald_pg_psql: here, the leader.
herald_pg_psql() { "$HERALD_PG_BIN/psql" -X -v ON_ERROR_STOP=1 -P pager=off "$url" "$@"; }
hb_seed_iphone_users 1 "$USERS" bench

intake_port="$(free_port 8080)"
intake="http://127.0.0.1:$intake_port"
hb_start_intake "$bin" "$url" "$intake_port" "$work/intake.log"
run_pids+=("$HB_INTAKE_PID")
worker_port="$(free_port 9190)"
env HERALD_DATABASE_URL="$url" HERALD_APNS_URL="$sim" HERALD_APNS_SANDBOX_URL="$sim" \
    HERALD_APNS_KEY_FILE="$creds/apns-key.p8" HERALD_APNS_KEY_ID=BENCHKEY01 HERALD_APNS_TEAM_ID=BENCHTEAM1 \
    HERALD_APNS_TOPIC=one.based.app HERALD_FCM_URL="$sim" \
    HERALD_FCM_CREDENTIALS_FILE="$creds/fcm-service-account.json" HERALD_CA_FILE="$creds/ca.pem" \
    HERALD_LOG_LEVEL=warning HERALD_WORKER_METRICS_PORT="$worker_port" HERALD_POLL_INTERVAL_MS="$WORKER_POLL_MS" \
    "$bin/herald-worker" >>"$work/worker.log" 2>&1 &
run_pids+=("$!")
wait_http "http://127.0.0.1:$worker_port/readyz"

# Waits until the cluster has a leader, a synchronous standby and a streaming replica again.
heal() { herald_patroni_wait_members "${1:-120}" || die "$2: the cluster did not heal"; }

# Seconds from $fault_at to a writable leader other than NOT (empty: any): sets leader_s and new_leader.
await_leader() { # NOT SECONDS SCENARIO
    new_leader="$(herald_patroni_wait_leader "$1" "$2")" || die "$3: no new leader"
    leader_s="$(seconds_between "$fault_at" "$(date +%s.%N)")"
}

# --- the faults: each starts at $fault_at, sets leader_s (fault -> writable leader) and note -------------
fault_a() {
    local old
    old="$(herald_patroni_leader)"
    herald_patroni_kill "$old"
    await_leader "$old" 60 a
    herald_patroni_start_node "$old"
    heal 120 a
    note="killed $old, $new_leader leads"
}

fault_b() {
    local old role tl old_tl
    old="$(herald_patroni_leader)"
    herald_patroni_freeze "$old"
    await_leader "$old" 90 b
    herald_patroni_thaw "$old"
    heal 180 b
    role="$(herald_patroni_cluster | jq -r --arg n "$old" '.members[] | select(.name == $n) | .role')"
    tl="$(herald_patroni_sql "$new_leader" "SELECT timeline_id FROM pg_control_checkpoint()")"
    # The old leader's own timeline now, once it replays the new leader's WAL.
    old_tl="$(herald_patroni_sql "$old" "SELECT received_tli FROM pg_stat_wal_receiver")"
    old_check="$old"
    note="froze $old, $new_leader leads (timeline $tl); $old rejoined as $role on timeline $old_tl"
    [[ "$role" == replica || "$role" == sync_standby ]] || die "b: $old did not rejoin as a replica ($role)"
}

fault_c() {
    local sync other
    sync="$(herald_patroni_sync_standby)"
    other="$(herald_patroni_cluster | jq -r '.members[] | select(.role == "replica") | .name' | head -n 1)"
    herald_patroni_kill "$sync"
    sleep "$HOLD"
    herald_patroni_kill "$other"
    sleep "$HOLD"
    herald_patroni_start_node "$sync"
    herald_patroni_start_node "$other"
    await_leader "" 60 c
    heal 180 c
    note="killed the synchronous standby $sync, $HOLD s later the replica $other, $HOLD s later started both"
    leader_s="n/a"
}

fault_d() {
    local leader demoted_s="never"
    leader="$(herald_patroni_leader)"
    herald_patroni_etcd_stop 2
    herald_patroni_etcd_stop 3
    # Without quorum the leader cannot renew its key; after the TTL it restarts read-only.
    local deadline=$((SECONDS + 60))
    while ((SECONDS < deadline)); do
        if [[ "$(herald_patroni_in_recovery "$leader" 2>/dev/null)" == t ]]; then
            demoted_s="$(seconds_between "$fault_at" "$(date +%s.%N)")"
            break
        fi
        sleep 0.2
    done
    sleep "$HOLD"
    herald_patroni_etcd_start 2
    herald_patroni_etcd_start 3
    herald_patroni_etcd_wait_quorum 1 60 || die "d: etcd did not regain quorum"
    await_leader "" 90 d
    heal 120 d
    note="stopped etcd 2 and 3: $leader read-only after $demoted_s s; quorum back after $HOLD s more, $new_leader leads"
}

fault_e() {
    local old
    old="$(herald_patroni_leader)"
    herald_patroni_switchover || die "e: the switchover failed"
    await_leader "$old" 60 e
    heal 120 e
    note="switched over from $old to $new_leader"
}

# --- one scenario: load, fault, heal, counts ----------------------------------------------------------
rows=()
failed=0
run_scenario() { # a | b | c | c-strict | d | e
    local scenario="$1" label="$1" fault="${1%-strict}" client_pid summary
    local ids="$work/$label.ids" stop_file="$work/$label.stop" status_file="$work/$label.status"
    fault_at="" leader_s="n/a" new_leader="" note="" old_check=""
    heal 120 "$label"
    local strict=false
    if [[ "$scenario" == c-strict ]]; then strict=true; fi
    herald_patroni_set_strict "$strict" || die "$label: could not set synchronous_mode_strict"
    curl -s -X DELETE --cacert "$creds/ca.pem" "$sim/sim/received" >/dev/null

    python3 bench/failover_client.py --intake "$intake" --auth-file "$auth" --users "$USERS" --rate "$RATE" \
        --run "patroni-$label-$(openssl rand -hex 4)" --stop-file "$stop_file" --max-seconds 600 \
        --status "$status_file" --ids "$ids" --out "$work/$label.json" >"$work/client-$label.log" 2>&1 &
    client_pid=$!
    run_pids+=("$client_pid")
    local deadline=$((SECONDS + 30))
    until grep -q '^sending' "$status_file" 2>/dev/null; do
        kill -0 "$client_pid" 2>/dev/null || { cat "$work/client-$label.log" >&2; die "$label: the client failed"; }
        ((SECONDS < deadline)) || die "$label: the client did not start"
        sleep 0.05
    done
    sleep "$KILL_AFTER"
    fault_at="$(date +%s.%N)"
    "fault_$fault"
    sleep "$AFTER"
    touch "$stop_file"
    wait "$client_pid" || { cat "$work/client-$label.log" >&2; die "$label: the client failed"; }
    summary="$(cat "$work/$label.json")"

    # The outbox drains; meanwhile, the longest any delivery stays leased past its lease.
    local drain_start=$SECONDS left overdue max_overdue=0
    while true; do
        read -r left overdue <<<"$(leader_psql -F ' ' -c "SELECT count(*), coalesce(max(extract(epoch FROM
            now() - lease_expires_at)) FILTER (WHERE state = 'leased'), 0)::numeric(10, 1) FROM deliveries" ||
            echo '? 0')"
        max_overdue="$(awk -v a="$max_overdue" -v b="$overdue" 'BEGIN { print (b > a ? b : a) }')"
        [[ "$left" == 0 ]] && break
        ((SECONDS - drain_start >= DRAIN_TIMEOUT)) && break
        sleep 0.5
    done
    local drained_s=$((SECONDS - drain_start))

    # The wake-up: one push on the healed cluster, delivered promptly only if a NOTIFY woke the worker.
    local probe probe_at wake_s="n/a" wake="no"
    probe_at="$(date +%s.%N)"
    probe="$(curl -sS --max-time 10 -H "@$auth" -H 'Content-Type: application/json' \
        -H "Idempotency-Key: probe-$label-$(openssl rand -hex 4)" \
        -d '{"recipients":{"emails":["user1@bench.example"]},"title":"Probe","body":"wake-up"}' \
        "$intake/api/partners/notifications/push" | jq -r '.requestId // empty')"
    if [[ -n "$probe" ]]; then
        deadline=$((SECONDS + WORKER_POLL_MS / 1000 + 5))
        while ((SECONDS < deadline)); do
            if [[ "$(leader_psql -c "SELECT count(*) FROM delivery_history_deliveries
                WHERE request_id = '$probe' AND outcome = 'sent'" 2>/dev/null)" == 1 ]]; then
                wake_s="$(seconds_between "$probe_at" "$(date +%s.%N)")"
                break
            fi
            sleep 0.05
        done
        if [[ "$wake_s" != n/a ]] && awk -v s="$wake_s" -v p="$WAKE_PROMPT_S" 'BEGIN { exit !(s < p) }'; then
            wake=yes
        fi
    fi

    # Counts on the final leader; for b, also on the old leader (now a replica following it).
    curl -sS --max-time 60 --cacert "$creds/ca.pem" "$sim/sim/received" |
        jq -r '.[] | select(.status == 200) | .headers["apns-id"] // empty | ascii_downcase' >"$work/$label.received"
    local accepted lost received dups
    read -r accepted lost received dups <<<"$(leader_psql -F ' ' <<SQL
CREATE TEMP TABLE accepted (id uuid PRIMARY KEY);
\\copy accepted FROM '$ids'
CREATE TEMP TABLE received (id text);
\\copy received FROM '$work/$label.received'
SELECT (SELECT count(*) FROM accepted),
       (SELECT count(*) FROM accepted a WHERE NOT EXISTS (SELECT 1 FROM push_requests r WHERE r.id = a.id)),
       (SELECT count(*) FROM received),
       (SELECT count(*) - count(DISTINCT id) FROM received);
SQL
)"
    if [[ -n "$old_check" ]]; then
        local on_old
        # A replica takes no temp table: the ids go in as a VALUES list.
        on_old="$({
            echo "SELECT count(*) FROM push_requests WHERE id IN (VALUES ('00000000-0000-0000-0000-000000000000'::uuid)"
            sed "s/.*/, ('&'::uuid)/" "$ids"
            echo ");"
        } | herald_patroni_psql "$old_check")"
        note+="; $on_old of $accepted accepted pushes on $old_check"
        ((on_old == accepted)) || {
            failed=$((failed + 1))
            note+=" (MISSING ON THE OLD LEADER)"
        }
    fi

    local pushes e503 e500 other conn given_up recover stall codes
    pushes="$(jq -r '.pushes' <<<"$summary")"
    e503="$(jq -r '.statuses["503"] // 0' <<<"$summary")"
    e500="$(jq -r '.statuses["500"] // 0' <<<"$summary")"
    other="$(jq -r '[.statuses | to_entries[] | select((.key | test("^(2..|503|500)$")) | not) | "\(.key): \(.value)"]
        | join(", ")' <<<"$summary")"
    conn="$(jq -r '.connection_errors' <<<"$summary")"
    given_up="$(jq -r '.given_up' <<<"$summary")"
    stall="$(jq -r '.longest_gap_s' <<<"$summary")"
    codes="$(jq -r '[.error_codes | to_entries[] | "\(.key): \(.value)"] | join(", ")' <<<"$summary")"
    recover="$(seconds_between "$(jq -r '.first_error_at' <<<"$summary")" "$(jq -r '.recovered_at' <<<"$summary")")"
    if ((e500 > 0 || lost > 0)); then
        failed=$((failed + 1))
        echo "--- last lines of the intake's log ($label) ---" >&2
        tail -n 30 "$work/intake.log" >&2 || true
    fi
    local line='%-8s %s pushes, %s accepted, %s accepted but lost, %s duplicates delivered (%s received); '
    line+='%s answers 503, '
    line+='%s failed connections, %s answers 500%s%s; %s given up; recovered in %s s, longest without a 2xx %s s, '
    line+='writable leader after %s s; '
    line+='wake-up %s (probe delivered in %s s, poll every %s s); leases overdue at most %s s; '
    line+='outbox %s after %s s; %s\n'
    # shellcheck disable=SC2059  # the format is built above
    printf "$line" "$label:" "$pushes" "$accepted" "$lost" "$dups" "$received" "$e503" "$conn" "$e500" \
        "${other:+, other: $other}" "${codes:+ ($codes)}" "$given_up" "$recover" "$stall" "$leader_s" "$wake" \
        "$wake_s" "$((WORKER_POLL_MS / 1000))" \
        "$max_overdue" "$([[ "$left" == 0 ]] && echo empty || echo "$left left")" "$drained_s" "$note"
    rows+=("$(printf '%-9s %7s %9s %5s %5s %5s %6s %6s %10s %8s %9s %6s %9s' "$label" "$pushes" "$accepted" \
        "$lost" "$dups" "$e500" "$e503" "$conn" "$recover" "$stall" "$leader_s" "$wake" "$max_overdue")")
}

for scenario in $SCENARIOS; do run_scenario "$scenario"; done
stop_run_pids

echo
printf '%-9s %7s %9s %5s %5s %5s %6s %6s %10s %8s %9s %6s %9s\n' scenario pushes accepted lost dups 500s 503s conn \
    recover_s stall_s leader_s wakeup overdue_s
for row in "${rows[@]}"; do printf '%s\n' "$row"; done
((failed == 0)) || die "$failed scenarios lost an accepted push or answered 500 (the intake's log lines are above)"
