import HeraldCore

// The settings only herald-intake reads.
extension Settings {
    static let intake: [Setting] = [
        intakePort, intakeMetricsPort, intakeThreads, databasePoolSize, intakeMaxConnections,
        intakeMaxConnectionsPerAddress, intakeIdleTimeoutSeconds, intakeRequestTimeoutSeconds, intakeQueueWaitLimit,
        preferWaitMaxPerPartner, intakeBatchWindow, intakeRecipientCacheSize, notifyInterval, trustedProxies,
        adminToken, hostToken, adminTokenPrevious, hostTokenPrevious,
        sessionWindowDays, liveActivityMaxActivePerUser, liveActivityStartsPerUserHour,
        liveActivityStartsPerUserAppHour, liveActivityAlertedUpdatesPerHour, liveActivityOpenChannelsPerMiniApp,
        reminderMaxPending, mediaTTLHours, mediaMaxPerPartner,
        consoleEnabled, consoleSessionHours, consoleIdleMinutes,
    ]

    // MARK: Listening and connections

    public static let intakePort = Setting(
        "HERALD_INTAKE_PORT", .intakeServer, readers: [.intake], default: .integer(8080), range: 0...65535,
        summary: """
            TCP port of the API; 0 picks a free port, logged in the `listening` line. The intake listens on every \
            IPv4 interface (`0.0.0.0`).
            """)
    public static let intakeMetricsPort = Setting(
        "HERALD_INTAKE_METRICS_PORT", .intakeServer, readers: [.intake], default: .integer(9102), range: 0...65535,
        summary: """
            Port of the intake's `/metrics`, on the same interfaces; 0 picks a free port, logged as `metricsPort` in \
            the `listening` line. Must differ from `HERALD_INTAKE_PORT`, whose `/metrics` answers 404.
            """)
    public static let intakeThreads = Setting(
        "HERALD_INTAKE_THREADS", .intakeServer, readers: [.intake], default: .integer(32), range: 1...512,
        summary: "Handler threads, i.e. requests processed at once.")
    public static let databasePoolSize = Setting(
        "HERALD_DB_POOL_SIZE", .intakeServer, readers: [.intake], default: .integer(32), range: 1...512,
        summary: "Most Postgres connections of the intake.")
    public static let intakeMaxConnections = Setting(
        "HERALD_INTAKE_MAX_CONNECTIONS", .intakeServer, readers: [.intake], default: .integer(1_024),
        range: 16...100_000,
        summary: """
            Connections served at once, in all; up to a quarter more are accepted only to answer their first \
            request 503 `overloaded` with `Retry-After: 1` and close, so a client past the limit is answered \
            instead of waiting to connect.
            """)
    public static let intakeMaxConnectionsPerAddress = Setting(
        "HERALD_INTAKE_MAX_CONNECTIONS_PER_ADDRESS", .intakeServer, readers: [.intake], default: .integer(256),
        range: 0...100_000,
        summary: """
            Connections open at once from one client address (0 = no limit); a request on a connection beyond them \
            is answered 503 `too_many_connections` with `Retry-After: 1` and the connection closed. Behind a proxy \
            every connection comes from the proxy: set it above the proxy's pool, or 0.
            """)
    public static let intakeIdleTimeoutSeconds = Setting(
        "HERALD_INTAKE_IDLE_TIMEOUT_SECONDS", .intakeServer, readers: [.intake], default: .integer(15),
        range: 1...3_600, unit: .seconds,
        summary: """
            A connection without traffic for this long is closed; a request being handled or waiting is not idle. \
            Answers on a kept-alive connection say `Keep-Alive: timeout=` a second less (from 2 up), so clients \
            retire idle connections first.
            """)
    public static let intakeRequestTimeoutSeconds = Setting(
        "HERALD_INTAKE_REQUEST_TIMEOUT_SECONDS", .intakeServer, readers: [.intake], default: .integer(20),
        range: 1...3_600, unit: .seconds,
        summary: """
            Each request must arrive whole (line, headers, body) within this long of the connection opening or of \
            its previous answer, or the connection is cut (slow-loris).
            """)
    public static let intakeQueueWaitLimit = Setting(
        "HERALD_INTAKE_QUEUE_WAIT_LIMIT_MS", .intakeServer, readers: [.intake], default: .integer(1_000),
        range: 0...60_000, unit: .milliseconds,
        summary: """
            A request that waited this long for a handler thread is answered 503 `overloaded` with \
            `Retry-After: 1`, unprocessed (0 = wait as long as it takes). `GET /healthz` never waits.
            """)
    public static let preferWaitMaxPerPartner = Setting(
        "HERALD_PREFER_WAIT_MAX_PER_PARTNER", .intakeServer, readers: [.intake], default: .integer(50),
        range: 0...10_000,
        summary: "`Prefer: wait` requests of one partner held at once; beyond, the normal `202` at once.")
    public static let intakeBatchWindow = Setting(
        "HERALD_INTAKE_BATCH_WINDOW_US", .intakeServer, readers: [.intake], default: .integer(250),
        range: 0...10_000, unit: .microseconds,
        summary: """
            Under load (pushes were waiting as the last write committed), the push writer waits up to this long for \
            more pushes before it writes them in one transaction, unless 128 wait already (0 writes at once). A lone \
            push never waits. Larger batches cost Postgres less a push; each push under load waits up to this much \
            longer for its answer.
            """)
    public static let intakeRecipientCacheSize = Setting(
        "HERALD_INTAKE_RECIPIENT_CACHE_SIZE", .intakeServer, readers: [.intake], default: .integer(100_000),
        range: 0...10_000_000,
        summary: """
            Recipient identifiers (per tenant) whose userId the intake remembers, about 200 bytes each (0 = none), \
            so it can sign a push's deliveries for their user before Postgres resolves it and write the push in one \
            batch statement; a stale entry costs one more batch call, never a wrong delivery (docs/internals.md, \
            "Slots and the recipient cache").
            """)
    public static let notifyInterval = Setting(
        "HERALD_NOTIFY_INTERVAL_MS", .intakeServer, readers: [.intake], default: .integer(1), range: 0...1_000,
        unit: .milliseconds,
        summary: """
            After telling the workers that deliveries are due (one `NOTIFY` for every write committed since the \
            last: multi-device pushes, activities, reminders, replays; a batch of single-device pushes notifies \
            inside its own transaction), the intake waits at least this long before the next: a shorter interval \
            wakes the workers sooner at low rates, a longer one costs fewer statements and claims under load.
            """)
    public static let trustedProxies = Setting(
        "HERALD_TRUSTED_PROXIES", .intakeServer, readers: [.intake], default: .unset,
        format: "comma-separated addresses or CIDR blocks",
        summary: """
            The proxies in front of the intake; only from these is `X-Forwarded-For` read (its right-most address \
            that is not such a proxy is the client, for the audit trail and the console's sign-in limit); unset \
            trusts no one.
            """)

    // MARK: Credentials

    public static let adminToken = Setting(
        "HERALD_ADMIN_TOKEN", .credentials, readers: [.intake], default: .required, format: "at least 16 characters",
        summary: """
            Bearer token of the admin API; a value containing `change-me`, `changeme`, `example` or `placeholder` \
            (any letter case, as every example in `deploy/` does) stops the intake.
            """)
    public static let hostToken = Setting(
        "HERALD_HOST_TOKEN", .credentials, readers: [.intake], default: .required, format: "at least 16 characters",
        summary: "Bearer token of the host API; not a placeholder (as `HERALD_ADMIN_TOKEN`), and differs from it.")
    public static let adminTokenPrevious = Setting(
        "HERALD_ADMIN_TOKEN_PREVIOUS", .credentials, readers: [.intake], default: .unset,
        format: "at least 16 characters",
        summary: """
            During a rotation, the old admin token, still accepted; not a placeholder, unlike every other token. \
            Requests made with it are counted in `herald_intake_previous_credential_requests_total` \
            (docs/runbooks/credentials.md, *Key and credential rotation*).
            """)
    public static let hostTokenPrevious = Setting(
        "HERALD_HOST_TOKEN_PREVIOUS", .credentials, readers: [.intake], default: .unset,
        format: "at least 16 characters",
        summary: "During a rotation, the old host token, still accepted; as `HERALD_ADMIN_TOKEN_PREVIOUS`.")

    // MARK: Live Activities and reminders

    public static let sessionWindowDays = Setting(
        "HERALD_SESSION_WINDOW_DAYS", .liveActivities, readers: [.intake], default: .integer(30), range: 1...3_650,
        unit: .days,
        summary: """
            A partner may start a Live Activity only for a user whose in-app session with its mini-app (host API) \
            is at most this old, else 409 `no_session`.
            """)
    public static let liveActivityMaxActivePerUser = Setting(
        "HERALD_LA_MAX_ACTIVE_PER_USER", .liveActivities, readers: [.intake],
        default: .integer(LiveActivityBudgets().maxActivePerUser), range: LiveActivityBudgets.maxActiveRange,
        summary: """
            Active Live Activities a user may have across every mini-app; a start beyond is 409 \
            `too_many_activities` (a start that replaces the same mini-app's activity is not counted twice).
            """)
    public static let liveActivityStartsPerUserHour = Setting(
        "HERALD_LA_STARTS_PER_USER_HOUR", .liveActivities, readers: [.intake],
        default: .integer(LiveActivityBudgets().startsPerUserHour), range: LiveActivityBudgets.startsRange,
        summary: """
            Live Activity starts, replacements included, per user per sliding hour across every mini-app; beyond, \
            429 `live_activity_budget` with `Retry-After`.
            """)
    public static let liveActivityStartsPerUserAppHour = Setting(
        "HERALD_LA_STARTS_PER_USER_APP_HOUR", .liveActivities, readers: [.intake],
        default: .integer(LiveActivityBudgets().startsPerUserAppHour), range: LiveActivityBudgets.startsRange,
        summary: "The same per user and mini-app; at most `HERALD_LA_STARTS_PER_USER_HOUR`.")
    public static let liveActivityAlertedUpdatesPerHour = Setting(
        "HERALD_LA_ALERTED_UPDATES_PER_HOUR", .liveActivities, readers: [.intake],
        default: .integer(LiveActivityBudgets().alertedUpdatesPerHour), range: LiveActivityBudgets.alertedUpdatesRange,
        summary: """
            Priority-10 pushes per Live Activity per sliding hour: an update with an alert beyond is sent silent at \
            priority 5 and answered `"alert":"dropped_budget"`; a replaced activity's end pays from it too; the \
            same per broadcast channel.
            """)
    public static let liveActivityOpenChannelsPerMiniApp = Setting(
        "HERALD_LA_OPEN_CHANNELS_PER_MINI_APP", .liveActivities, readers: [.intake],
        default: .integer(LiveActivityBudgets().openChannelsPerMiniApp), range: LiveActivityBudgets.openChannelsRange,
        summary: """
            iOS 18 broadcast channels one mini-app may have opening or open; one more is 409 `too_many_channels`, \
            exact across intake processes. APNs holds 10,000 channels per app and environment, shared by every \
            mini-app.
            """)
    public static let reminderMaxPending = Setting(
        "HERALD_REMINDER_MAX_PENDING", .liveActivities, readers: [.intake], default: .integer(20), range: 1...1_000,
        summary: """
            Pending reminders a user may have of one mini-app (host API); one more is 429 `too_many_reminders`, \
            exact across intake processes.
            """)

    // MARK: Push media

    public static let mediaTTLHours = Setting(
        "HERALD_MEDIA_TTL_HOURS", .pushes, readers: [.intake], default: .integer(PushMedia.defaultLifetimeHours),
        range: PushMedia.lifetimeHoursRange, unit: .hours,
        summary: """
            How long an uploaded media file (`POST /api/partners/media`) is served after its upload; a push naming \
            it keeps it until the push expires. Then it is 404 and the janitor deletes it.
            """)
    public static let mediaMaxPerPartner = Setting(
        "HERALD_MEDIA_MAX_PER_PARTNER", .pushes, readers: [.intake], default: .integer(PushMedia.defaultMaxPerPartner),
        range: PushMedia.maxPerPartnerRange,
        summary: "Live media files one partner may hold; one more upload is 429 `media_limit_reached`.")

    // MARK: Operator console

    public static let consoleEnabled = Setting(
        "HERALD_CONSOLE_ENABLED", .console, readers: [.intake], default: .flag(false), format: "`0` or `1`",
        summary: """
            `1` serves the operator console at `/console/` and its API under `/api/admin/console/` \
            (docs/console.md); `0` answers 404 on every console path.
            """)
    public static let consoleSessionHours = Setting(
        "HERALD_CONSOLE_SESSION_HOURS", .console, readers: [.intake], default: .integer(12), range: 1...168,
        unit: .hours,
        summary: """
            How long a console sign-in lasts; the session is kept in Postgres and ends at sign-out. The cookie is \
            `Secure` (and named `__Host-herald_console`) when `HERALD_PUBLIC_URL` is https.
            """)
    public static let consoleIdleMinutes = Setting(
        "HERALD_CONSOLE_IDLE_MINUTES", .console, readers: [.intake], default: .integer(30), range: 1...10_080,
        unit: .minutes, summary: "A console session unused this long is signed out.")
}
