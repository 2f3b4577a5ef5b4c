import APNs
import FCM
import Foundation
import HTTPFetch
import HeraldCore
import Postgres
import ServiceSupport

/// The worker's settings, read from the environment: the upstream clients' configurations and each
/// background service's (WorkerServiceConfigurations.swift). Each name, default and range is the catalog's
/// (`Settings`, docs/configuration.md); `fromEnvironment` only reads overrides, and `validate()` runs every part's
/// rules once.
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
    public var retry = RetryPolicy(
        maxAttempts: Settings.maxAttempts.integer, baseDelay: Settings.retryBase.duration,
        maxDelay: Settings.retryMaxSeconds.duration)
    public var webhooks = WebhookSenderConfiguration()
    public var channels = ChannelSenderConfiguration()
    /// HERALD_WORKER_METRICS_PORT.
    public var metricsPort = UInt16(Settings.workerMetricsPort.integer)
    /// On SIGTERM: everything (in-flight sends, recording, releasing) ends within this (HERALD_DRAIN_SECONDS).
    public var drainTimeout = Settings.drainSeconds.duration
    /// Server-side statement_timeout of the worker's connections (HERALD_STATEMENT_TIMEOUT_MS).
    public var statementTimeout = Settings.statementTimeout.duration
    /// Named prepared statements per connection (`HERALD_DB_PREPARED`); off behind a transaction pooler.
    public var databasePreparedStatements = Settings.databasePrepared.flag
    public var logLevel = LogLevel(rawValue: Settings.logLevel.text)!
    /// The version this worker reports in its heartbeat (HERALD_VERSION).
    public var version = Settings.version.text
    /// This process in `deliveries.leased_by` and the logs.
    public var workerID = WorkerConfiguration.defaultWorkerID()

    /// The longest one request can take in an upstream client (its timeout counts from its
    /// submission, queue wait included). Longer chains (a resend after a token renewal, an FCM
    /// access-token exchange first) are covered by the lease extender.
    public var longestRequest: Duration {
        max(apns?.requestTimeout ?? .zero, fcm?.requestTimeout ?? .zero)
    }

    /// Every part's rules, and the rules between parts.
    public func validate() throws(ConfigurationError) {
        guard !databaseURL.isEmpty else {
            throw ConfigurationError(variable: Settings.databaseURL.name, problem: "is required")
        }
        guard apns != nil || fcm != nil else {
            throw ConfigurationError(
                variable: Settings.apnsKeyFile.name,
                problem: "set it or \(Settings.fcmCredentialsFile.name): "
                    + "the worker has no upstream")
        }
        do { try apns?.validate() } catch {
            throw ConfigurationError(variable: Self.variable(error.setting), problem: error.message)
        }
        do { try fcm?.validate() } catch {
            throw ConfigurationError(variable: Self.variable(error.setting), problem: error.message)
        }
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
        try check(retry.maxAttempts, Settings.maxAttempts)
        try check(retry.baseDelay, Settings.retryBase)
        try check(retry.maxDelay, Settings.retryMaxSeconds)
        try check(drainTimeout, Settings.drainSeconds)
        try check(statementTimeout, Settings.statementTimeout)
        // A lease shorter than one request would let another worker claim a row still being sent.
        // The lease extender renews the leases of longer sends, but only while the database answers.
        guard Duration.seconds(claimer.leaseSeconds) > longestRequest else {
            throw ConfigurationError(
                variable: Settings.leaseSeconds.name,
                problem: "must be longer than the upstream request timeout "
                    + "(\(Settings.upstreamTimeout.name), \(longestRequest))")
        }
    }

    /// Reads every variable and validates the result; throws naming the first one that is wrong.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError) -> WorkerConfiguration
    {
        let reader = EnvironmentReader(environment: environment)
        var configuration = WorkerConfiguration(databaseURL: try reader.required(Settings.databaseURL))
        let caFile = reader.optional(Settings.caFile)
        if let caFile { try requireReadable(caFile, variable: Settings.caFile.name) }
        if let keyFile = reader.optional(Settings.apnsKeyFile) {
            try requireReadable(keyFile, variable: Settings.apnsKeyFile.name)
            configuration.apns = APNsConfiguration(
                keyFile: keyFile, keyID: try reader.required(Settings.apnsKeyID),
                teamID: try reader.required(Settings.apnsTeamID), topic: try reader.required(Settings.apnsTopic),
                productionURL: origin(reader.optional(Settings.apnsURL)) ?? Settings.apnsURL.text,
                sandboxURL: origin(reader.optional(Settings.apnsSandboxURL)) ?? Settings.apnsSandboxURL.text,
                caFile: caFile)
            configuration.apns?.sandboxKey = try environmentKey(
                reader, file: Settings.apnsSandboxKeyFile, id: Settings.apnsSandboxKeyID)
            configuration.apns?.productionKey = try environmentKey(
                reader, file: Settings.apnsProductionKeyFile, id: Settings.apnsProductionKeyID)
        } else {
            // An environment's key replaces the shared key for that environment: alone it would sign nothing.
            let environmentKeys = [
                Settings.apnsSandboxKeyFile, Settings.apnsSandboxKeyID, Settings.apnsProductionKeyFile,
                Settings.apnsProductionKeyID,
            ]
            for setting in environmentKeys where reader.optional(setting) != nil {
                throw ConfigurationError(
                    variable: setting.name,
                    problem: "needs \(Settings.apnsKeyFile.name) (the key of the other environment)")
            }
        }
        if let credentials = reader.optional(Settings.fcmCredentialsFile) {
            try requireReadable(credentials, variable: Settings.fcmCredentialsFile.name)
            configuration.fcm = FCMConfiguration(
                credentialsFile: credentials, url: origin(reader.optional(Settings.fcmURL)) ?? Settings.fcmURL.text,
                caFile: caFile)
        }
        // APNs' and FCM's own validation checks the range, naming the variable (`variable(_:)`).
        let connections = try reader.integer(
            Settings.upstreamConnections.name,
            default: Settings.upstreamConnections.integer)
        configuration.apns?.connectionsPerEnvironment = connections
        configuration.fcm?.connections = connections
        let requestTimeout = try reader.duration(Settings.upstreamTimeout)
        configuration.apns?.requestTimeout = requestTimeout
        configuration.fcm?.requestTimeout = requestTimeout

        let port = try reader.integer(Settings.workerMetricsPort.name, default: Int(configuration.metricsPort))
        guard Settings.workerMetricsPort.bounds.contains(port) else {
            throw ConfigurationError(
                variable: Settings.workerMetricsPort.name,
                problem: "must be a port number (0-65535)")
        }
        configuration.metricsPort = UInt16(port)
        // Read without their ranges: each part's `validate()` checks them, for values set in code too.
        for (setting, field) in overrides { try reader.override(setting, into: field, of: &configuration) }
        configuration.completer.maxBatch = max(configuration.completer.maxBatch, configuration.claimer.batchSize)
        configuration.channels.environment =
            try reader.choice(Settings.apnsChannelEnvironment, problem: "must be production or sandbox")
            ?? configuration.channels.environment
        configuration.channels.managementURL = origin(reader.optional(Settings.apnsChannelURL))
        configuration.webhooks.fetch = try HTTPFetchConfiguration.from(reader)
        // A channel's lease outlasts two tries of one call (a resend after a provider-token renewal), so no other
        // worker calls APNs for the channel meanwhile, whatever HERALD_UPSTREAM_TIMEOUT_MS allows.
        configuration.channels.leaseSeconds = max(
            configuration.channels.leaseSeconds,
            Int(configuration.longestRequest / .seconds(1) * 2) + 1)
        configuration.channels.sweep.confirmation = .seconds(configuration.channels.leaseSeconds * 2)
        configuration.databasePreparedStatements = try reader.flag(Settings.databasePrepared)
        configuration.logLevel = try reader.logLevel(default: configuration.logLevel)
        configuration.version = reader.optional(Settings.version) ?? configuration.version
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
        case .sandboxKeyFile: return "HERALD_APNS_SANDBOX_KEY_FILE"
        case .sandboxKeyID: return "HERALD_APNS_SANDBOX_KEY_ID"
        case .productionKeyFile: return "HERALD_APNS_PRODUCTION_KEY_FILE"
        case .productionKeyID: return "HERALD_APNS_PRODUCTION_KEY_ID"
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

    /// One environment's own key: nil when neither setting is given. A key id without its file, or a file without
    /// its id, is an error naming the missing one.
    private static func environmentKey(_ reader: EnvironmentReader, file: Setting, id: Setting)
        throws(ConfigurationError) -> APNsKey?
    {
        guard let keyFile = reader.optional(file) else {
            if reader.optional(id) != nil {
                throw ConfigurationError(variable: file.name, problem: "is required with \(id.name)")
            }
            return nil
        }
        try requireReadable(keyFile, variable: file.name)
        return APNsKey(file: keyFile, id: try reader.required(id))
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
        PostgresConnectionOptions(
            applicationName: applicationName, statementTimeout: statementTimeout,
            preparedStatements: databasePreparedStatements)
    }
}
