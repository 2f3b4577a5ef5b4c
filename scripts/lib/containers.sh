# shellcheck shell=bash
# Herald's images and a queued load, shared by scripts/container-demo and scripts/kube-demo
# (docs/deployment.md). Source this file after defining `say MESSAGE` and `die MESSAGE` (they print
# and exit), then:
#   herald_ctr_init WORK           podman as it works on this kind of machine: runc (crun refuses hybrid
#                                  cgroups), a containers.conf without the default ulimits the sandbox
#                                  may not raise (in WORK, exported as CONTAINERS_CONF); `pm ARGS...`
#                                  runs podman so
#   herald_ctr_packages PKG...     scripts/setup's packages and these Debian ones (installed if missing)
#   herald_ctr_ports_free PORT...  fails unless nothing listens on the ports
#   herald_ctr_binaries CONTEXT    the four release binaries (--static-swift-stdlib) and the migrations,
#                                  stripped, in CONTEXT/bin (the build context of Containerfile.prebuilt)
#   herald_ctr_base_image          localhost/debian:12 made by mmdebstrap, once (kept between runs)
#   herald_ctr_herald_image IMAGE CONTEXT       deploy/Containerfile.prebuilt, checked from inside
#   herald_ctr_postgres_image IMAGE PASSWORD    deploy/demo/Containerfile.postgres with that password
#   wait_for WHAT SECONDS COMMAND...            polls COMMAND until it succeeds
#   herald_ctr_api URL METHOD PATH TOKEN [BODY] the intake's API through curl (below)
#   herald_ctr_register_load URL HOST_TOKEN USERS      users load-1..USERS, an iPhone each
#   herald_ctr_delay_load SIM CA USERS DELAY_MS        the simulator answers their tokens after DELAY_MS
#   herald_ctr_queue_load URL API_KEY USERS            two pushes to each; prints the request ids
#   herald_ctr_wait_load URL API_KEY USERS REQUEST_ID...
#                                  waits (up to 180 s) until every request is completed, all sent
#   herald_ctr_check_load SIM CA USERS SQL_FUNCTION REQUEST_ID...
#                                  every delivery of the load arrived exactly once (SQL_FUNCTION runs
#                                  one statement against the demo's database and prints its rows)
# Temporary files go in HERALD_CTR_WORK (herald_ctr_init sets it; 0700, the caller removes it).

HERALD_CTR_BASE_IMAGE="localhost/debian:12"

herald_ctr_init() {
    HERALD_CTR_WORK="$1"
    printf '[containers]\ndefault_ulimits = []\n' >"$HERALD_CTR_WORK/containers.conf"
    export CONTAINERS_CONF="$HERALD_CTR_WORK/containers.conf"
}

pm() { podman --runtime runc "$@"; }

herald_ctr_packages() {
    scripts/setup
    local pkg missing=()
    for pkg in podman runc mmdebstrap uidmap "$@"; do
        [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" == "install ok installed" ]] ||
            missing+=("$pkg")
    done
    if ((${#missing[@]} > 0)); then
        [[ "$(id -u)" -eq 0 ]] || die "missing packages (${missing[*]}) and not running as root"
        say "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    say "$(podman --version), runc $(runc --version | head -1 | awk '{print $3}')," \
        "mmdebstrap $(mmdebstrap --version | awk '{print $2}')"
}

herald_ctr_ports_free() {
    local port busy=()
    for port in "$@"; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then busy+=("$port"); fi
    done
    ((${#busy[@]} == 0)) || die "ports in use: ${busy[*]} (set HERALD_DEMO_PORT_BASE)"
}

herald_ctr_binaries() {
    local context="$1" product bin started=$SECONDS
    for product in herald-intake herald-worker heraldctl herald-sim; do
        swift build -c release --static-swift-stdlib --product "$product" >"$HERALD_CTR_WORK/build-$product.log" 2>&1 ||
            { tail -30 "$HERALD_CTR_WORK/build-$product.log" >&2; die "swift build of $product failed"; }
    done
    bin="$(swift build -c release --static-swift-stdlib --show-bin-path)"
    say "built in $((SECONDS - started)) s into $bin"
    mkdir -p "$context/bin"
    cp "$bin/herald-intake" "$bin/herald-worker" "$bin/heraldctl" "$bin/herald-sim" "$context/bin/"
    cp -R "$bin/Herald_Store.resources" "$context/bin/"
    strip "$context/bin/herald-"* "$context/bin/heraldctl" 2>/dev/null || true
    say "staged: $(cd "$context/bin" && ls -d herald-intake herald-worker heraldctl herald-sim Herald_Store.resources |
        tr '\n' ' ')"
    say "shared libraries they need (readelf NEEDED): $(for f in "$context"/bin/herald-* "$context/bin/heraldctl"; do
        readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; done | sort -u | tr '\n' ' ')"
}

herald_ctr_base_image() {
    local started=$SECONDS
    if pm image exists "$HERALD_CTR_BASE_IMAGE"; then
        say "cached: $(pm image inspect --format '{{.Id}}' "$HERALD_CTR_BASE_IMAGE" | cut -c1-12), skipping mmdebstrap"
        return
    fi
    mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$HERALD_CTR_WORK/debian12.tar"
    pm import --quiet "$HERALD_CTR_WORK/debian12.tar" "$HERALD_CTR_BASE_IMAGE" >/dev/null
    rm -f "$HERALD_CTR_WORK/debian12.tar"
    say "made with mmdebstrap and podman import in $((SECONDS - started)) s (kept for the next run)"
}

herald_ctr_herald_image() {
    local image="$1" context="$2" started=$SECONDS out
    pm build --network host --layers=false -t "$image" -f deploy/Containerfile.prebuilt \
        "$context" >"$HERALD_CTR_WORK/build-herald.log" 2>&1 ||
        { tail -30 "$HERALD_CTR_WORK/build-herald.log" >&2; die "podman build of Herald's image failed"; }
    say "$image: $(pm image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')," \
        "user $(pm image inspect --format '{{.Config.User}}' "$image"), built in $((SECONDS - started)) s"
    # What the image holds, checked from inside: the executables, the migrations, no root.
    out="$(pm run --rm --network host --entrypoint /opt/herald/bin/heraldctl "$image" probe 2>&1 || true)"
    [[ "$out" == *"usage: heraldctl probe"* ]] || die "heraldctl does not run in the image: $out"
    [[ "$(pm image inspect --format '{{.Config.User}}' "$image")" == 10001:10001 ]] ||
        die "the image does not run as 10001"
}

herald_ctr_postgres_image() {
    local image="$1" password="$2" started=$SECONDS
    mkdir -p "$HERALD_CTR_WORK/pg-context"
    printf '%s\n' "$password" >"$HERALD_CTR_WORK/pg-context/pwfile"
    pm build --network host --layers=false -t "$image" -f deploy/demo/Containerfile.postgres \
        "$HERALD_CTR_WORK/pg-context" >"$HERALD_CTR_WORK/build-postgres.log" 2>&1 ||
        { tail -30 "$HERALD_CTR_WORK/build-postgres.log" >&2; die "podman build of the Postgres image failed"; }
    rm -rf "$HERALD_CTR_WORK/pg-context"
    say "$image: built in $((SECONDS - started)) s"
}

wait_for() {
    local what="$1" limit="$2" deadline
    shift 2
    deadline=$((SECONDS + limit))
    until "$@"; do
        ((SECONDS < deadline)) || die "$what not ready after $limit s"
        sleep 0.3
    done
}

# The token goes in a header file (never on a command line); prints the body, fails on a non-2xx answer.
herald_ctr_api() {
    local url="$1" method="$2" path="$3" token="$4" body="${5:-}" status
    printf 'Authorization: Bearer %s\n' "$token" >"$HERALD_CTR_WORK/auth"
    local args=(-sS -o "$HERALD_CTR_WORK/response" -w '%{http_code}' -X "$method" -H "@$HERALD_CTR_WORK/auth")
    [[ -z "$body" ]] || args+=(-H 'Content-Type: application/json' --data-binary "$body")
    status="$(curl "${args[@]}" "$url$path")" || die "curl $method $path failed"
    rm -f "$HERALD_CTR_WORK/auth"
    [[ "$status" == 2?? ]] || die "$method $path answered $status: $(cat "$HERALD_CTR_WORK/response")"
    cat "$HERALD_CTR_WORK/response"
}

# The load's device tokens: one per user, distinct from any other in the demos.
herald_ctr_load_token() { printf '%064x' $((0x10000 + $1)); }

# One curl process for every registration: keep-alive, one connection (the host API per user).
herald_ctr_register_load() {
    local url="$1" host_token="$2" users="$3" i started=$SECONDS answers
    local config="$HERALD_CTR_WORK/register.curl" auth="$HERALD_CTR_WORK/host-auth"
    : >"$config"
    for ((i = 1; i <= users; i++)); do
        {
            printf 'next\nurl = "%s/api/internal/users/load-%d"\nrequest = "PUT"\nheader = "@%s"\n' "$url" "$i" "$auth"
            printf 'header = "Content-Type: application/json"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n'
            printf 'silent\nshow-error\n'
            printf 'data = "{\\"tenantId\\":\\"based\\",\\"emails\\":[\\"load-%d@example.com\\"],' "$i"
            printf '\\"wallets\\":[]}"\n'
            printf 'next\nurl = "%s/api/internal/users/load-%d/devices/iphone"\nrequest = "PUT"\nheader = "@%s"\n' \
                "$url" "$i" "$auth"
            printf 'header = "Content-Type: application/json"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n'
            printf 'silent\nshow-error\n'
            printf 'data = "{\\"platform\\":\\"ios\\",\\"environment\\":\\"production\\",\\"apnsToken\\":\\"%s\\",' \
                "$(herald_ctr_load_token "$i")"
            printf '\\"bundleId\\":\\"one.based.app\\"}"\n'
        } >>"$config"
    done
    sed -i '1d' "$config" # the first request needs no "next"
    printf 'Authorization: Bearer %s\n' "$host_token" >"$auth"
    curl -sS --config "$config" >"$HERALD_CTR_WORK/register.out" || die "registering the load's users failed"
    rm -f "$auth"
    answers="$(sort "$HERALD_CTR_WORK/register.out" | uniq -c | tr -s ' ' | tr '\n' ' ')"
    [[ "$(grep -vc '^20[01]$' "$HERALD_CTR_WORK/register.out" || true)" == 0 ]] || die "host API answers: $answers"
    say "host API: $users users and $users iPhones registered in $((SECONDS - started)) s (answers: $answers)"
}

# Every answer of the simulator to the load's tokens takes DELAY_MS, so a worker stopped mid-load has
# sends in flight.
herald_ctr_delay_load() {
    local sim="$1" ca="$2" users="$3" delay_ms="$4" i config="$HERALD_CTR_WORK/faults.curl"
    ((delay_ms > 0)) || return 0
    : >"$config"
    for ((i = 1; i <= users; i++)); do
        printf 'next\nurl = "%s/sim/faults/%s"\nrequest = "PUT"\ncacert = "%s"\nfail\nsilent\nshow-error\n' \
            "$sim" "$(herald_ctr_load_token "$i")" "$ca" >>"$config"
        printf 'data = "{\\"delayMs\\":%d}"\noutput = "/dev/null"\n' "$delay_ms" >>"$config"
    done
    sed -i '1d' "$config"
    curl --config "$config" 2>"$HERALD_CTR_WORK/faults.err" ||
        die "setting the simulator's delays failed: $(head -3 "$HERALD_CTR_WORK/faults.err")"
    say "herald-sim: every load token answers after $delay_ms ms"
}

# Pushes of at most 1,000 recipients, titled "Load 1" and "Load 2" (herald_ctr_check_load finds them so).
herald_ctr_queue_load() {
    local url="$1" api_key="$2" users="$3" round from to body per_push=1000
    for round in 1 2; do
        for ((from = 1; from <= users; from += per_push)); do
            to=$((from + per_push - 1))
            ((to <= users)) || to=$users
            body="$(jq -cn --argjson from "$from" --argjson to "$to" --arg round "$round" '{
                recipients: {emails: [range($from; $to + 1) | "load-\(.)@example.com"]},
                title: "Load \($round)", body: "Queued while the workers scale", ttlSeconds: 3600}')"
            herald_ctr_api "$url" POST /api/partners/notifications/push "$api_key" "$body" | jq -r .requestId
        done
    done
}

herald_ctr_request_completed() {
    [[ "$(herald_ctr_api "$1" GET "/api/partners/notifications/push/$3" "$2" | jq -r .status)" == completed ]]
}

herald_ctr_wait_load() {
    local url="$1" api_key="$2" users="$3" id pending totals deadline=$((SECONDS + 180))
    shift 3
    while :; do
        pending=0
        for id in "$@"; do herald_ctr_request_completed "$url" "$api_key" "$id" || { pending=1; break; }; done
        ((pending == 0)) && break
        ((SECONDS < deadline)) || die "the load did not complete in 180 s"
        sleep 0.5
    done
    totals="$(for id in "$@"; do
        herald_ctr_api "$url" GET "/api/partners/notifications/push/$id" "$api_key"
        echo
    done |
        jq -s '{requests: length, completed: map(select(.status == "completed")) | length,
                sent: map(.sent) | add, failed: map(.failed) | add, pending: map(.pending) | add}')"
    say "the requests' counts: $(jq -c . <<<"$totals")"
    [[ "$(jq .sent <<<"$totals")" == "$((users * 2))" && "$(jq .failed <<<"$totals")" == 0 ]] ||
        die "the requests do not say all $((users * 2)) sent"
}

herald_ctr_check_load() {
    local sim="$1" ca="$2" users="$3" sql="$4" history left ids
    shift 4
    local expected=$((users * 2)) work="$HERALD_CTR_WORK"
    ids="$(IFS=,; echo "$*")"
    curl -sS --fail --cacert "$ca" "$sim/sim/received" >"$work/received.json" || die "GET /sim/received failed"
    jq '[.[] | select(.status == 200 and (.payload.aps.alert.title | test("Load [12]$")))] as $load
        | ($load | map(.payload.deliveryId)) as $ids
        | {accepted: ($ids | length), distinct: ($ids | unique | length),
           duplicates: (($ids | length) - ($ids | unique | length)),
           tokens: ($load | map(.token) | unique | length),
           refused: [.[] | select(.status != 200)] | length}' "$work/received.json" >"$work/figures.json"
    say "herald-sim received: $(jq -c . "$work/figures.json")"
    history="$("$sql" "SELECT count(*), count(DISTINCT id) FROM delivery_history_deliveries
        WHERE request_id = ANY ('{$ids}') AND outcome = 'sent'")"
    left="$("$sql" "SELECT count(*) FROM deliveries")"
    say "database: sent history rows (all, distinct) = ${history/|/, }; rows left in the outbox: $left"
    [[ "$(jq .accepted "$work/figures.json")" == "$expected" ]] ||
        die "the simulator accepted $(jq .accepted "$work/figures.json") load deliveries, expected $expected"
    [[ "$(jq .duplicates "$work/figures.json")" == 0 ]] ||
        die "$(jq .duplicates "$work/figures.json") deliveries were sent twice"
    [[ "$history" == "$expected|$expected" ]] || die "history says ${history}, expected $expected sent once each"
    [[ "$left" == 0 ]] || die "$left rows left in the outbox"
    # Every delivery id of the load's history arrived, exactly once.
    "$sql" "SELECT id FROM delivery_history_deliveries WHERE request_id = ANY ('{$ids}')" | sort >"$work/history.ids"
    jq -r '.[] | select(.status == 200 and (.payload.aps.alert.title | test("Load [12]$"))) | .payload.deliveryId' \
        "$work/received.json" | sort >"$work/received.ids"
    diff -q "$work/history.ids" "$work/received.ids" >/dev/null ||
        die "the delivery ids sent differ from those recorded"
}
