import Foundation
import HTTPFetch
import HTTPServer
import HeraldCore
import Postgres
import ServiceSupport

/// The intake's settings, read from the environment. Each name, default and range is the catalog's
/// (`Settings`, docs/configuration.md); `fromEnvironment` only reads overrides.
public struct IntakeConfiguration: Sendable {
    public var databaseURL: String
    public var port = UInt16(Settings.intakePort.integer)
    /// `/metrics` is served on this port only (`HERALD_INTAKE_METRICS_PORT`; 0 picks a free one), never on `port`.
    public var metricsPort = UInt16(Settings.intakeMetricsPort.integer)
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
    public var sessionWindowDays = Settings.sessionWindowDays.integer
    /// Live Activity budgets shared by every mini-app (`HERALD_LA_*`; the defaults are `LiveActivityBudgets`').
    public var liveActivityBudgets = LiveActivityBudgets()
    /// Pending reminders a user may have of one mini-app (`HERALD_REMINDER_MAX_PENDING`); one more is 429
    /// `too_many_reminders`.
    public var reminderMaxPending = Settings.reminderMaxPending.integer
    /// How long an uploaded media file is served (`HERALD_MEDIA_TTL_HOURS`).
    public var mediaLifetimeHours = Settings.mediaTTLHours.integer
    /// Live media files one partner may hold (`HERALD_MEDIA_MAX_PER_PARTNER`).
    public var mediaMaxPerPartner = Settings.mediaMaxPerPartner.integer
    /// Requests handled at once; each may hold a database connection.
    public var threads = Settings.intakeThreads.integer
    public var databasePoolSize = Settings.databasePoolSize.integer
    /// Named prepared statements per connection (`HERALD_DB_PREPARED`); off behind a transaction pooler.
    public var databasePreparedStatements = Settings.databasePrepared.flag
    public var defaultTenant = Settings.defaultTenant.text
    public var defaultRateLimitPerMinute = Settings.defaultRateLimitPerMinute.integer
    public var defaultRateLimitPerDay = Settings.defaultRateLimitPerDay.integer
    /// How long a partner key lookup is cached: a revoked key is refused within this time.
    public var partnerCacheSeconds = 2.0
    public var logLevel = LogLevel(rawValue: Settings.logLevel.text)!
    /// Connections open at once, in all (`HERALD_INTAKE_MAX_CONNECTIONS`).
    public var maxConnections = Settings.intakeMaxConnections.integer
    /// Connections open at once from one client address (`HERALD_INTAKE_MAX_CONNECTIONS_PER_ADDRESS`), so
    /// one client cannot take every slot; 0 = no limit. A request on a connection beyond it is answered 503
    /// `too_many_connections` with `Retry-After`, and the connection closed.
    public var maxConnectionsPerAddress = Settings.intakeMaxConnectionsPerAddress.integer
    /// A connection without traffic for this long is closed (`HERALD_INTAKE_IDLE_TIMEOUT_SECONDS`).
    public var idleTimeoutSeconds = Settings.intakeIdleTimeoutSeconds.integer
    /// Each request must arrive whole within this long of the connection opening or of its previous answer
    /// (`HERALD_INTAKE_REQUEST_TIMEOUT_SECONDS`): a slow-loris client is cut off.
    public var requestTimeoutSeconds = Settings.intakeRequestTimeoutSeconds.integer
    /// A request that waited this long for a handler thread is answered 503 `overloaded` with `Retry-After`,
    /// unprocessed (`HERALD_INTAKE_QUEUE_WAIT_LIMIT_MS`; 0 = no limit).
    public var queueWaitLimitMilliseconds = Settings.intakeQueueWaitLimit.integer
    /// `Prefer: wait` requests of one partner held at once (`HERALD_PREFER_WAIT_MAX_PER_PARTNER`); beyond,
    /// the answer is the normal 202 at once. 0 never waits.
    public var preferWaitMaxPerPartner = Settings.preferWaitMaxPerPartner.integer
    /// Under load, the push writer's leader waits up to this long for more pushes before it writes their batch
    /// (`HERALD_INTAKE_BATCH_WINDOW_US`, `IntakeWriter`); a lone push never waits. 0 writes at once.
    public var pushBatchWindow = Settings.intakeBatchWindow.duration
    /// Recipient identifiers whose user the intake remembers, to sign a push's deliveries before Postgres resolves
    /// it (`HERALD_INTAKE_RECIPIENT_CACHE_SIZE`, `RecipientCache`; about 200 bytes each). 0 renders every push
    /// that reaches a device after its resolution.
    public var recipientCacheSize = Settings.intakeRecipientCacheSize.integer
    /// After a NOTIFY that tells the workers new deliveries are due, the next waits at least this long
    /// (`HERALD_NOTIFY_INTERVAL_MS`, `DeliveryNotifier`): pushes committed meanwhile share one. 1 ms rather
    /// than 5: at moderate rates every push waits for the next NOTIFY, so a longer interval adds its latency.
    public var notifyInterval = Settings.notifyInterval.duration
    /// Serves the operator console at `/console/` and its API (`HERALD_CONSOLE_ENABLED`, 1 or 0); off, every
    /// console path answers 404.
    public var consoleEnabled = Settings.consoleEnabled.flag
    /// A console sign-in lasts this long (`HERALD_CONSOLE_SESSION_HOURS`).
    public var consoleSessionHours = Settings.consoleSessionHours.integer
    /// A console session unused for this long is signed out (`HERALD_CONSOLE_IDLE_MINUTES`).
    public var consoleIdleMinutes = Settings.consoleIdleMinutes.integer
    /// Peers whose `X-Forwarded-For` names the client (`HERALD_TRUSTED_PROXIES`, `TrustedProxies`); from any
    /// other peer the header is ignored.
    public var trustedProxies: [IPNetwork] = []
    /// How icon fetches (`iconUrl`) connect: HERALD_WEBHOOK_ALLOW_PRIVATE and HERALD_CA_FILE.
    public var fetch = HTTPFetchConfiguration()

    /// Reads and validates every variable; throws naming the first one that is wrong.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError) -> IntakeConfiguration
    {
        let reader = EnvironmentReader(environment: environment)
        let url = try reader.required(Settings.databaseURL)
        let admin = try reader.secret(Settings.adminToken)
        let host = try reader.secret(Settings.hostToken)
        // The push settings (keys, deep-link scheme, recipients, default TTL) are read where
        // `heraldctl backfill sends` reads them too.
        let push = try PushSettings.read(reader)
        var configuration = IntakeConfiguration(
            databaseURL: url, adminToken: admin, hostToken: host, signingKeys: push.signingKeys,
            signingKeyID: push.signingKeyID)
        configuration.rules = push.rules
        configuration.adminTokenPrevious = try reader.optionalSecret(Settings.adminTokenPrevious)
        configuration.hostTokenPrevious = try reader.optionalSecret(Settings.hostTokenPrevious)
        try configuration.validateTokens()
        configuration.port = UInt16(try reader.integer(Settings.intakePort))
        configuration.metricsPort = UInt16(try reader.integer(Settings.intakeMetricsPort))
        try configuration.validatePorts()
        for (setting, field) in cataloged { try reader.read(setting, into: field, of: &configuration) }
        configuration.trustedProxies = try Self.trustedProxies(reader, default: configuration.trustedProxies)
        configuration.defaultTenant =
            try reader.parsed(Settings.defaultTenant, problem: "must be 1-128 of [A-Za-z0-9._:-]") { tenant in
                Identifiers.isValidExternalID(tenant) ? tenant : nil
            } ?? configuration.defaultTenant
        configuration.liveActivityBudgets = try Self.liveActivityBudgets(reader)
        configuration.fetch = try HTTPFetchConfiguration.from(reader)
        configuration.logLevel = try reader.logLevel(default: configuration.logLevel)
        return configuration
    }
}

extension IntakeConfiguration {
    /// `HERALD_LA_MAX_ACTIVE_PER_USER`, `HERALD_LA_STARTS_PER_USER_HOUR`, `HERALD_LA_STARTS_PER_USER_APP_HOUR`,
    /// `HERALD_LA_ALERTED_UPDATES_PER_HOUR` and `HERALD_LA_OPEN_CHANNELS_PER_MINI_APP`. A mini-app's hourly starts
    /// above the user's would never be reached, so such a pair is refused rather than silently meaning less than it
    /// says.
    static func liveActivityBudgets(_ reader: EnvironmentReader) throws(ConfigurationError) -> LiveActivityBudgets {
        var budgets = LiveActivityBudgets()
        budgets.maxActivePerUser = try reader.integer(Settings.liveActivityMaxActivePerUser)
        budgets.startsPerUserHour = try reader.integer(Settings.liveActivityStartsPerUserHour)
        budgets.startsPerUserAppHour = try reader.integer(Settings.liveActivityStartsPerUserAppHour)
        budgets.alertedUpdatesPerHour = try reader.integer(Settings.liveActivityAlertedUpdatesPerHour)
        budgets.openChannelsPerMiniApp = try reader.integer(Settings.liveActivityOpenChannelsPerMiniApp)
        guard budgets.startsPerUserAppHour <= budgets.startsPerUserHour else {
            throw ConfigurationError(
                variable: Settings.liveActivityStartsPerUserAppHour.name,
                problem: "must not exceed \(Settings.liveActivityStartsPerUserHour.name) "
                    + "(\(budgets.startsPerUserHour))")
        }
        return budgets
    }

    /// Every admin and host token, current or previous, must differ: a value the two roles shared would make a
    /// host credential an admin credential (and the reverse), and a previous token equal to the current one is a
    /// rotation not made.
    public func validateTokens() throws(ConfigurationError) {
        let tokens: [(variable: String, value: String?)] = [
            (Settings.adminToken.name, adminToken), (Settings.adminTokenPrevious.name, adminTokenPrevious),
            (Settings.hostToken.name, hostToken), (Settings.hostTokenPrevious.name, hostTokenPrevious),
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
                variable: Settings.intakeMetricsPort.name, problem: "must differ from \(Settings.intakePort.name)")
        }
    }

    /// The options of every connection the intake opens, named `applicationName` in pg_stat_activity.
    public func connectionOptions(_ applicationName: String) -> PostgresConnectionOptions {
        PostgresConnectionOptions(applicationName: applicationName, preparedStatements: databasePreparedStatements)
    }
}
