import Foundation
import HeraldCore
import ServiceSupport

/// The worker's settings, read from the environment (documented in README.md).
public struct WorkerConfiguration: Sendable {
    /// APNs token authentication; the worker sends to APNs only when it is configured.
    public struct APNsSettings: Sendable {
        public var productionURL = "https://api.push.apple.com"
        public var sandboxURL = "https://api.sandbox.push.apple.com"
        public var keyFile: String
        public var keyID: String
        public var teamID: String
        public var topic: String

        public init(keyFile: String, keyID: String, teamID: String, topic: String) {
            self.keyFile = keyFile
            self.keyID = keyID
            self.teamID = teamID
            self.topic = topic
        }
    }

    /// FCM HTTP v1; the worker sends to FCM only when it is configured.
    public struct FCMSettings: Sendable {
        public var url = "https://fcm.googleapis.com"
        public var credentialsFile: String

        public init(credentialsFile: String) { self.credentialsFile = credentialsFile }
    }

    public var databaseURL: String
    public var apns: APNsSettings?
    public var fcm: FCMSettings?
    /// An extra trusted CA for both upstreams (the simulator's certificate).
    public var caFile: String?
    /// HTTP/2 connections per upstream (and per APNs environment).
    public var upstreamConnections = 2
    public var metricsPort: UInt16 = 9090
    /// A claimed row not recorded within this time is rescued by any worker.
    public var leaseSeconds = 30
    /// Rows per claim statement.
    public var batchSize = 200
    /// Deliveries claimed and not yet recorded, at most (streams in flight across upstreams).
    public var maxInFlight = 2000
    public var retry = RetryPolicy()
    /// The poll fallback: how long the worker sleeps when no NOTIFY arrives.
    public var pollInterval: Duration = .seconds(1)
    /// After a claim that emptied the queue, the next claim waits at least this long, so that
    /// live traffic is claimed in batches rather than one claim per NOTIFY.
    public var minimumClaimSpacing: Duration = .milliseconds(5)
    /// LISTEN for new work; off for connection poolers in transaction mode (poll only).
    public var listen = true
    /// On SIGTERM: how long in-flight sends may take before the rest is released.
    public var drainTimeout: Duration = .seconds(20)
    public var logLevel = LogLevel.info
    /// This process in `deliveries.leased_by` and the logs.
    public var workerID = WorkerConfiguration.defaultWorkerID()

    public init(databaseURL: String) {
        self.databaseURL = databaseURL
    }

    /// Reads and validates every variable; throws naming the first one that is wrong.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError) -> WorkerConfiguration
    {
        let reader = EnvironmentReader(environment: environment)
        var configuration = WorkerConfiguration(databaseURL: try reader.required("HERALD_DATABASE_URL"))
        if let keyFile = reader.optional("HERALD_APNS_KEY_FILE") {
            try requireReadable(keyFile, variable: "HERALD_APNS_KEY_FILE")
            let keyID = try reader.required("HERALD_APNS_KEY_ID")
            let teamID = try reader.required("HERALD_APNS_TEAM_ID")
            guard keyID.count == 10 else {
                throw ConfigurationError(variable: "HERALD_APNS_KEY_ID", problem: "must be the 10-character key id")
            }
            guard teamID.count == 10 else {
                throw ConfigurationError(variable: "HERALD_APNS_TEAM_ID", problem: "must be the 10-character team id")
            }
            var apns = APNsSettings(keyFile: keyFile, keyID: keyID, teamID: teamID,
                                    topic: try reader.required("HERALD_APNS_TOPIC"))
            apns.productionURL = try url(reader, "HERALD_APNS_URL", default: apns.productionURL)
            apns.sandboxURL = try url(reader, "HERALD_APNS_SANDBOX_URL", default: apns.sandboxURL)
            configuration.apns = apns
        }
        if let credentials = reader.optional("HERALD_FCM_CREDENTIALS_FILE") {
            try requireReadable(credentials, variable: "HERALD_FCM_CREDENTIALS_FILE")
            var fcm = FCMSettings(credentialsFile: credentials)
            fcm.url = try url(reader, "HERALD_FCM_URL", default: fcm.url)
            configuration.fcm = fcm
        }
        guard configuration.apns != nil || configuration.fcm != nil else {
            throw ConfigurationError(variable: "HERALD_APNS_KEY_FILE",
                                     problem: "set it or HERALD_FCM_CREDENTIALS_FILE: the worker has no upstream")
        }
        if let caFile = reader.optional("HERALD_CA_FILE") {
            try requireReadable(caFile, variable: "HERALD_CA_FILE")
            configuration.caFile = caFile
        }
        configuration.upstreamConnections = try reader.integer("HERALD_UPSTREAM_CONNECTIONS", default: 2, range: 1...64)
        configuration.metricsPort = UInt16(try reader.integer("HERALD_WORKER_METRICS_PORT", default: 9090, range: 0...65535))
        configuration.leaseSeconds = try reader.integer("HERALD_LEASE_SECONDS", default: 30, range: 2...3600)
        configuration.batchSize = try reader.integer("HERALD_BATCH_SIZE", default: 200, range: 1...5000)
        configuration.maxInFlight = try reader.integer("HERALD_WORKER_MAX_IN_FLIGHT", default: 2000, range: 1...100_000)
        configuration.retry.maxAttempts = try reader.integer("HERALD_MAX_ATTEMPTS", default: 8, range: 1...100)
        configuration.retry.baseDelay = .milliseconds(try reader.integer("HERALD_RETRY_BASE_MS", default: 1000,
                                                                         range: 1...3_600_000))
        configuration.retry.maxDelay = .seconds(try reader.integer("HERALD_RETRY_MAX_SECONDS", default: 3600,
                                                                   range: 1...604_800))
        configuration.pollInterval = .milliseconds(try reader.integer("HERALD_POLL_INTERVAL_MS", default: 1000,
                                                                      range: 10...60_000))
        configuration.minimumClaimSpacing = .milliseconds(try reader.integer("HERALD_CLAIM_SPACING_MS", default: 5,
                                                                             range: 0...1000))
        configuration.listen = try reader.integer("HERALD_WORKER_LISTEN", default: 1, range: 0...1) == 1
        configuration.drainTimeout = .seconds(try reader.integer("HERALD_DRAIN_SECONDS", default: 20, range: 0...600))
        if let level = reader.optional("HERALD_LOG_LEVEL") {
            guard let parsed = LogLevel(rawValue: level) else {
                throw ConfigurationError(variable: "HERALD_LOG_LEVEL", problem: "must be debug, info, warning or error")
            }
            configuration.logLevel = parsed
        }
        return configuration
    }

    /// `host:pid:random`, unique per process even when containers share a hostname.
    public static func defaultWorkerID() -> String {
        let random = (0..<3).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return "\(ProcessInfo.processInfo.hostName):\(getpid()):\(random)"
    }

    private static func url(_ reader: EnvironmentReader, _ name: String, default fallback: String)
        throws(ConfigurationError) -> String
    {
        guard let value = reader.optional(name) else { return fallback }
        guard let parsed = URL(string: value), ["https", "http"].contains(parsed.scheme ?? ""), parsed.host != nil,
              parsed.path.isEmpty || parsed.path == "/"
        else {
            throw ConfigurationError(variable: name, problem: "must be an https:// (or http:// for h2c) origin")
        }
        return value.hasSuffix("/") ? String(value.dropLast()) : value
    }

    private static func requireReadable(_ path: String, variable: String) throws(ConfigurationError) {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ConfigurationError(variable: variable, problem: "names no readable file")
        }
    }
}
