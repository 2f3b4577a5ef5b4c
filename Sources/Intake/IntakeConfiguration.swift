import Foundation
import HTTPFetch
import HTTPServer
import HeraldCore
import Postgres
import ServiceSupport

/// The intake's settings, read from the environment (documented in README.md). Each default is
/// written once, as the property's initial value; `fromEnvironment` only reads overrides.
public struct IntakeConfiguration: Sendable {
    public var databaseURL: String
    public var port: UInt16 = 8080
    /// `/metrics` is served on this port only (`HERALD_INTAKE_METRICS_PORT`; 0 picks a free one), never on `port`.
    public var metricsPort: UInt16 = 9102
    public var adminToken: String
    public var hostToken: String
    /// The tokens before a rotation, still accepted while callers move to the new ones (`HERALD_ADMIN_TOKEN_PREVIOUS`,
    /// `HERALD_HOST_TOKEN_PREVIOUS`; docs/runbooks/credentials.md, *Key and credential rotation*).
    public var adminTokenPrevious: String?
    public var hostTokenPrevious: String?
    public var signingKeys: [String: [UInt8]]
    public var signingKeyID: String
    public var rules = PushRules()
    public var liveActivityRules = LiveActivityRules()
    /// A partner may start a Live Activity only for a user with an in-app session this recent
    /// (HERALD_SESSION_WINDOW_DAYS).
    public var sessionWindowDays = 30
    /// Live Activity budgets shared by every mini-app (`HERALD_LA_*`; the defaults are `LiveActivityBudgets`').
    public var liveActivityBudgets = LiveActivityBudgets()
    /// Pending reminders a user may have of one mini-app (`HERALD_REMINDER_MAX_PENDING`); one more is 429
    /// `too_many_reminders`.
    public var reminderMaxPending = 20
    /// Requests handled at once; each may hold a database connection.
    public var threads = 32
    public var databasePoolSize = 32
    /// Named prepared statements per connection (`HERALD_DB_PREPARED`); off behind a transaction pooler.
    public var databasePreparedStatements = PostgresConnectionOptions().preparedStatements
    public var defaultTenant = "default"
    public var defaultRateLimitPerMinute = 60
    public var defaultRateLimitPerDay = 10_000
    /// How long a partner key lookup is cached: a revoked key is refused within this time.
    public var partnerCacheSeconds = 2.0
    public var logLevel = LogLevel.info
    /// Connections open at once, in all (`HERALD_INTAKE_MAX_CONNECTIONS`).
    public var maxConnections = 1_024
    /// Connections open at once from one client address (`HERALD_INTAKE_MAX_CONNECTIONS_PER_ADDRESS`), so
    /// one client cannot take every slot; 0 = no limit. A request on a connection beyond it is answered 503
    /// `too_many_connections` with `Retry-After`, and the connection closed.
    public var maxConnectionsPerAddress = 256
    /// A connection without traffic for this long is closed (`HERALD_INTAKE_IDLE_TIMEOUT_SECONDS`).
    public var idleTimeoutSeconds = 15
    /// Each request must arrive whole within this long of the connection opening or of its previous answer
    /// (`HERALD_INTAKE_REQUEST_TIMEOUT_SECONDS`): a slow-loris client is cut off.
    public var requestTimeoutSeconds = 20
    /// A request that waited this long for a handler thread is answered 503 `overloaded` with `Retry-After`,
    /// unprocessed (`HERALD_INTAKE_QUEUE_WAIT_LIMIT_MS`; 0 = no limit).
    public var queueWaitLimitMilliseconds = 1_000
    /// `Prefer: wait` requests of one partner held at once (`HERALD_PREFER_WAIT_MAX_PER_PARTNER`); beyond,
    /// the answer is the normal 202 at once. 0 never waits.
    public var preferWaitMaxPerPartner = 50
    /// Under load, the push writer's leader waits up to this long for more pushes before it writes their batch
    /// (`HERALD_INTAKE_BATCH_WINDOW_US`, `IntakeWriter`); a lone push never waits. 0 writes at once.
    public var pushBatchWindow: Duration = .microseconds(250)
    /// Recipient identifiers whose user the intake remembers, to sign a push's deliveries before Postgres resolves
    /// it (`HERALD_INTAKE_RECIPIENT_CACHE_SIZE`, `RecipientCache`; about 200 bytes each). 0 renders every push
    /// that reaches a device after its resolution.
    public var recipientCacheSize = 100_000
    /// After a NOTIFY that tells the workers new deliveries are due, the next waits at least this long
    /// (`HERALD_NOTIFY_INTERVAL_MS`, `DeliveryNotifier`): pushes committed meanwhile share one. 1 ms rather
    /// than 5: at moderate rates every push waits for the next NOTIFY, so a longer interval adds its latency.
    public var notifyInterval: Duration = .milliseconds(1)
    /// Serves the operator console at `/console/` and its API (`HERALD_CONSOLE_ENABLED`, 1 or 0); off, every
    /// console path answers 404.
    public var consoleEnabled = false
    /// A console sign-in lasts this long (`HERALD_CONSOLE_SESSION_HOURS`).
    public var consoleSessionHours = 12
    /// A console session unused for this long is signed out (`HERALD_CONSOLE_IDLE_MINUTES`).
    public var consoleIdleMinutes = 30
    /// Peers whose `X-Forwarded-For` names the client (`HERALD_TRUSTED_PROXIES`, `TrustedProxies`); from any
    /// other peer the header is ignored.
    public var trustedProxies: [IPNetwork] = []
    /// How icon fetches (`iconUrl`) connect: HERALD_WEBHOOK_ALLOW_PRIVATE and HERALD_CA_FILE.
    public var fetch = HTTPFetchConfiguration()

    public init(databaseURL: String, adminToken: String, hostToken: String, signingKeys: [String: [UInt8]],
                signingKeyID: String) {
        self.databaseURL = databaseURL
        self.adminToken = adminToken
        self.hostToken = hostToken
        self.signingKeys = signingKeys
        self.signingKeyID = signingKeyID
    }

    /// Reads and validates every variable; throws naming the first one that is wrong.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError) -> IntakeConfiguration
    {
        let reader = EnvironmentReader(environment: environment)
        let url = try reader.required("HERALD_DATABASE_URL")
        let admin = try reader.secret("HERALD_ADMIN_TOKEN")
        let host = try reader.secret("HERALD_HOST_TOKEN")
        // The push settings (keys, deep-link scheme, recipients, default TTL) are read where
        // `heraldctl backfill sends` reads them too.
        let push = try PushSettings.read(reader)
        var configuration = IntakeConfiguration(
            databaseURL: url, adminToken: admin, hostToken: host, signingKeys: push.signingKeys,
            signingKeyID: push.signingKeyID)
        configuration.rules = push.rules
        configuration.adminTokenPrevious = try reader.optionalSecret("HERALD_ADMIN_TOKEN_PREVIOUS")
        configuration.hostTokenPrevious = try reader.optionalSecret("HERALD_HOST_TOKEN_PREVIOUS")
        try configuration.validateTokens()
        configuration.port = UInt16(try reader.integer("HERALD_INTAKE_PORT", default: Int(configuration.port), range: 0...65535))
        configuration.metricsPort = UInt16(try reader.integer(
            "HERALD_INTAKE_METRICS_PORT", default: Int(configuration.metricsPort), range: 0...65535))
        try configuration.validatePorts()
        // 32/32 measured as fast as any size on 2 cores, and keeps headroom when commits are slow
        // (docs/operations.md, "Threads and pool size").
        configuration.threads = try reader.integer("HERALD_INTAKE_THREADS", default: configuration.threads, range: 1...512)
        configuration.databasePoolSize = try reader.integer("HERALD_DB_POOL_SIZE", default: configuration.databasePoolSize, range: 1...512)
        configuration.databasePreparedStatements = try reader.flag("HERALD_DB_PREPARED",
                                                                   default: configuration.databasePreparedStatements)
        configuration.consoleEnabled = try reader.flag("HERALD_CONSOLE_ENABLED", default: configuration.consoleEnabled)
        configuration.consoleSessionHours = try reader.integer(
            "HERALD_CONSOLE_SESSION_HOURS", default: configuration.consoleSessionHours, range: 1...168)
        configuration.consoleIdleMinutes = try reader.integer(
            "HERALD_CONSOLE_IDLE_MINUTES", default: configuration.consoleIdleMinutes, range: 1...10_080)
        configuration.trustedProxies = try Self.trustedProxies(reader, default: configuration.trustedProxies)
        if let tenant = reader.optional("HERALD_DEFAULT_TENANT") {
            guard Identifiers.isValidExternalID(tenant) else {
                throw ConfigurationError(variable: "HERALD_DEFAULT_TENANT", problem: "must be 1-128 of [A-Za-z0-9._:-]")
            }
            configuration.defaultTenant = tenant
        }
        configuration.defaultRateLimitPerMinute = try reader.integer(
            "HERALD_DEFAULT_RATE_LIMIT_PER_MINUTE", default: configuration.defaultRateLimitPerMinute, range: 1...1_000_000)
        configuration.defaultRateLimitPerDay = try reader.integer(
            "HERALD_DEFAULT_RATE_LIMIT_PER_DAY", default: configuration.defaultRateLimitPerDay, range: 1...100_000_000)
        configuration.maxConnections = try reader.integer(
            "HERALD_INTAKE_MAX_CONNECTIONS", default: configuration.maxConnections, range: 16...100_000)
        configuration.maxConnectionsPerAddress = try reader.integer(
            "HERALD_INTAKE_MAX_CONNECTIONS_PER_ADDRESS", default: configuration.maxConnectionsPerAddress, range: 0...100_000)
        configuration.idleTimeoutSeconds = try reader.integer(
            "HERALD_INTAKE_IDLE_TIMEOUT_SECONDS", default: configuration.idleTimeoutSeconds, range: 1...3_600)
        configuration.requestTimeoutSeconds = try reader.integer(
            "HERALD_INTAKE_REQUEST_TIMEOUT_SECONDS", default: configuration.requestTimeoutSeconds, range: 1...3_600)
        configuration.queueWaitLimitMilliseconds = try reader.integer(
            "HERALD_INTAKE_QUEUE_WAIT_LIMIT_MS", default: configuration.queueWaitLimitMilliseconds, range: 0...60_000)
        configuration.sessionWindowDays = try reader.integer(
            "HERALD_SESSION_WINDOW_DAYS", default: configuration.sessionWindowDays, range: 1...3_650)
        configuration.liveActivityBudgets = try Self.liveActivityBudgets(reader, default: configuration.liveActivityBudgets)
        configuration.reminderMaxPending = try reader.integer(
            "HERALD_REMINDER_MAX_PENDING", default: configuration.reminderMaxPending, range: 1...1_000)
        configuration.preferWaitMaxPerPartner = try reader.integer(
            "HERALD_PREFER_WAIT_MAX_PER_PARTNER", default: configuration.preferWaitMaxPerPartner, range: 0...10_000)
        configuration.notifyInterval = .milliseconds(try reader.integer(
            "HERALD_NOTIFY_INTERVAL_MS", default: Int(configuration.notifyInterval / .milliseconds(1)), range: 0...1_000))
        configuration.pushBatchWindow = .microseconds(try reader.integer(
            "HERALD_INTAKE_BATCH_WINDOW_US", default: Int(configuration.pushBatchWindow / .microseconds(1)),
            range: 0...10_000))
        configuration.recipientCacheSize = try reader.integer(
            "HERALD_INTAKE_RECIPIENT_CACHE_SIZE", default: configuration.recipientCacheSize, range: 0...10_000_000)
        configuration.fetch = try HTTPFetchConfiguration.from(reader)
        if let level = reader.optional("HERALD_LOG_LEVEL") {
            guard let parsed = LogLevel(rawValue: level) else {
                throw ConfigurationError(variable: "HERALD_LOG_LEVEL", problem: "must be debug, info, warning or error")
            }
            configuration.logLevel = parsed
        }
        return configuration
    }
}

extension IntakeConfiguration {
    /// `HERALD_LA_MAX_ACTIVE_PER_USER`, `HERALD_LA_STARTS_PER_USER_HOUR`, `HERALD_LA_STARTS_PER_USER_APP_HOUR` and
    /// `HERALD_LA_ALERTED_UPDATES_PER_HOUR` (and `HERALD_LA_OPEN_CHANNELS_PER_MINI_APP`) over `fallback`. A mini-app's hourly starts above the user's would
    /// never be reached, so such a pair is refused rather than silently meaning less than it says.
    static func liveActivityBudgets(_ reader: EnvironmentReader, default fallback: LiveActivityBudgets)
        throws(ConfigurationError) -> LiveActivityBudgets {
        var budgets = fallback
        budgets.maxActivePerUser = try reader.integer(
            "HERALD_LA_MAX_ACTIVE_PER_USER", default: budgets.maxActivePerUser, range: LiveActivityBudgets.maxActiveRange)
        budgets.startsPerUserHour = try reader.integer(
            "HERALD_LA_STARTS_PER_USER_HOUR", default: budgets.startsPerUserHour, range: LiveActivityBudgets.startsRange)
        budgets.startsPerUserAppHour = try reader.integer(
            "HERALD_LA_STARTS_PER_USER_APP_HOUR", default: budgets.startsPerUserAppHour,
            range: LiveActivityBudgets.startsRange)
        budgets.alertedUpdatesPerHour = try reader.integer(
            "HERALD_LA_ALERTED_UPDATES_PER_HOUR", default: budgets.alertedUpdatesPerHour,
            range: LiveActivityBudgets.alertedUpdatesRange)
        budgets.openChannelsPerMiniApp = try reader.integer(
            "HERALD_LA_OPEN_CHANNELS_PER_MINI_APP", default: budgets.openChannelsPerMiniApp,
            range: LiveActivityBudgets.openChannelsRange)
        guard budgets.startsPerUserAppHour <= budgets.startsPerUserHour else {
            throw ConfigurationError(
                variable: "HERALD_LA_STARTS_PER_USER_APP_HOUR",
                problem: "must not exceed HERALD_LA_STARTS_PER_USER_HOUR (\(budgets.startsPerUserHour))")
        }
        return budgets
    }

    /// Every admin and host token, current or previous, must differ: a value the two roles shared would make a
    /// host credential an admin credential (and the reverse), and a previous token equal to the current one is a
    /// rotation not made.
    public func validateTokens() throws(ConfigurationError) {
        let tokens: [(variable: String, value: String?)] = [
            ("HERALD_ADMIN_TOKEN", adminToken), ("HERALD_ADMIN_TOKEN_PREVIOUS", adminTokenPrevious),
            ("HERALD_HOST_TOKEN", hostToken), ("HERALD_HOST_TOKEN_PREVIOUS", hostTokenPrevious),
        ]
        for (index, token) in tokens.enumerated() {
            guard let value = token.value else { continue }
            if let earlier = tokens[..<index].first(where: { $0.value == value }) {
                throw ConfigurationError(variable: token.variable, problem: "must differ from \(earlier.variable)")
            }
        }
    }
}

extension IntakeConfiguration {
    /// The metrics port must differ from the API's (0 for both picks two free ports).
    public func validatePorts() throws(ConfigurationError) {
        guard metricsPort == 0 || metricsPort != port else {
            throw ConfigurationError(
                variable: "HERALD_INTAKE_METRICS_PORT", problem: "must differ from HERALD_INTAKE_PORT")
        }
    }

    /// The options of every connection the intake opens, named `applicationName` in pg_stat_activity.
    public func connectionOptions(_ applicationName: String) -> PostgresConnectionOptions {
        PostgresConnectionOptions(applicationName: applicationName, preparedStatements: databasePreparedStatements)
    }
}
