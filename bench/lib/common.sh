# shellcheck shell=bash
# Helpers shared by bench/compare, bench/delivery, bench/failover, bench/intake, bench/live-activities and bench/statements:
# CPU and memory read from /proc, WAL position, the intake started as a user would start it, pushes queued
# through it, and waiting for requests to complete through the status API. Source after
# scripts/lib/postgres.sh; the caller defines die() and keeps the pids it must stop in its own list.

# Results handed back to the caller (set here, read there).
# shellcheck disable=SC2034
HB_PARTNER_ID="" HB_QUEUED=0 HB_INTAKE_PID="" HB_ADMIN_TOKEN="" HB_POLLER_PID=""

# Every delivery in the outbox, a group row's members unnested (sql/016_delivery_groups.sql): id,
# user_id, device_id, payload, and the row's state, lane and service.
# shellcheck disable=SC2034
HB_OUTBOX_DELIVERIES="SELECT m.id, m.user_id, m.device_id, m.payload, d.state, d.lane, d.service
  FROM deliveries d CROSS JOIN LATERAL unnest(coalesce(d.members, ARRAY[d.id]), coalesce(d.member_users, ARRAY[d.user_id]),
                                              coalesce(d.member_devices, ARRAY[d.device_id]),
                                              coalesce(d.member_payloads, ARRAY[d.payload])) AS m (id, user_id, device_id, payload)"

# --- /proc ---------------------------------------------------------------------------------------
HB_TICK="$(getconf CLK_TCK)"
# utime+stime of one process (all its threads), in ticks; 0 once it is gone.
hb_proc_ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# The throwaway cluster's postmaster pid (its children are the server's processes).
hb_postmaster_pid() { head -n 1 "$HERALD_PG_DIR/data/postmaster.pid"; }
# All of the cluster's CPU in ticks: the postmaster with the children it has reaped (cutime,
# cstime) plus every child not yet reaped (a zombie keeps its times). A backend that exits between
# two readings moves from "live" into the postmaster's reaped time with its whole life, so a
# difference of two readings is exactly the CPU spent between them, provided no child is reaped
# during a reading: one reaped after the postmaster's line was read and before its own was would
# count nowhere. That happened at the end of every pgbench run, whose backends exit as it returns
# (bench/compare's ceiling once lost half its Postgres CPU, "others" 40%), so a reading during
# which the reaped time changed is taken again.
hb_pg_ticks() {
    local pm reaped0 reaped1 sum attempt child
    pm="$(hb_postmaster_pid)"
    for attempt in 1 2 3 4 5; do
        reaped0="$(awk '{print $16+$17}' "/proc/$pm/stat" 2>/dev/null || echo 0)"
        sum="$({
            awk '{print $14+$15+$16+$17}' "/proc/$pm/stat" 2>/dev/null || true
            for child in $(pgrep -P "$pm" || true); do
                awk '{print $14+$15}' "/proc/$child/stat" 2>/dev/null || true
            done
        } | awk '{s+=$1} END{print s+0}')"
        reaped1="$(awk '{print $16+$17}' "/proc/$pm/stat" 2>/dev/null || echo 0)"
        [[ "$reaped0" == "$reaped1" ]] && break
    done
    printf '%s\n' "$sum"
}
# The caller's intake, workers, simulator and cluster, and the machine: "intake workers sim postgres busy
# total" in ticks. Reads the caller's intake_pid, worker_pids and sim_pid.
hb_cpu_snapshot() {
    local w=0 pid
    for pid in "${worker_pids[@]}"; do w=$((w + $(hb_proc_ticks "$pid"))); done
    printf '%s %s %s %s %s\n' "$(hb_proc_ticks "$intake_pid")" "$w" "$(hb_proc_ticks "$sim_pid")" "$(hb_pg_ticks)" "$(hb_machine_ticks)"
}
# CPU per unit between two hb_cpu_snapshot readings: "intake X, workers X, simulator X, Postgres X, other X
# µs of CPU per <what>; machine N% busy".
hb_cpu_report() { # BEFORE AFTER COUNT WHAT
    awk -v tick="$HB_TICK" -v n="$3" -v what="$4" -v a="$1" -v b="$2" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        us = 1e6 / tick / n
        own = 0
        for (i = 1; i <= 4; i++) { d[i] = y[i] - x[i]; own += d[i] }
        busy = y[5] - x[5]; total = y[6] - x[6]
        printf "intake %.0f, workers %.0f, simulator %.0f, Postgres %.0f, other (load generator, kernel, rest of the machine) %.0f µs of CPU per %s; machine %.0f%% busy",
            d[1] * us, d[2] * us, d[3] * us, d[4] * us, (busy - own) * us, what, 100 * busy / total }'
}
# Thread switches (voluntary and not) of one process, all its threads; 0 once it is gone.
hb_proc_switches() {
    cat "/proc/$1/task/"*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}'
}
# The caller's intake, workers, simulator and the cluster's live processes: "intake workers sim postgres"
# thread switches. A backend that ends between two readings takes its switches with it (the run's sessions last).
hb_switches_snapshot() {
    local w=0 p=0 pid pm
    for pid in "${worker_pids[@]}"; do w=$((w + $(hb_proc_switches "$pid"))); done
    pm="$(hb_postmaster_pid)"
    for pid in "$pm" $(pgrep -P "$pm" || true); do p=$((p + $(hb_proc_switches "$pid"))); done
    printf '%s %s %s %s\n' "$(hb_proc_switches "$intake_pid")" "$w" "$(hb_proc_switches "$sim_pid")" "$p"
}
# Thread switches per unit between two hb_switches_snapshot readings.
hb_switches_report() { # BEFORE AFTER COUNT
    awk -v n="$3" -v a="$1" -v b="$2" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        for (i = 1; i <= 4; i++) { d[i] = (y[i] - x[i]) / n; all += d[i] }
        printf "intake %.1f, workers %.1f, simulator %.1f, Postgres %.1f = %.1f", d[1], d[2], d[3], d[4], all }'
}
# Busy and total ticks of the whole machine: "busy total" (idle and iowait are not busy).
hb_machine_ticks() { awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print t-$5-$6, t}' /proc/stat; }
# Ticks the machine was busy between two hb_machine_ticks readings: A B.
hb_machine_busy() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); print y[1] - x[1] }'; }
# The machine's busy share between two hb_machine_ticks readings, everything on it counted: A B -> "N%".
hb_machine_busy_pct() {
    awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[2] - x[2]; printf "%.0f%%", (t > 0) ? 100 * (y[1] - x[1]) / t : 0 }'
}
# Waits (at most MAX_S seconds) until one second passes with the machine at least 85% idle; prints
# the idle percentage of the last second. The machine is shared: this only lowers the odds that
# something else runs during a measurement (each window reports what else ran anyway).
hb_wait_quiet() {
    local deadline=$((SECONDS + $1)) a b idle
    while true; do
        a="$(hb_machine_ticks)"
        sleep 1
        b="$(hb_machine_ticks)"
        idle="$(awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[2] - x[2]; printf "%d", (t > 0) ? 100 - 100 * (y[1] - x[1]) / t : 100 }')"
        if ((idle >= 85 || SECONDS >= deadline)); then
            printf '%s' "$idle"
            return 0
        fi
    done
}
# Peak RSS (VmHWM) of a process, in kB (0 once it is gone).
hb_hwm_kb() { awk '/^VmHWM/ {print $2; f=1} END {if (!f) print 0}' "/proc/$1/status" 2>/dev/null || echo 0; }
# Ticks to microseconds per item: TICKS ITEMS.
hb_us_per() { awk -v t="$1" -v n="$2" -v hz="$HB_TICK" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "n/a" }'; }
hb_now() { date +%s.%N; }
hb_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
hb_rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { if (b > a) printf "%d", n / (b - a); else print 0 }'; }

# --- Postgres ------------------------------------------------------------------------------------
# Every server process of the cluster now, one "pid|name|ticks" line each: the name is the session's
# application_name (herald-intake, herald-worker claimer, ...) or, for Postgres' own processes, its
# backend_type (walwriter, checkpointer, ...).
hb_pg_sessions_snapshot() {
    local pid name
    herald_pg_psql -qtAX -F '|' -c \
        "SELECT pid, coalesce(nullif(application_name, ''), backend_type) FROM pg_stat_activity" |
        while IFS='|' read -r pid name; do
            [[ -r "/proc/$pid/stat" ]] && printf '%s|%s|%s\n' "$pid" "$name" "$(hb_proc_ticks "$pid")"
        done
}
# Postgres CPU per item between two hb_pg_sessions_snapshot readings, by name, largest first:
# BEFORE AFTER ITEMS -> "herald-intake 690, herald-worker claimer 460, ... µs". A session opened in
# between counts whole (a pool grows under load); one closed in between is left out (hb_pg_ticks
# counts it), as are the readings' own psql sessions.
hb_pg_sessions_report() {
    awk -F'|' -v n="$3" -v hz="$HB_TICK" '
        NR == FNR { before[$1] = $3; next }
        $2 != "psql" { spent[$2] += $3 - (($1 in before) ? before[$1] : 0) }
        END { for (k in spent) if (spent[k] > 0 && n > 0) printf "%d|%s\n", spent[k] * 1e6 / hz / n, k }' \
        <(printf '%s\n' "$1") <(printf '%s\n' "$2") |
        sort -t'|' -k1,1nr | awk -F'|' '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 } END { print " µs" }'
}
# "lsn wal_records wal_fpi" now (pg_stat_wal is cumulative since the cluster started).
hb_wal_mark() {
    herald_pg_psql -qtAX -F ' ' -c "SELECT pg_current_wal_lsn(), wal_records, wal_fpi FROM pg_stat_wal"
}
# With the caller's STATEMENTS=1 (BENCH_STATEMENTS: pg_stat_statements preloaded): the extension made if
# missing and its counts emptied, so what follows is counted alone.
hb_statements_reset() {
    [[ "${STATEMENTS:-0}" == 1 ]] || return 0
    herald_pg_psql -qtAX -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
        -c "SELECT pg_stat_statements_reset()" >/dev/null
}
# WAL written between two marks: "bytes records fpi".
hb_wal_diff() {
    local a b bytes
    read -r -a a <<<"$1"
    read -r -a b <<<"$2"
    bytes="$(herald_pg_psql -qtAX -c "SELECT pg_wal_lsn_diff('${b[0]}', '${a[0]}')::bigint")"
    printf '%s %s %s' "$bytes" "$((b[1] - a[1]))" "$((b[2] - a[2]))"
}

# Users u<FIRST>..u<FIRST+COUNT-1> in tenant TENANT, each with the e-mail user<g>@bench.example and
# one iPhone (APNs token lpad(hex(g), 64), app one.based.app): FIRST COUNT TENANT.
hb_seed_iphone_users() {
    herald_pg_psql -qtAX -v first="$1" -v count="$2" -v tenant="$3" >/dev/null <<'SQL'
INSERT INTO users (id, tenant_id) SELECT 'u' || g, :'tenant' FROM generate_series(:first, :first + :count - 1) g;
INSERT INTO user_emails (tenant_id, email, user_id)
     SELECT :'tenant', 'user' || g || '@bench.example', 'u' || g FROM generate_series(:first, :first + :count - 1) g;
INSERT INTO devices (user_id, device_id, platform, environment, bundle_id, apns_token)
     SELECT 'u' || g, 'iphone', 'ios', 'production', 'one.based.app', lpad(to_hex(g), 64, '0')
       FROM generate_series(:first, :first + :count - 1) g;
ANALYZE users, user_emails, devices;
SQL
}

# bench/delivery's directory: tenant 'bench'; the sending partner (00000000-0000-4000-8000-000000000001,
# mini-app fun.pull.gacha, the API key's hash KEY_HASH); IDLE partners with no traffic beside it; USERS users
# of hb_seed_iphone_users, every 5th with a Pixel too; analysed.
hb_bench_directory() { # USERS IDLE KEY_HASH
    herald_pg_psql -qtAX -v idle="$2" -v key_hash="$3" >/dev/null <<'SQL'
INSERT INTO tenants (id) VALUES ('bench');
INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
VALUES ('00000000-0000-4000-8000-000000000001', 'fun.pull.gacha', 'Pull', 'bench', :'key_hash', 1000000, 100000000);
INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
     SELECT gen_random_uuid(), 'idle.app' || g, 'Idle ' || g, 'bench', encode(sha256(('idle' || g)::bytea), 'hex'),
            1000, 100000
       FROM generate_series(1, :idle) g;
SQL
    hb_seed_iphone_users 1 "$1" bench
    herald_pg_psql -qtAX -v users="$1" >/dev/null <<'SQL'
INSERT INTO devices (user_id, device_id, platform, environment, fcm_token)
     SELECT 'u' || g, 'pixel', 'android', 'production', 'fcm-bench-' || g
       FROM generate_series(1, :users) g WHERE g % 5 = 0;
ANALYZE;
SQL
}

# hb_partner_history PARTNER_ID: the partner has sent 100 pushes a second all day, as a partner in
# production has when a run starts: an 'm' bucket for each of the last 1,439 minutes (6,000 each: 8.6
# million of the bench partners' 100 million a day), an 's' bucket for each of the last 59 seconds (what
# its rate windows count), and a user_senders row for every user of its tenant (8.6 million pushes reached
# each of them). Without it every run starts with an empty day and first pushes, which no busy partner has.
hb_partner_history() {
    herald_pg_psql -qtAX -v partner="$1" >/dev/null <<'SQL'
INSERT INTO rate_buckets (partner_id, granularity, bucket, count)
SELECT :'partner'::uuid, 'm'::"char", floor(extract(epoch FROM now()))::bigint / 60 - g, 6000 FROM generate_series(1, 1439) g
UNION ALL
SELECT :'partner'::uuid, 's'::"char", floor(extract(epoch FROM now()))::bigint - g, 100 FROM generate_series(1, 59) g;
INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
SELECT u.id, p.mini_app_id, now() - interval '1 day' FROM partners p JOIN users u ON u.tenant_id = p.tenant_id
 WHERE p.id = :'partner'::uuid;
ANALYZE rate_buckets;
ANALYZE user_senders;
SQL
}

# --- the intake ----------------------------------------------------------------------------------
# hb_start_intake BIN DB_URL PORT LOG [VAR=VALUE...]: herald-intake with throwaway tokens and
# signing key; sets HB_INTAKE_PID and HB_ADMIN_TOKEN, waits for /readyz. Its /metrics port is a free one
# (HERALD_INTAKE_METRICS_PORT=0): these runs read the workers' metrics, not the intake's.
hb_start_intake() {
    local bin="$1" db="$2" port="$3" log="$4"
    shift 4
    HB_ADMIN_TOKEN="$(openssl rand -hex 24)"
    env HERALD_DATABASE_URL="$db" HERALD_INTAKE_PORT="$port" HERALD_INTAKE_METRICS_PORT=0 \
        HERALD_ADMIN_TOKEN="$HB_ADMIN_TOKEN" HERALD_HOST_TOKEN="$(openssl rand -hex 24)" \
        HERALD_SIGNING_KEYS="k1:$(openssl rand -base64 32)" HERALD_SIGNING_KEY_ID=k1 \
        HERALD_LOG_LEVEL=warning HERALD_INTAKE_MAX_CONNECTIONS_PER_ADDRESS=0 "$@" \
        "$bin/herald-intake" >>"$log" 2>&1 &
    HB_INTAKE_PID=$!
    local deadline=$((SECONDS + 30))
    until [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/readyz" || true)" == 200 ]]; do
        kill -0 "$HB_INTAKE_PID" 2>/dev/null || die "herald-intake exited before it was ready (see $log)"
        ((SECONDS < deadline)) || die "herald-intake not ready after 30 s"
        sleep 0.2
    done
}

# hb_create_partner BASE TENANT MINI_APP AUTH_FILE: a partner through the admin API with high rate
# limits; writes "Authorization: Bearer <key>" for it into AUTH_FILE (0600: the key stays out of
# argv and logs) and sets HB_PARTNER_ID.
hb_create_partner() {
    local base="$1" tenant="$2" mini_app="$3" auth_file="$4" admin_file="$4.admin" json key id
    (umask 077 && printf 'Authorization: Bearer %s\n' "$HB_ADMIN_TOKEN" >"$admin_file")
    json="$(curl -sS --max-time 10 -X POST -H "@$admin_file" -H 'Content-Type: application/json' \
        --data-binary "{\"miniAppId\":\"$mini_app\",\"displayName\":\"Pull\",\"tenantId\":\"$tenant\",\"rateLimitPerMinute\":1000000,\"rateLimitPerDay\":100000000}" \
        "$base/api/admin/mini-app-partners")"
    rm -f "$admin_file"
    key="$(jq -r '.apiKey // empty' <<<"$json")"
    id="$(jq -r '.id // empty' <<<"$json")"
    [[ "$key" == mp_* && -n "$id" ]] || die "creating the partner failed: $(jq -c 'del(.apiKey)' <<<"$json" 2>/dev/null || echo "$json")"
    (umask 077 && printf 'Authorization: Bearer %s\n' "$key" >"$auth_file")
    HB_PARTNER_ID="$id"
}

# hb_queue_pushes BASE AUTH_FILE REQUESTS RECIPIENTS USERS IDS_FILE WORKDIR: REQUESTS pushes of
# RECIPIENTS e-mails each (request r names users r*RECIPIENTS+1 on, wrapping at USERS), one after
# the other; every answer must be 202; the request ids go to IDS_FILE, one a line. Sets HB_QUEUED
# to the deliveries the answers say were queued.
hb_queue_pushes() {
    local base="$1" auth="$2" requests="$3" recipients="$4" users="$5" ids="$6" dir="$7"
    local r body="$dir/push.json" answer="$dir/push-answer.json" code total=0 run
    run="$(openssl rand -hex 6)" # fresh Idempotency-Keys on every call: a repeated key would replay
    : >"$ids"
    for ((r = 0; r < requests; r++)); do
        awk -v r="$r" -v n="$recipients" -v u="$users" 'BEGIN {
            printf "{\"recipients\":{\"emails\":["
            for (i = 0; i < n; i++) printf "%s\"user%d@bench.example\"", (i ? "," : ""), (r * n + i) % u + 1
            printf "]},\"title\":\"Deposit pending\",\"body\":\"Confirmations: 1/6\"}" }' >"$body"
        code="$(curl -sS --max-time 60 -o "$answer" -w '%{http_code}' -X POST -H "@$auth" \
            -H 'Content-Type: application/json' -H "Idempotency-Key: bench-$run-$r" --data-binary "@$body" \
            "$base/api/partners/notifications/push")" || die "push $r: curl failed"
        [[ "$code" == 202 ]] || die "push $r answered $code: $(head -c 300 "$answer")"
        jq -r '.requestId' "$answer" >>"$ids"
        total=$((total + $(jq -r '.deliveries' "$answer")))
    done
    HB_QUEUED="$total"
}

# hb_poll_completed BASE AUTH_FILE IDS_FILE TIMEOUT_S OUT_FILE: starts a poller in the background
# (its pid in HB_POLLER_PID) that GETs .../push/{id} until every request in IDS_FILE says
# "completed", walking the list in order (a request once completed stays so) over one keep-alive
# connection, every 20 ms: about 1% of a core, where curl and jq per poll would take a good part of
# one from the drain being measured. It writes "ready" to OUT_FILE after its first answer, then
# "done <unix time>" when the last request is completed; it exits 1 on timeout. Returns once ready.
hb_poll_completed() {
    local out="$5" deadline=$((SECONDS + 30))
    : >"$out"
    python3 - "$@" <<'PY' &
import http.client, json, sys, time
base, auth_file, ids_file, timeout, out = sys.argv[1:6]
host, port = base.removeprefix("http://").split(":")
with open(auth_file) as f:
    name, value = f.read().strip().split(": ", 1)
ids = [line.strip() for line in open(ids_file) if line.strip()]
deadline = time.monotonic() + float(timeout)
connection = http.client.HTTPConnection(host, int(port), timeout=10)
report = open(out, "a", buffering=1)
def status(request_id):
    connection.request("GET", "/api/partners/notifications/push/" + request_id, headers={name: value})
    answer = connection.getresponse()
    body = answer.read()
    if answer.status != 200:
        raise SystemExit(f"GET push/{request_id}: {answer.status} {body[:200]!r}")
    return json.loads(body)["status"]
first = True
for request_id in ids:
    while True:
        done = status(request_id) == "completed"
        if first:
            report.write("ready\n")
            first = False
        if done:
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"request {request_id} not completed after {timeout} s")
        time.sleep(0.02)
report.write(f"done {time.time():.6f}\n")
PY
    HB_POLLER_PID=$!
    until grep -q '^ready' "$out"; do
        kill -0 "$HB_POLLER_PID" 2>/dev/null || die "the completion poller failed"
        ((SECONDS < deadline)) || die "the completion poller got no answer in 30 s"
        sleep 0.05
    done
}
