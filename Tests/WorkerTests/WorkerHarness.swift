import APNs
import FCM
import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store

@testable import Simulator
@testable import Worker

/// A private queue database, a simulator over TLS, and workers configured to send to it.
final class WorkerHarness: @unchecked Sendable {
    let db: QueueDatabase
    let simulator: Simulator
    let credentials = TestCredentials.shared
    /// The service account whose token_uri points at this simulator.
    let fcmCredentialsFile: String
    private var workers: [DeliveryWorker] = []

    /// The other Firebase project's service account (TestCredentials.fcmOtherCredentialsFile), whose token_uri
    /// points at this simulator; the simulator knows it when the harness was made with `otherFCMAccount`.
    let fcmOtherCredentialsFile: String

    /// `database`: another server's (a private cluster a test stops), else one on the suite's server.
    /// `otherFCMAccount`: the simulator also knows the other project's service account; `fcmTokenProject`: the
    /// Firebase project every FCM token belongs to (SimulatorConfiguration.fcmTokenProject).
    init(database: QueueDatabase? = nil, otherFCMAccount: Bool = false, fcmTokenProject: String? = nil) throws {
        db = try database ?? QueueDatabase()
        simulator = try Simulator(
            configuration: SimulatorConfiguration(
                tlsCertificateFile: credentials.serverCertificateFile, tlsKeyFile: credentials.serverKeyFile,
                apnsKeyFile: credentials.apnsKeyFile, fcmCredentialsFile: credentials.fcmCredentialsFile,
                fcmAdditionalCredentialsFiles: otherFCMAccount ? [credentials.fcmOtherCredentialsFile] : [],
                fcmTokenProject: fcmTokenProject, channelPort: 0))
        try simulator.start()
        let tokenURI = "https://127.0.0.1:\(simulator.port)/token"
        fcmCredentialsFile = try credentials.fcmCredentialsFile(tokenURI: tokenURI)
        fcmOtherCredentialsFile = try credentials.fcmCredentialsFile(tokenURI: tokenURI, other: true)
    }

    deinit {
        for worker in workers { worker.drain() }
        simulator.stop()
    }

    var simulatorURL: String { "https://127.0.0.1:\(simulator.port)" }
    /// Apple's channel management API, on the simulator's second port.
    var channelURL: String { "https://127.0.0.1:\(simulator.channelPort ?? 0)" }

    /// A configuration for this database and simulator, quick to react (tests wait on it).
    func configuration(_ adjust: (inout WorkerConfiguration) -> Void = { _ in }) -> WorkerConfiguration {
        var configuration = WorkerConfiguration(databaseURL: db.url)
        configuration.apns = APNsConfiguration(
            keyFile: credentials.apnsKeyFile, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID,
            topic: credentials.apnsTopic, productionURL: simulatorURL, sandboxURL: simulatorURL,
            caFile: credentials.caFile)
        configuration.fcm = FCMConfiguration(
            credentialsFile: fcmCredentialsFile, url: simulatorURL,
            caFile: credentials.caFile)
        configuration.channels.managementURL = channelURL
        configuration.metricsPort = 0
        configuration.claimer.pollInterval = .milliseconds(100)
        configuration.retry = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(20), maxDelay: .milliseconds(200))
        // A test's late activity token must not race the sweep of starts that created nothing (120 s by default): on
        // a machine running the whole suite, a flow's start and its token were once further apart, the iPhone became
        // unconfirmed and its held update was dropped. The sweep's own tests set a short wait.
        configuration.activitySweeper.startConfirmation = .seconds(86_400)
        // The channel sweep lists the simulator's channels at every start: its own tests turn it on, the others
        // count the simulator's records without it.
        configuration.channels.sweep.enabled = false
        configuration.logLevel = .error
        adjust(&configuration)
        return configuration
    }

    /// Starts a worker in this process, on `clock`; drained when the harness goes away.
    @discardableResult
    func startWorker(
        clock: any HeraldClock = SystemClock(), _ adjust: (inout WorkerConfiguration) -> Void = { _ in }
    ) throws -> DeliveryWorker {
        let configuration = configuration(adjust)
        let worker = DeliveryWorker(
            configuration: configuration, upstreams: try WorkerUpstreams.make(configuration), clock: clock)
        worker.start()
        workers.append(worker)
        return worker
    }

    /// The environment of a herald-worker process for this database and simulator.
    func processEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = db.url
        environment["HERALD_APNS_KEY_FILE"] = credentials.apnsKeyFile
        environment["HERALD_APNS_KEY_ID"] = credentials.apnsKeyID
        environment["HERALD_APNS_TEAM_ID"] = credentials.apnsTeamID
        environment["HERALD_APNS_TOPIC"] = credentials.apnsTopic
        environment["HERALD_APNS_URL"] = simulatorURL
        environment["HERALD_APNS_SANDBOX_URL"] = simulatorURL
        environment["HERALD_FCM_URL"] = simulatorURL
        environment["HERALD_APNS_CHANNEL_URL"] = channelURL
        environment["HERALD_FCM_CREDENTIALS_FILE"] = fcmCredentialsFile
        environment["HERALD_CA_FILE"] = credentials.caFile
        environment["HERALD_WORKER_METRICS_PORT"] = "0"
        environment["HERALD_POLL_INTERVAL_MS"] = "100"
        environment["HERALD_LOG_LEVEL"] = "info"
        environment["HERALD_CHANNEL_SWEEP_ENABLED"] = "0"
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// One partner, one request of `users` users each with an iPhone (APNs) and optionally a Pixel.
    func queue(users: Int, android: Bool = false, expiresAt: Date? = nil) throws
        -> (request: (id: UUID, createdAt: Date), deliveries: [UUID], partner: UUID)
    {
        let partner = try db.partner()
        let request = try db.request(partner: partner.id, deliveries: users * (android ? 2 : 1))
        var ids: [UUID] = []
        for index in 0..<users {
            let user = "user-\(index)"
            try db.user(user, apnsToken: Self.apnsToken(index), fcmToken: android ? Self.fcmToken(index) : nil)
            ids.append(
                try db.delivery(
                    request: request, partner: partner.id, user: user, service: .apns,
                    expiresAt: expiresAt))
            if android {
                ids.append(
                    try db.delivery(
                        request: request, partner: partner.id, user: user, service: .fcm,
                        expiresAt: expiresAt))
            }
        }
        return (request, ids, partner.id)
    }

    /// The same users and devices as `queue`, written by the intake's statement: past 16 deliveries to
    /// one service, as group rows (sql/016_delivery_groups.sql).
    func queueThroughIntake(users: Int, android: Bool = false)
        throws -> (request: (id: UUID, createdAt: Date), deliveries: [UUID], partner: UUID)
    {
        let partner = try db.partner()
        var deliveries: [(user: String, service: PushService)] = []
        for index in 0..<users {
            let user = "user-\(index)"
            try db.user(user, apnsToken: Self.apnsToken(index), fcmToken: android ? Self.fcmToken(index) : nil)
            deliveries.append((user, .apns))
            if android { deliveries.append((user, .fcm)) }
        }
        let (request, ids) = try db.enqueueRequest(partner: partner, deliveries: deliveries)
        return (request, ids, partner.id)
    }

    static func apnsToken(_ index: Int) -> String { String(format: "%064x", index + 1) }
    static func fcmToken(_ index: Int) -> String { "fcm-token-\(index + 1)" }

    /// Waits until `condition` holds (`eventually`: the test holds none of the few cooperative threads that every
    /// async test shares), failing after `timeout`. For final states only: a waiting task may resume late when the
    /// suite is busy.
    func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: () throws -> Bool) async throws {
        guard try await eventually(timeout: timeout, interval: .milliseconds(20), condition) else {
            throw TestHTTPClient.Failure(description: "timed out waiting for: \(what) (\(queueSummary()))")
        }
    }

    /// The same, blocking this thread (`waitFor`): for a state that lasts only a moment (sends in flight), which
    /// a test must not miss while its task waits to be resumed.
    func waitUntilBlocking(_ what: String, timeout: Duration = .seconds(30), _ condition: () throws -> Bool) throws {
        do {
            try waitFor(what, timeout: timeout, interval: .milliseconds(10), condition)
        } catch let failure as TestHTTPClient.Failure {
            throw TestHTTPClient.Failure(description: "\(failure.description) (\(queueSummary()))")
        }
    }

    /// The outbox by state and the history by outcome and error: what a timed-out test was looking at.
    func queueSummary() -> String {
        let outbox =
            (try? db.connection.query("SELECT state, count(*) FROM deliveries GROUP BY state ORDER BY 1").rows
                .map { "\($0[0] ?? "?")=\($0[1] ?? "?")" }.joined(separator: " ")) ?? "?"
        let history =
            (try? db.connection.query(
                """
                SELECT outcome || coalesce('/' || last_error, ''), count(*) FROM delivery_history GROUP BY 1 ORDER BY 1
                """
            ).rows.map { "\($0[0] ?? "?")=\($0[1] ?? "?")" }.joined(separator: " ")) ?? "?"
        return "outbox: \(outbox.isEmpty ? "empty" : outbox); history: \(history.isEmpty ? "empty" : history); "
            + "simulator on port \(simulator.port) answered \(simulator.received().count)"
    }

    /// Rows still in the outbox (pending or leased).
    func outstanding() throws -> Int { try db.count("SELECT count(*) FROM deliveries") }

    /// How many times the simulator answered a request carrying `apns-id` = `id` (APNs) or the
    /// delivery id in its data (FCM).
    func timesReceived(_ id: UUID) -> Int {
        let text = id.uuidString.lowercased()
        return simulator.received().filter { record in
            record.header("apns-id") == text || String(decoding: record.body, as: UTF8.self).contains(text)
        }.count
    }
}
