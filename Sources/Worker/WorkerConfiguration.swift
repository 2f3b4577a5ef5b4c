import APNs
import FCM
import Foundation
import HTTPFetch
import HeraldCore
import Postgres
import ServiceSupport

/// The worker's settings, read from the environment (documented in README.md): the upstream
/// clients' configurations and each background service's (WorkerServiceConfigurations.swift).
/// Defaults live in those types; `fromEnvironment` only reads overrides, and `validate()` runs
/// every part's rules once.
public struct WorkerConfiguration: Sendable {
    public var databaseURL: String
    /// APNs token authentication; the worker sends to APNs only when it is configured.
    public var apns: APNsConfiguration?
    /// FCM HTTP v1; the worker sends to FCM only when it is configured.
    public var fcm: FCMConfiguration?
    public var claimer = ClaimerConfiguration()
    public var completer = CompleterConfiguration()
    public var rescuer = RescuerConfiguration()
    public var leaseExtender = LeaseExtenderConfiguration()
    public var sampler = QueueSamplerConfiguration()
    public var queueGauge = QueueGaugeConfiguration()
    public var heartbeat = HeartbeatConfiguration()
    public var activitySweeper = ActivitySweeperConfiguration()
    public var listener = ListenerConfiguration()
    public var pauses = UpstreamPauseConfiguration()
    public var tokenVerdicts = TokenVerdictConfiguration()
    public var retry = RetryPolicy()
    public var webhooks = WebhookSenderConfiguration()
    public var channels = ChannelSenderConfiguration()
    /// HERALD_WORKER_METRICS_PORT.
    public var metricsPort: UInt16 = 9090
    /// On SIGTERM: everything (in-flight sends, recording, releasing) ends within this (HERALD_DRAIN_SECONDS).
    public var drainTimeout: Duration = .seconds(20)
    /// Server-side statement_timeout of the worker's connections (HERALD_STATEMENT_TIMEOUT_MS).
    public var statementTimeout: Duration = .seconds(30)
    /// Named prepared statements per connection (`HERALD_DB_PREPARED`); off behind a transaction pooler.
    public var databasePreparedStatements = PostgresConnectionOptions().preparedStatements
    public var logLevel = LogLevel.info
    /// This process in `deliveries.leased_by` and the logs.
    public var workerID = WorkerConfiguration.defaultWorkerID()

    public init(databaseURL: String) {
        self.databaseURL = databaseURL
    }

    /// The longest one request can take in an upstream client (its timeout counts from its
    /// submission, queue wait included). Longer chains (a resend after a token renewal, an FCM
    /// access-token exchange first) are covered by the lease extender.
    public var longestRequest: Duration {
        max(apns?.requestTimeout ?? .zero, fcm?.requestTimeout ?? .zero)
    }

    /// Every part's rules, and the rules between parts.
    public func validate() throws(ConfigurationError) {
        guard !databaseURL.isEmpty else { throw ConfigurationError(variable: "HERALD_DATABASE_URL", problem: "is required") }
        guard apns != nil || fcm != nil else {
            throw ConfigurationError(variable: "HERALD_APNS_KEY_FILE",
                                     problem: "set it or HERALD_FCM_CREDENTIALS_FILE: the worker has no upstream")
        }
        do { try apns?.validate() } catch { throw ConfigurationError(variable: Self.variable(error.setting), problem: error.message) }
        do { try fcm?.validate() } catch { throw ConfigurationError(variable: Self.variable(error.setting), problem: error.message) }
        try claimer.validate()
        try completer.validate()
        try rescuer.validate()
        try leaseExtender.validate()
        try sampler.validate()
        try queueGauge.validate()
        try heartbeat.validate()
        try activitySweeper.validate()
        try listener.validate()
        try pauses.validate()
        try tokenVerdicts.validate()
        try webhooks.validate()
        try channels.validate()
        try check(retry.maxAttempts, 1...100, "HERALD_MAX_ATTEMPTS")
        try check(retry.baseDelay, .milliseconds(1)...(.seconds(3600)), "HERALD_RETRY_BASE_MS")
        try check(retry.maxDelay, .seconds(1)...(.seconds(604_800)), "HERALD_RETRY_MAX_SECONDS")
        try check(drainTimeout, .zero...(.seconds(600)), "HERALD_DRAIN_SECONDS")
        try check(statementTimeout, .milliseconds(100)...(.seconds(3600)), "HERALD_STATEMENT_TIMEOUT_MS")
        // A lease shorter than one request would let another worker claim a row still being sent.
        // The lease extender renews the leases of longer sends, but only while the database answers.
        guard Duration.seconds(claimer.leaseSeconds) > longestRequest else {
            throw ConfigurationError(
                variable: "HERALD_LEASE_SECONDS",
                problem: "must be longer than the upstream request timeout (HERALD_UPSTREAM_TIMEOUT_MS, \(longestRequest))")
        }
    }

    /// Reads every variable and validates the result; throws naming the first one that is wrong.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError) -> WorkerConfiguration
    {
        let reader = EnvironmentReader(environment: environment)
        var configuration = WorkerConfiguration(databaseURL: try reader.required("HERALD_DATABASE_URL"))
        let caFile = reader.optional("HERALD_CA_FILE")
        if let caFile { try requireReadable(caFile, variable: "HERALD_CA_FILE") }
        if let keyFile = reader.optional("HERALD_APNS_KEY_FILE") {
            try requireReadable(keyFile, variable: "HERALD_APNS_KEY_FILE")
            var apns = APNsConfiguration(keyFile: keyFile, keyID: try reader.required("HERALD_APNS_KEY_ID"),
                                         teamID: try reader.required("HERALD_APNS_TEAM_ID"),
                                         topic: try reader.required("HERALD_APNS_TOPIC"), caFile: caFile)
            apns.productionURL = origin(reader.optional("HERALD_APNS_URL")) ?? apns.productionURL
            apns.sandboxURL = origin(reader.optional("HERALD_APNS_SANDBOX_URL")) ?? apns.sandboxURL
            configuration.apns = apns
        }
        if let credentials = reader.optional("HERALD_FCM_CREDENTIALS_FILE") {
            try requireReadable(credentials, variable: "HERALD_FCM_CREDENTIALS_FILE")
            var fcm = FCMConfiguration(credentialsFile: credentials, caFile: caFile)
            fcm.url = origin(reader.optional("HERALD_FCM_URL")) ?? fcm.url
            configuration.fcm = fcm
        }
        let connections = try reader.integer("HERALD_UPSTREAM_CONNECTIONS",
                                             default: configuration.apns?.connectionsPerEnvironment
                                                 ?? configuration.fcm?.connections ?? 3)
        configuration.apns?.connectionsPerEnvironment = connections
        configuration.fcm?.connections = connections
        if let timeout = reader.optional("HERALD_UPSTREAM_TIMEOUT_MS") {
            guard let milliseconds = Int(timeout), (100...120_000).contains(milliseconds) else {
                throw ConfigurationError(variable: "HERALD_UPSTREAM_TIMEOUT_MS", problem: "must be a whole number in 100...120000")
            }
            configuration.apns?.requestTimeout = .milliseconds(milliseconds)
            configuration.fcm?.requestTimeout = .milliseconds(milliseconds)
        }

        let port = try reader.integer("HERALD_WORKER_METRICS_PORT", default: Int(configuration.metricsPort))
        guard (0...65535).contains(port) else {
            throw ConfigurationError(variable: "HERALD_WORKER_METRICS_PORT", problem: "must be a port number (0-65535)")
        }
        configuration.metricsPort = UInt16(port)
        var claimer = configuration.claimer
        claimer.leaseSeconds = try reader.integer("HERALD_LEASE_SECONDS", default: claimer.leaseSeconds)
        claimer.batchSize = try reader.integer("HERALD_BATCH_SIZE", default: claimer.batchSize)
        claimer.maxInFlight = try reader.integer("HERALD_WORKER_MAX_IN_FLIGHT", default: claimer.maxInFlight)
        claimer.maxBulkInFlight = try reader.integer("HERALD_WORKER_MAX_BULK_IN_FLIGHT", default: claimer.maxBulkInFlight)
        claimer.pollInterval = try milliseconds(reader, "HERALD_POLL_INTERVAL_MS", default: claimer.pollInterval)
        claimer.minimumClaimSpacing = try milliseconds(reader, "HERALD_CLAIM_SPACING_MS",
                                                       default: claimer.minimumClaimSpacing)
        claimer.userMaxPushesPerHour = try reader.integer("HERALD_USER_MAX_PUSHES_PER_HOUR",
                                                          default: claimer.userMaxPushesPerHour)
        configuration.claimer = claimer
        configuration.completer.maxBatch = max(configuration.completer.maxBatch, claimer.batchSize)
        configuration.completer.minimumInterval = try milliseconds(reader, "HERALD_COMPLETION_INTERVAL_MS",
                                                                   default: configuration.completer.minimumInterval)
        configuration.retry.maxAttempts = try reader.integer("HERALD_MAX_ATTEMPTS", default: configuration.retry.maxAttempts)
        configuration.retry.baseDelay = try milliseconds(reader, "HERALD_RETRY_BASE_MS", default: configuration.retry.baseDelay)
        configuration.retry.maxDelay = try seconds(reader, "HERALD_RETRY_MAX_SECONDS", default: configuration.retry.maxDelay)
        configuration.pauses.maximum = try seconds(reader, "HERALD_UPSTREAM_PAUSE_MAX_SECONDS",
                                                   default: configuration.pauses.maximum)
        configuration.tokenVerdicts.stormTokens = try reader.integer("HERALD_TOKEN_STORM_TOKENS",
                                                                     default: configuration.tokenVerdicts.stormTokens)
        configuration.tokenVerdicts.stormWindow = try seconds(reader, "HERALD_TOKEN_STORM_WINDOW_SECONDS",
                                                              default: configuration.tokenVerdicts.stormWindow)
        configuration.tokenVerdicts.wait = try seconds(reader, "HERALD_TOKEN_SUSPECT_WAIT_SECONDS",
                                                       default: configuration.tokenVerdicts.wait)
        let listen = try reader.integer("HERALD_WORKER_LISTEN", default: configuration.listener.enabled ? 1 : 0)
        guard listen == 0 || listen == 1 else {
            throw ConfigurationError(variable: "HERALD_WORKER_LISTEN", problem: "must be 0 or 1")
        }
        configuration.listener.enabled = listen == 1
        let sweep = try reader.integer("HERALD_ACTIVITY_SWEEP_ENABLED", default: configuration.activitySweeper.enabled ? 1 : 0)
        guard sweep == 0 || sweep == 1 else {
            throw ConfigurationError(variable: "HERALD_ACTIVITY_SWEEP_ENABLED", problem: "must be 0 or 1")
        }
        configuration.activitySweeper.enabled = sweep == 1
        configuration.activitySweeper.interval = try milliseconds(reader, "HERALD_ACTIVITY_SWEEP_INTERVAL_MS",
                                                                  default: configuration.activitySweeper.interval)
        configuration.activitySweeper.batchSize = try reader.integer("HERALD_ACTIVITY_SWEEP_BATCH",
                                                                     default: configuration.activitySweeper.batchSize)
        configuration.activitySweeper.startConfirmation = try seconds(
            reader, "HERALD_LA_START_CONFIRM_SECONDS", default: configuration.activitySweeper.startConfirmation)
        configuration.queueGauge.interval = try milliseconds(reader, "HERALD_QUEUE_GAUGE_INTERVAL_MS",
                                                             default: configuration.queueGauge.interval)
        configuration.heartbeat.interval = try milliseconds(reader, "HERALD_HEARTBEAT_INTERVAL_MS",
                                                            default: configuration.heartbeat.interval)
        let webhooks = try reader.integer("HERALD_WEBHOOKS_ENABLED", default: configuration.webhooks.enabled ? 1 : 0)
        guard webhooks == 0 || webhooks == 1 else {
            throw ConfigurationError(variable: "HERALD_WEBHOOKS_ENABLED", problem: "must be 0 or 1")
        }
        configuration.webhooks.enabled = webhooks == 1
        configuration.webhooks.maxInFlight = try reader.integer("HERALD_WEBHOOK_MAX_IN_FLIGHT",
                                                                default: configuration.webhooks.maxInFlight)
        configuration.webhooks.perPartner = try reader.integer("HERALD_WEBHOOK_CONCURRENCY_PER_PARTNER",
                                                               default: configuration.webhooks.perPartner)
        configuration.webhooks.pollInterval = try milliseconds(reader, "HERALD_WEBHOOK_POLL_MS",
                                                               default: configuration.webhooks.pollInterval)
        configuration.webhooks.fetch = try HTTPFetchConfiguration.from(reader)
        let channels = try reader.integer("HERALD_CHANNELS_ENABLED", default: configuration.channels.enabled ? 1 : 0)
        guard channels == 0 || channels == 1 else {
            throw ConfigurationError(variable: "HERALD_CHANNELS_ENABLED", problem: "must be 0 or 1")
        }
        configuration.channels.enabled = channels == 1
        if let environment = reader.optional("HERALD_APNS_CHANNEL_ENVIRONMENT") {
            guard let parsed = APNsEnvironment(rawValue: environment) else {
                throw ConfigurationError(variable: "HERALD_APNS_CHANNEL_ENVIRONMENT", problem: "must be production or sandbox")
            }
            configuration.channels.environment = parsed
        }
        configuration.channels.managementURL = origin(reader.optional("HERALD_APNS_CHANNEL_URL"))
        configuration.channels.maxInFlight = try reader.integer("HERALD_CHANNEL_MAX_IN_FLIGHT",
                                                                default: configuration.channels.maxInFlight)
        configuration.channels.pollInterval = try milliseconds(reader, "HERALD_CHANNEL_POLL_MS",
                                                               default: configuration.channels.pollInterval)
        // A channel's lease outlasts two tries of one call (a resend after a provider-token renewal), so no other
        // worker calls APNs for the channel meanwhile, whatever HERALD_UPSTREAM_TIMEOUT_MS allows.
        configuration.channels.leaseSeconds = max(configuration.channels.leaseSeconds,
                                                  Int(configuration.longestRequest / .seconds(1) * 2) + 1)
        configuration.drainTimeout = try seconds(reader, "HERALD_DRAIN_SECONDS", default: configuration.drainTimeout)
        configuration.statementTimeout = try milliseconds(reader, "HERALD_STATEMENT_TIMEOUT_MS",
                                                          default: configuration.statementTimeout)
        configuration.databasePreparedStatements = try reader.flag("HERALD_DB_PREPARED",
                                                                   default: configuration.databasePreparedStatements)
        if let level = reader.optional("HERALD_LOG_LEVEL") {
            guard let parsed = LogLevel(rawValue: level) else {
                throw ConfigurationError(variable: "HERALD_LOG_LEVEL", problem: "must be debug, info, warning or error")
            }
            configuration.logLevel = parsed
        }
        try configuration.validate()
        return configuration
    }

    /// `host:pid:random`, unique per process even when containers share a hostname.
    public static func defaultWorkerID() -> String {
        let random = (0..<3).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return "\(ProcessInfo.processInfo.hostName):\(getpid()):\(random)"
    }

    /// The variable behind each APNs and FCM setting (their errors name the setting).
    static func variable(_ setting: APNsConfigurationError.Setting) -> String {
        switch setting {
        case .productionURL: return "HERALD_APNS_URL"
        case .sandboxURL: return "HERALD_APNS_SANDBOX_URL"
        case .keyFile: return "HERALD_APNS_KEY_FILE"
        case .keyID: return "HERALD_APNS_KEY_ID"
        case .teamID: return "HERALD_APNS_TEAM_ID"
        case .topic: return "HERALD_APNS_TOPIC"
        case .caFile: return "HERALD_CA_FILE"
        case .connectionsPerEnvironment: return "HERALD_UPSTREAM_CONNECTIONS"
        case .requestTimeout, .connectTimeout: return "HERALD_APNS_*"
        }
    }

    static func variable(_ setting: FCMConfigurationError.Setting) -> String {
        switch setting {
        case .url: return "HERALD_FCM_URL"
        case .credentialsFile: return "HERALD_FCM_CREDENTIALS_FILE"
        case .caFile: return "HERALD_CA_FILE"
        case .connections: return "HERALD_UPSTREAM_CONNECTIONS"
        default: return "HERALD_FCM_*"
        }
    }

    /// An origin as given, without a trailing slash (the clients' validation checks the rest).
    private static func origin(_ value: String?) -> String? {
        guard let value else { return nil }
        return value.hasSuffix("/") ? String(value.dropLast()) : value
    }

    private static func milliseconds(_ reader: EnvironmentReader, _ name: String, default fallback: Duration)
        throws(ConfigurationError) -> Duration {
        .milliseconds(try reader.integer(name, default: Int(fallback / .milliseconds(1))))
    }

    private static func seconds(_ reader: EnvironmentReader, _ name: String, default fallback: Duration)
        throws(ConfigurationError) -> Duration {
        .seconds(try reader.integer(name, default: Int(fallback / .seconds(1))))
    }

    private static func requireReadable(_ path: String, variable: String) throws(ConfigurationError) {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ConfigurationError(variable: variable, problem: "names no readable file")
        }
    }
}

extension WorkerConfiguration {
    /// The options of a connection the worker opens outside its DatabaseSessions (webhooks, drain),
    /// named `applicationName` in pg_stat_activity.
    public func connectionOptions(_ applicationName: String) -> PostgresConnectionOptions {
        PostgresConnectionOptions(applicationName: applicationName, statementTimeout: statementTimeout,
                                  preparedStatements: databasePreparedStatements)
    }
}
