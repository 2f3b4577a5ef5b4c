import HeraldCore

// The settings only herald-worker reads. The time ranges here are what each service's `validate()` checks
// (WorkerServiceConfigurations.swift).
extension Settings {
    static let worker: [Setting] = [
        apnsKeyFile, apnsKeyID, apnsTeamID, apnsTopic, apnsURL, apnsSandboxURL,
        apnsSandboxKeyFile, apnsSandboxKeyID, apnsProductionKeyFile, apnsProductionKeyID, fcmCredentialsFile, fcmURL,
        upstreamConnections, upstreamTimeout,
        batchSize, workerMaxInFlight, workerMaxBulkInFlight, leaseSeconds, pollInterval, claimSpacing,
        userMaxPushesPerHour, completionInterval, statementTimeout,
        maxAttempts, retryBase, retryMaxSeconds, upstreamPauseMaxSeconds, tokenStormTokens, tokenStormWindowSeconds,
        tokenSuspectWaitSeconds,
        workerMetricsPort, workerListen, activitySweepEnabled, activitySweepInterval, activitySweepBatch,
        liveActivityStartConfirmSeconds, queueGaugeInterval, heartbeatInterval, version, drainSeconds,
        webhooksEnabled, webhookMaxInFlight, webhookConcurrencyPerPartner, webhookPoll,
        channelsEnabled, apnsChannelEnvironment, apnsChannelURL, channelMaxInFlight, channelPoll,
        channelSweepEnabled, channelSweepInterval, channelSweepMaxDeletes,
    ]

    // MARK: APNs and FCM

    public static let apnsKeyFile = Setting(
        "HERALD_APNS_KEY_FILE", .upstreams, readers: [.worker], default: .unset, format: "path of a `.p8` file",
        summary: """
            APNs token-auth key (PKCS#8 EC P-256): the worker sends to APNs when it is set. This or \
            `HERALD_FCM_CREDENTIALS_FILE` is required; a worker claims only deliveries of the upstreams it has, \
            and one with APNs also runs iOS 18 broadcast channels.
            """)
    public static let apnsKeyID = Setting(
        "HERALD_APNS_KEY_ID", .upstreams, readers: [.worker], default: .requiredWith("HERALD_APNS_KEY_FILE"),
        format: "10 characters", summary: "The APNs key's id.")
    public static let apnsTeamID = Setting(
        "HERALD_APNS_TEAM_ID", .upstreams, readers: [.worker], default: .requiredWith("HERALD_APNS_KEY_FILE"),
        format: "10 characters", summary: "The Apple developer team's id.")
    public static let apnsTopic = Setting(
        "HERALD_APNS_TOPIC", .upstreams, readers: [.worker], default: .requiredWith("HERALD_APNS_KEY_FILE"),
        format: "a bundle id", summary: "The app's bundle id (`apns-topic`) when the device registered none.")
    public static let apnsURL = Setting(
        "HERALD_APNS_URL", .upstreams, readers: [.worker], default: .text("https://api.push.apple.com"),
        format: "`http(s)://host[:port]`", summary: "APNs for devices registered as `production`.")
    public static let apnsSandboxURL = Setting(
        "HERALD_APNS_SANDBOX_URL", .upstreams, readers: [.worker], default: .text("https://api.sandbox.push.apple.com"),
        format: "`http(s)://host[:port]`", summary: "APNs for devices registered as `sandbox`.")
    public static let apnsSandboxKeyFile = Setting(
        "HERALD_APNS_SANDBOX_KEY_FILE", .upstreams, readers: [.worker], default: .unset,
        format: "path of a `.p8` file",
        summary: """
            A token-auth key for the sandbox only (Apple issues keys scoped to one environment): sandbox requests \
            are signed with it instead of `HERALD_APNS_KEY_FILE`, which stays the key of the other environment.
            """)
    public static let apnsSandboxKeyID = Setting(
        "HERALD_APNS_SANDBOX_KEY_ID", .upstreams, readers: [.worker],
        default: .requiredWith("HERALD_APNS_SANDBOX_KEY_FILE"), format: "10 characters",
        summary: "The sandbox key's id; set without its key file it is an error.")
    public static let apnsProductionKeyFile = Setting(
        "HERALD_APNS_PRODUCTION_KEY_FILE", .upstreams, readers: [.worker], default: .unset,
        format: "path of a `.p8` file",
        summary: """
            A token-auth key for production only: production requests are signed with it instead of \
            `HERALD_APNS_KEY_FILE`.
            """)
    public static let apnsProductionKeyID = Setting(
        "HERALD_APNS_PRODUCTION_KEY_ID", .upstreams, readers: [.worker],
        default: .requiredWith("HERALD_APNS_PRODUCTION_KEY_FILE"), format: "10 characters",
        summary: "The production key's id; set without its key file it is an error.")
    public static let fcmCredentialsFile = Setting(
        "HERALD_FCM_CREDENTIALS_FILE", .upstreams, readers: [.worker], default: .unset,
        format: "path of a JSON file",
        summary: """
            Firebase service-account JSON (`project_id`, `client_email`, `private_key`, `token_uri`): the worker \
            sends to FCM when it is set.
            """)
    public static let fcmURL = Setting(
        "HERALD_FCM_URL", .upstreams, readers: [.worker], default: .text("https://fcm.googleapis.com"),
        format: "`http(s)://host[:port]`", summary: "FCM HTTP v1 origin.")
    public static let upstreamConnections = Setting(
        "HERALD_UPSTREAM_CONNECTIONS", .upstreams, readers: [.worker], default: .integer(3), range: 1...64,
        summary: "HTTP/2 connections per upstream (per APNs environment, and to FCM).")
    public static let upstreamTimeout = Setting(
        "HERALD_UPSTREAM_TIMEOUT_MS", .upstreams, readers: [.worker], default: .integer(10_000), range: 100...120_000,
        unit: .milliseconds,
        summary: "How long one APNs or FCM request may take, queue wait included, before it is retried later.")

    // MARK: Claiming and recording

    public static let batchSize = Setting(
        "HERALD_BATCH_SIZE", .claims, readers: [.worker], default: .integer(500), range: 1...5_000,
        summary: "Deliveries per claim (a group row's members count).")
    public static let workerMaxInFlight = Setting(
        "HERALD_WORKER_MAX_IN_FLIGHT", .claims, readers: [.worker], default: .integer(6_000), range: 1...100_000,
        summary: """
            Deliveries claimed and not yet recorded, at most. Sends per second are at most the streams in flight \
            over the upstream's round trip (`HERALD_UPSTREAM_CONNECTIONS` x 1,000 streams, or fewer if the \
            upstream's SETTINGS say so, at 80 ms: 37,500/s); keep this about twice the streams so they stay full \
            while claims and completions run (docs/operations.md, *Round trips*).
            """)
    public static let workerMaxBulkInFlight = Setting(
        "HERALD_WORKER_MAX_BULK_IN_FLIGHT", .claims, readers: [.worker], default: .integer(200), range: 1...100_000,
        summary: """
            Of those, bulk-lane rows (backfills, replays) at most: a realtime push claimed while a backfill drains \
            waits behind at most this many bulk sends; raise it for a faster drain when realtime latency matters less.
            """)
    public static let leaseSeconds = Setting(
        "HERALD_LEASE_SECONDS", .claims, readers: [.worker], default: .integer(30), range: 2...3_600, unit: .seconds,
        summary: """
            A claimed row not recorded within this time is rescued by any worker; must be longer than \
            `HERALD_UPSTREAM_TIMEOUT_MS`, and sends that take longer keep their lease (the lease extender renews it).
            """)
    public static let pollInterval = Setting(
        "HERALD_POLL_INTERVAL_MS", .claims, readers: [.worker], default: .integer(1_000), range: 10...60_000,
        unit: .milliseconds, summary: "The poll fallback when no NOTIFY arrives.")
    public static let claimSpacing = Setting(
        "HERALD_CLAIM_SPACING_MS", .claims, readers: [.worker], default: .integer(2), range: 0...1_000,
        unit: .milliseconds,
        summary: """
            After a claim that emptied the queue, the next claim waits at least this long, so live traffic is \
            claimed in batches.
            """)
    public static let userMaxPushesPerHour = Setting(
        "HERALD_USER_MAX_PUSHES_PER_HOUR", .claims, readers: [.worker], default: .integer(0), range: 0...100_000,
        summary: """
            The partner pushes one user gets from all mini-apps in any sliding hour, at most; beyond it a delivery \
            is `suppressed` (`user_cap`). `0` is off. Set the same value on every worker; with it on, intakes lease \
            no rows at their write and every partner push takes the claim (docs/api-host.md).
            """)
    public static let completionInterval = Setting(
        "HERALD_COMPLETION_INTERVAL_MS", .claims, readers: [.worker], default: .integer(50), range: 0...1_000,
        unit: .milliseconds,
        summary: """
            Outcomes are recorded by one statement at most this often (sooner when a full batch waits), so moderate \
            traffic is recorded in batches; a request's status, webhook and `Prefer: wait` answer come up to this \
            much later.
            """)
    public static let statementTimeout = Setting(
        "HERALD_STATEMENT_TIMEOUT_MS", .claims, readers: [.worker], default: .integer(30_000), range: 100...3_600_000,
        unit: .milliseconds,
        summary: """
            `statement_timeout` of the worker's connections; every connection also has TCP keepalives (10 s idle, \
            5 s apart, 3 probes) and `tcp_user_timeout` 30 s, which a URL's own settings override.
            """)

    // MARK: Retries, pauses and token health

    public static let maxAttempts = Setting(
        "HERALD_MAX_ATTEMPTS", .retries, readers: [.worker], default: .integer(8), range: 1...100,
        summary: "Attempts before a retried delivery is `dead`.")
    public static let retryBase = Setting(
        "HERALD_RETRY_BASE_MS", .retries, readers: [.worker], default: .integer(1_000), range: 1...3_600_000,
        unit: .milliseconds,
        summary: "Backoff cap of the first retry, doubling per attempt up to `HERALD_RETRY_MAX_SECONDS`; full jitter.")
    public static let retryMaxSeconds = Setting(
        "HERALD_RETRY_MAX_SECONDS", .retries, readers: [.worker], default: .integer(3_600), range: 1...604_800,
        unit: .seconds,
        summary: "Ceiling of the backoff; Retry-After is a floor, itself capped by this.")
    /// The lower bound is the first pause (1 s), which `UpstreamPauseConfiguration.validate()` checks.
    public static let upstreamPauseMaxSeconds = Setting(
        "HERALD_UPSTREAM_PAUSE_MAX_SECONDS", .retries, readers: [.worker], default: .integer(60), range: 1...3_600,
        unit: .seconds,
        summary: """
            Longest pause of an upstream that refused Herald's credentials or configuration (first pause 1 s, \
            doubling per failed probe); its rows stay queued with their attempts unspent.
            """)
    public static let tokenStormTokens = Setting(
        "HERALD_TOKEN_STORM_TOKENS", .retries, readers: [.worker], default: .integer(20), range: 2...100_000,
        summary: """
            Distinct tokens refused as bad or foreign (APNs BadDeviceToken, DeviceTokenNotForTopic; FCM \
            INVALID_ARGUMENT about the token) within `HERALD_TOKEN_STORM_WINDOW_SECONDS`, with no success of that \
            upstream in between, that pause the upstream as a setup fault; nothing is retired \
            (docs/runbooks/upstreams.md, *Token health*).
            """)
    public static let tokenStormWindowSeconds = Setting(
        "HERALD_TOKEN_STORM_WINDOW_SECONDS", .retries, readers: [.worker], default: .integer(60), range: 1...86_400,
        unit: .seconds, summary: "The storm's window.")
    /// `TokenVerdictConfiguration.validate()` allows 10 ms up, for tests that set it directly.
    public static let tokenSuspectWaitSeconds = Setting(
        "HERALD_TOKEN_SUSPECT_WAIT_SECONDS", .retries, readers: [.worker], default: .integer(10), range: 1...600,
        unit: .seconds,
        summary: """
            How long a delivery refused as above waits for the same upstream to accept another token (which retires \
            the refused one) before it is tried again later, attempt unspent.
            """)

    // MARK: Background services

    public static let workerMetricsPort = Setting(
        "HERALD_WORKER_METRICS_PORT", .services, readers: [.worker], default: .integer(9090), range: 0...65535,
        summary: "Port of `/healthz`, `/readyz` and `/metrics` (0 picks a free port).")
    public static let workerListen = Setting(
        "HERALD_WORKER_LISTEN", .services, readers: [.worker], default: .flag(true), format: "`0` or `1`",
        summary: "`0`: poll only, for PgBouncer in transaction mode (LISTEN needs a session).")
    public static let activitySweepEnabled = Setting(
        "HERALD_ACTIVITY_SWEEP_ENABLED", .services, readers: [.worker], default: .flag(true), format: "`0` or `1`",
        summary: """
            `0`: this worker does not end Live Activities at their TTL nor send scheduled starts (another worker, \
            or `heraldctl expire` from a scheduler, must).
            """)
    public static let activitySweepInterval = Setting(
        "HERALD_ACTIVITY_SWEEP_INTERVAL_MS", .services, readers: [.worker], default: .integer(1_000),
        range: 50...600_000, unit: .milliseconds,
        summary: """
            How often the activity sweep looks for scheduled starts that came due and activities past their TTL: a \
            start is sent, and an activity ends, within about this long after its time.
            """)
    public static let activitySweepBatch = Setting(
        "HERALD_ACTIVITY_SWEEP_BATCH", .services, readers: [.worker], default: .integer(500), range: 1...10_000,
        summary: "Activities ended per sweep transaction; a sweep runs batches until none is due.")
    public static let liveActivityStartConfirmSeconds = Setting(
        "HERALD_LA_START_CONFIRM_SECONDS", .services, readers: [.worker], default: .integer(120), range: 5...86_400,
        unit: .seconds,
        summary: """
            An iPhone whose Live Activity update token has not come back this long after its push-to-start reached \
            APNs is `unconfirmed` (the start created nothing there) and its held updates are dropped; checked by \
            the activity sweep.
            """)
    public static let queueGaugeInterval = Setting(
        "HERALD_QUEUE_GAUGE_INTERVAL_MS", .services, readers: [.worker], default: .integer(15_000),
        range: 100...600_000, unit: .milliseconds,
        summary: """
            How often the worker refreshes the queue gauges `herald_queue_due_deliveries{lane}` and \
            `herald_queue_oldest_due_seconds{lane}`, one statement on the due partial index; the HPA scales on them \
            (docs/deployment.md).
            """)
    public static let heartbeatInterval = Setting(
        "HERALD_HEARTBEAT_INTERVAL_MS", .services, readers: [.worker], default: .integer(5_000), range: 100...300_000,
        unit: .milliseconds,
        summary: """
            How often the worker writes its heartbeat row: host, version, start, in flight, paused upstreams, \
            claims/s; the console and `heraldctl workers` call a worker lost after three missed beats.
            """)
    public static let version = Setting(
        "HERALD_VERSION", .services, readers: [.worker], default: .text("dev"), format: "any text",
        summary: "The version the worker reports in its heartbeat (set it in the image or manifest).")
    public static let drainSeconds = Setting(
        "HERALD_DRAIN_SECONDS", .services, readers: [.worker], default: .integer(20), range: 0...600, unit: .seconds,
        summary: """
            On SIGTERM the worker exits within this, even with Postgres down: sends in flight get 70% of it, \
            recording their outcomes and releasing the rest the remainder.
            """)

    // MARK: Delivery webhooks

    public static let webhooksEnabled = Setting(
        "HERALD_WEBHOOKS_ENABLED", .webhooks, readers: [.worker], default: .flag(true), format: "`0` or `1`",
        summary: "`0`: this worker sends no delivery webhooks (the other workers do).")
    public static let webhookMaxInFlight = Setting(
        "HERALD_WEBHOOK_MAX_IN_FLIGHT", .webhooks, readers: [.worker], default: .integer(64), range: 1...10_000,
        summary: "Webhook events this worker sends at once.")
    public static let webhookConcurrencyPerPartner = Setting(
        "HERALD_WEBHOOK_CONCURRENCY_PER_PARTNER", .webhooks, readers: [.worker], default: .integer(4),
        range: 1...1_000,
        summary: """
            Of those, at most this many of one partner: a slow or failing endpoint holds no more, the other \
            partners' events keep flowing.
            """)
    public static let webhookPoll = Setting(
        "HERALD_WEBHOOK_POLL_MS", .webhooks, readers: [.worker], default: .integer(1_000), range: 10...60_000,
        unit: .milliseconds,
        summary: """
            How often the webhook sender looks for due events while it finds none: an event goes out within about \
            this long of its cause.
            """)

    // MARK: Broadcast channels

    public static let channelsEnabled = Setting(
        "HERALD_CHANNELS_ENABLED", .channels, readers: [.worker], default: .flag(true), format: "`0` or `1`",
        summary: """
            `0`: this worker leaves iOS 18 broadcast channels (creating them at APNs, broadcasting their changes, \
            deleting them) to the other workers. Only a worker with APNs credentials runs the channel sender.
            """)
    public static let apnsChannelEnvironment = Setting(
        "HERALD_APNS_CHANNEL_ENVIRONMENT", .channels, readers: [.worker], default: .text("production"),
        format: "`production` or `sandbox`",
        summary: """
            The APNs environment broadcast channels are made and broadcast in, the one the followers' app builds \
            run (App Store and TestFlight: production). Broadcasts go to `HERALD_APNS_URL` or \
            `HERALD_APNS_SANDBOX_URL` accordingly.
            """)
    public static let apnsChannelURL = Setting(
        "HERALD_APNS_CHANNEL_URL", .channels, readers: [.worker],
        default: .derived(
            """
            Apple's management host of that environment: `https://api-manage-broadcast.push.apple.com:2196`, \
            `https://api-manage-broadcast.sandbox.push.apple.com:2195`
            """),
        format: "`http(s)://host[:port]`, no path",
        summary: "The channel management API's origin (the simulator's `--channel-port` in tests and the demo).")
    public static let channelMaxInFlight = Setting(
        "HERALD_CHANNEL_MAX_IN_FLIGHT", .channels, readers: [.worker], default: .integer(64), range: 1...10_000,
        summary: """
            Calls to APNs for broadcast channels (create, broadcast, delete) this worker makes at once; one per \
            channel at a time.
            """)
    public static let channelPoll = Setting(
        "HERALD_CHANNEL_POLL_MS", .channels, readers: [.worker], default: .integer(1_000), range: 10...60_000,
        unit: .milliseconds,
        summary: """
            How often the channel sender looks for due channels when no notification woke it: channels reaching \
            their TTL are found on this beat, and every change with `HERALD_WORKER_LISTEN=0`.
            """)

    public static let channelSweepEnabled = Setting(
        "HERALD_CHANNEL_SWEEP_ENABLED", .channels, readers: [.worker], default: .flag(true), format: "`0` or `1`",
        summary: """
            The channel sweep: list the app's channels at APNs (`all-channels`) and delete those Herald has no \
            channel for (a create whose answer was lost), so none counts against Apple's 10,000 unseen. `0` when \
            something besides Herald makes channels for the app in `HERALD_APNS_CHANNEL_ENVIRONMENT`.
            """)
    public static let channelSweepInterval = Setting(
        "HERALD_CHANNEL_SWEEP_SECONDS", .channels, readers: [.worker], default: .integer(3_600), range: 10...86_400,
        unit: .seconds,
        summary: """
            How often the channel sweep lists the app's channels; a create whose outcome is unknown (a timeout, a \
            lost connection) starts one at once. A channel unknown to Herald is deleted when a later sweep, at \
            least two channel leases after, still finds it unknown (a create in flight is recorded by then).
            """)
    public static let channelSweepMaxDeletes = Setting(
        "HERALD_CHANNEL_SWEEP_MAX_DELETES", .channels, readers: [.worker], default: .integer(100), range: 1...10_000,
        summary: "Unknown channels one sweep deletes at most; the next sweep comes sooner while more are left.")
}
