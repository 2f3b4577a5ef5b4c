/// The usage text of heraldctl and of each command: `heraldctl help`, `heraldctl CMD --help`,
/// `heraldctl CMD SUB --help`. Bad usage prints the text of the command it was for.
enum Help {
    static let overview = """
        usage: heraldctl <command> [options]
               heraldctl --version

        commands:
          migrate       apply the schema migrations (idempotent, concurrent-safe)
          partners      create, list, update, suspend, revoke partners; rotate their keys and webhook secrets
          audit         the admin audit trail: who changed which partner, signed in to the console, replayed
          partitions    create future monthly partitions, drop expired ones
          stats         queue depth by state, lane and partner; outcomes of the last 5 min and hour
          tokens        token invalidations by upstream, token and reason over a window
          workers       the workers' heartbeats: live and lost workers, in flight, paused upstreams
          replay        put failed, dead or expired deliveries back in the queue
          webhooks      send failed delivery webhooks again (webhooks replay)
          backfill      bulk enqueue sends, or import users and devices, from a JSONL file
          expire        end the Live Activities past their TTL now (one sweep)
          probe         exit 0 if an http:// URL answers 2xx in time (container health checks; no database)
          settings      every environment variable of the processes, as docs/configuration.md (no database)

        Every command but probe and settings reads HERALD_DATABASE_URL (and HERALD_DB_PREPARED=0 behind a
        transaction pooler), accepts --json (one JSON object on stdout) and --help.
        Text output: tables and relative times on a terminal, tab-separated lines when piped.
        Exit status: 0 success, 1 failure, 2 bad usage.
        """

    /// The help of a command path (`["partners", "create"]`); nil for an unknown command.
    static func text(for path: [String]) -> String? {
        let key = path.prefix(2).joined(separator: " ")
        return pages[key] ?? path.first.flatMap { pages[$0] }
    }

    private static let pages: [String: String] = [
        "settings": """
        usage: heraldctl settings

        Prints every environment variable herald-intake, herald-worker and heraldctl read, with who reads
        it, its default, its values and its meaning, as the Markdown of docs/configuration.md (which is
        written by `swift run heraldctl settings > docs/configuration.md`). Needs no database.
        """,
        "audit": """
        usage: heraldctl audit [--partner ID|MINIAPP] [--limit N] [--before ID] [--json]

        The admin audit trail, newest first (50 entries unless --limit, at most 1000): every change to a
        partner (created, updated with each field's old and new value, key rotated, previous key ended,
        webhook secret rotated, previous webhook secret ended, suspended, resumed, revoked), console
        sign-ins and sign-outs, and replays of deliveries and
        webhooks, each with its actor (admin_token, admin_token_previous, console and its session,
        heraldctl and the OS user, or database and the role for SQL by hand) and the client address (the
        intake's peer, or X-Forwarded-For from HERALD_TRUSTED_PROXIES). Never a key, a key's hash or a
        secret. --before ID pages to
        older entries; --partner keeps one partner's.
        """,
        "migrate": """
        usage: heraldctl migrate [--json]

        Applies the migrations bundled with this build that the database lacks, in order, each in its
        own transaction, then every function, trigger and view file (functions/*.sql) whose checksum
        changed, in the order functions/ORDER lists. An empty database starts from the baseline
        (baseline/*.sql) instead of the migrations it replaces. Safe to run from several processes at
        once (an advisory lock serialises them) and to rerun: an up-to-date schema is left alone.
        --json: {"applied":["baseline/053_baseline.sql",...,"functions/claim_deliveries.sql",...]}
        """,
        "partitions": """
        usage: heraldctl partitions [--months-ahead N] [--retention-days N] [--list] [--json]

        Creates the monthly partitions of push_requests, delivery_history and live_activity_events for
        the current month and N more (default 3, at most 36); with --retention-days (at least 31)
        detaches and drops the ones wholly older than that. Run it daily (deploy/ has a CronJob); the intake's janitor does the same.
        --list prints every partition and its bounds.
        """,
        "partners": """
        usage: heraldctl partners <create|list|update|rotate-key|end-previous-key|rotate-webhook-secret|
                                  end-previous-webhook-secret|suspend|resume|revoke> ...

          partners create --mini-app-id ID --display-name NAME [--tenant T]
                          [--rate-limit-per-minute N] [--rate-limit-per-day N]
                          [--icon-url URL | --icon-file PATH] [--webhook-url URL]
                          [--sound NAME | --silent] [--allow-time-sensitive]
          partners list
          partners update ID [--display-name NAME] [--rate-limit-per-minute N] [--rate-limit-per-day N]
                             [--icon-url URL | --icon-file PATH | --no-icon]
                             [--webhook-url URL | --no-webhook] [--sound NAME | --silent]
                             [--allow-time-sensitive | --disallow-time-sensitive]
          partners rotate-key ID [--previous-key-valid DURATION]
          partners end-previous-key ID
          partners rotate-webhook-secret ID [--previous-secret-valid DURATION]
          partners end-previous-webhook-secret ID
          partners suspend ID
          partners resume ID
          partners revoke ID

        heraldctl partners <action> --help for each.
        """,
        "partners create": """
        usage: heraldctl partners create --mini-app-id ID --display-name NAME [--tenant T]
               [--rate-limit-per-minute N] [--rate-limit-per-day N] [--icon-url URL | --icon-file PATH]
               [--webhook-url URL] [--sound NAME | --silent] [--allow-time-sensitive] [--json]

        Registers a partner and prints its API key once (only its hash is stored): hand it over a
        secure channel. Defaults: HERALD_DEFAULT_TENANT, HERALD_DEFAULT_RATE_LIMIT_PER_MINUTE and
        HERALD_DEFAULT_RATE_LIMIT_PER_DAY (the intake's).
        The icon (PNG, JPEG or SVG, at most 1 MiB) is fetched from --icon-url (https, public addresses
        only unless HERALD_WEBHOOK_ALLOW_PRIVATE=1; HERALD_CA_FILE trusted besides the system CAs) or
        read from --icon-file, and stored as square PNGs before the partner is written; an image that
        does not decode writes nothing. --webhook-url (https) sends the partner's delivery webhooks
        there; its signing secret is printed once.
        --sound names the sound file of the partner's iOS notifications (aps.sound, a file in the host
        app; default "default", the system sound); --silent sends them without a sound.
        --allow-time-sensitive lets its pushes ask for interruptionLevel time-sensitive (else refused).
        """,
        "partners list": """
        usage: heraldctl partners list [--json]

        Every partner, active and revoked, oldest first. Keys are never shown.
        """,
        "partners update": """
        usage: heraldctl partners update ID [--display-name NAME] [--rate-limit-per-minute N]
               [--rate-limit-per-day N] [--icon-url URL | --icon-file PATH | --no-icon]
               [--webhook-url URL | --no-webhook] [--sound NAME | --silent]
               [--allow-time-sensitive | --disallow-time-sensitive] [--json]

        Changes a partner's display name (the brand prefix of its notifications), limits, icon
        (fetched or read and rasterised as for create; --no-icon removes it) or webhook URL (a
        new URL gets a new secret, printed once, and the old one stops signing, as does the one
        before it if a rotation's overlap was running; --no-webhook removes both), sound (--sound
        NAME, or --silent for none) or whether its pushes may be time-sensitive.
        """,
        "partners rotate-webhook-secret": """
        usage: heraldctl partners rotate-webhook-secret ID [--previous-secret-valid DURATION] [--json]

        Issues a new webhook signing secret and prints it once; events are signed with it from now
        on. The old secret stops at once, or for DURATION (90s, 15m, 24h, 7d at most) signs every event
        too (Herald-Signature then carries two v1=, the new secret's first) so the partner can deploy the
        new secret first; a secret from an earlier rotation stops at once. Give no overlap for a secret
        that leaked. Fails (1) for a revoked partner or one without a webhook.
        """,
        "partners end-previous-webhook-secret": """
        usage: heraldctl partners end-previous-webhook-secret ID [--json]

        Ends the overlap of the last webhook secret rotation: events are signed with the current secret
        only from now on. Fails (1) for a revoked or unknown partner.
        """,
        "partners rotate-key": """
        usage: heraldctl partners rotate-key ID [--previous-key-valid DURATION] [--json]

        Issues a new API key and prints it once. The old key stops working at once, or keeps working
        for DURATION (90s, 15m, 24h, 7d at most) so the partner can deploy the new key first; a key
        from an earlier rotation stops at once. Give no overlap for a key that leaked.
        """,
        "partners end-previous-key": """
        usage: heraldctl partners end-previous-key ID [--json]

        Ends the overlap of the last rotation: the key before it is refused from now on (within the
        intakes' 2-second key cache). Fails (1) for a revoked or unknown partner.
        """,
        "partners revoke": """
        usage: heraldctl partners revoke ID [--json]

        Revokes the partner: its key is refused from now on (within the intakes' 2-second key cache),
        and nothing it queued is sent: its queued, scheduled and retrying deliveries are cancelled
        (outcome cancelled, reason partner_revoked; never replayed), its reminders cancelled, its
        broadcast channels closed, and its active Live Activities ended at once on every device. Ending
        them signs their ends: HERALD_SIGNING_KEYS (and HERALD_SIGNING_KEY_ID) as the intake has them
        are needed when the partner has an active Live Activity. Cannot be undone.
        """,
        "partners suspend": """
        usage: heraldctl partners suspend ID [--json]

        Suspends the partner: its key is answered 403 partner_suspended (within the intakes' 2-second key
        cache) and nothing of it is sent; its queued deliveries wait, attempts unspent, and those whose
        TTL ends meanwhile expire. Fails (1) for a revoked or unknown partner.
        """,
        "partners resume": """
        usage: heraldctl partners resume ID [--json]

        Resumes a suspended partner: its key works again and what it queued is sent, if still within its
        TTL. Fails (1) for a revoked or unknown partner.
        """,
        "webhooks": """
        usage: heraldctl webhooks replay [--event ID]... [--partner ID|MINIAPP] [--since T] [--until T]
               [--dry-run] [--json]

        Sends failed delivery webhooks again: each gets a new 24-hour retry window and its
        attempts back; the partner sees the same Herald-Event-Id it may have seen before. At least one
        selector is required. --since/--until select by when the event failed (ISO 8601 or an age such
        as 2h). Events of partners that no longer have a webhook are skipped. --dry-run changes nothing.
        --json: {"matched":N,"replayed":N,"skipped":{"no_webhook":N}} (plus "wouldReplay" with --dry-run)
        """,
        "stats": """
        usage: heraldctl stats [--json]

        The queue at a glance: rows by state (pending, leased), lane (realtime, bulk) and partner; how
        long the oldest due row has waited; deliveries finished in the last 5 minutes and hour by
        outcome. --json: {"queue":[{"state","lane","partner","count"}],"oldestDueSeconds":N,
        "outcomes":{"5m":{"sent":N,...},"1h":{...}}}
        """,
        "workers": """
        usage: heraldctl workers [--json]

        Every worker seen in the last day, from the heartbeat each writes every
        HERALD_HEARTBEAT_INTERVAL_MS (5 s): id, host, version, live or lost (not seen for three of its
        intervals: killed, cut off from Postgres or stuck), last seen, started, deliveries in flight,
        claims per second, paused upstreams and the release it runs ("-" for 0.9.0 and earlier, which do
        not report it).
        --json: {"workers":[{"workerId","host","version","release","status","startedAt","lastSeenAt",
        "inFlight","pausedUpstreams":[],"claimsPerSecond"}]}
        """,
        "tokens": """
        usage: heraldctl tokens [--since T] [--until T] [--json]

        Deliveries that ended on a dead token between --since (default: 24 hours before --until) and
        --until (default: now), by upstream (apns, fcm), token (apns, apnsPushToStart, liveActivity, fcm)
        and the upstream's reason, with the distinct devices and the first and last time. Many devices with
        one reason at once is a storm: check /readyz and the workers' log before trusting the verdicts.
        Sends skipped because the token was already invalid (token_invalidated) or missing (no_token) are
        counted apart. T: ISO 8601 or an age such as 2h.
        --json: {"since","until","invalidations":[{"upstream","token","reason","count","devices","first",
        "last"}],"total":N,"skipped":{"token_invalidated":N,"no_token":N}}
        """,
        "replay": """
        usage: heraldctl replay [--request ID]... [--partner ID] [--since T] [--until T]
               [--outcome failed|dead|expired]... [--reason TEXT] [--realtime] [--dry-run] [--json]

        Puts failed, dead or expired push deliveries back in the queue, with the payload they had.
        At least one selector (--request, --partner, --since, --until, --reason) is required.
          --request ID   a push request id (repeatable)
          --partner ID   a partner id (UUID) or mini-app id
          --since/--until T  when the delivery finished: ISO 8601, or an age like 30m, 2h, 7d
          --outcome O    failed, dead or expired (repeatable; default all three)
          --reason TEXT  the upstream reason recorded (BadDeviceToken, InternalServerError, ...)
          --realtime     queue in the realtime lane (default: bulk, behind partner traffic)
          --dry-run      count what would be replayed, by skip reason; change nothing
        Never replays to an invalid token, a removed device or a user who opted out, never a delivery
        that was sent, never one twice (already_replayed), never a revoked partner's (partner_revoked),
        never one of a push its partner retracted (retracted).
        The request counts the replayed rows
        again: its status goes back to sending, then completed.
        --json: {"matched":N,"replayed":N,"skipped":{"token_invalid":N,"opted_out":N,
        "device_removed":N,"already_replayed":N,"partner_revoked":N,"retracted":N}}
        """,
        "backfill": """
        usage: heraldctl backfill sends FILE [--json]
               heraldctl backfill users FILE [--json]

        Bulk loads a JSONL file (one JSON object per line), streamed, in the bulk lane.
        heraldctl backfill <sends|users> --help for each.
        """,
        "probe": """
        usage: heraldctl probe http://HOST[:PORT]/PATH [--timeout SECONDS]

        GETs the URL and exits 0 when it answers a 2xx status within the timeout (default 3 s, at most
        300), 1 otherwise (refused, timed out, another status), 2 on bad usage. Needs no database and
        no shell: the container images' health check (deploy/). Plain http:// only: the intake and
        the worker serve /healthz and /readyz without TLS.
        """,
        "backfill sends": """
        usage: heraldctl backfill sends FILE [--json]

        Enqueues one push per line of FILE, in the bulk lane (behind partner traffic). Each line is the
        body of POST /api/partners/notifications/push plus "partner" (the miniAppId) and a "key" unique per
        partner (1-255 printable ASCII):
          {"partner":"game.one","key":"2026-12-reminder-42","recipients":{"emails":["a@example.com"]},
           "title":"Your turn","body":"...","deepLink":"basedapp://miniapp/game.one/...","data":{...}}
        Every rule of the push endpoint applies (tenant, brand prefix, deep link, data, 4,096-byte payloads,
        opt-outs, sendAt, ttlSeconds and HERALD_DEFAULT_TTL_SECONDS, interruptionLevel and the partner's
        time-sensitive permission and sound, category and HERALD_NOTIFICATION_CATEGORIES, signed with
        HERALD_SIGNING_KEYS);
        the partner's rate limits do not. A bad line is reported with its number and the rest go on.
        Rerunning a file creates nothing twice: lines whose key was written before count as duplicates.
        Ctrl-C (or SIGTERM) stops after the batch in flight commits, prints what was committed
        ("interrupted":true) and exits 1; rerun the file to finish. Progress goes to stderr: a bar on a
        terminal, a line every 50,000 lines or 5 s otherwise. HERALD_BACKFILL_BATCH_SIZE: lines per
        transaction (default 1000).
        --json: {"lines":N,"accepted":N,"duplicates":N,"rejected":[{"line":N,"code":"...","message":"..."}],
        "deliveries":N}
        """,
        "backfill users": """
        usage: heraldctl backfill users FILE [--json]

        Creates or updates one user per line of FILE, with the rules of the host API (PUT
        /api/internal/users/{userId} and .../devices/{deviceId}):
          {"userId":"u1","tenantId":"t1","emails":["a@example.com"],"wallets":["0x..."],
           "timeZone":"Europe/Paris","quietHours":{"start":"22:00","end":"08:00"},
           "devices":[{"deviceId":"d1","platform":"ios","environment":"production","apnsToken":"..."}]}
        The email and wallet sets replace the user's; devices are created or updated (others stay), and a
        token another device row holds moves to this one. timeZone and quietHours are optional: a line with
        either replaces both, a line with neither keeps the user's. A line whose identifier belongs to
        another user of the tenant (identifier_taken) or whose time zone is unknown (unknown_time_zone) is
        rejected alone. Rerunning a file changes nothing more.
        Ctrl-C, progress and HERALD_BACKFILL_BATCH_SIZE as for backfill sends.
        --json: {"lines":N,"users":N,"devices":N,"rejected":[{"line":N,"code":"...","message":"..."}]}
        """,
        "expire": """
        usage: heraldctl expire [--json]

        Sends (or refuses) every scheduled Live Activity start whose startAt has come, then ends every Live
        Activity past its TTL, in batches: the sweep every worker runs each second.
        --json: {"expired":N,"started":N,"refused":N}
        """,
    ]
}
