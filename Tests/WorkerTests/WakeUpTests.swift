import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Intake
import Store
import Testing
import Worker

/// The intake's NOTIFY names one worker, the workers taking turns (Sources/Intake/DeliveryNotifier.swift): one push
/// wakes one worker, not every worker, and the pushes are shared between the workers; the intake's write leases the
/// push's row to the worker it names, and the notification carries the row, which the worker sends without a claim
/// or a read.
@Suite(.requiresDatabase) struct WakeUpTests {
    /// A partner (its API key returned) and alice, with one iPhone, known by her e-mail.
    private static func partnerAndAlice(_ harness: WorkerHarness) throws -> String {
        let key = "mp_" + String(repeating: "8", count: 32)
        try harness.db.partner(keyHash: PartnerAPIKey.hash(key))
        try harness.db.user("alice", apnsToken: WorkerHarness.apnsToken(0))
        try harness.db.email("alice@example.com", user: "alice")
        return key
    }

    @Test func eachPushWakesOneWorkerAndTheWorkersTakeTurns() async throws {
        let harness = try WorkerHarness()
        let key = try Self.partnerAndAlice(harness)
        // A long poll: only a notification makes a worker claim.
        let first = try harness.startWorker { $0.claimer.pollInterval = .seconds(30) }
        let second = try harness.startWorker { $0.claimer.pollInterval = .seconds(30) }
        try await harness.waitUntil("both workers listen") {
            try DeliveryStore().listenerPIDs(on: harness.db.connection).count == 2
        }
        // Each worker claims once when it starts and when its listener connects (work may have come meanwhile):
        // counted before the pushes (a claim on connecting still to come is within the bounds checked below).
        try await harness.waitUntil("each worker's first claim") {
            first.metrics.claims >= 1 && second.metrics.claims >= 1
        }
        let claimsBefore = first.metrics.claims + second.metrics.claims
        let listedBefore = first.metrics.listedClaims + second.metrics.listedClaims
        let readsBefore = first.metrics.leasedReads + second.metrics.leasedReads
        let carriedBefore = first.metrics.carriedRows + second.metrics.carriedRows

        let (intake, port) = try WorkerProcessTests.startIntake(databaseURL: harness.db.url)
        defer { intake.stop() }
        let pushes = 8
        for index in 0..<pushes {
            let response = try TestHTTPClient.json(
                port: port, method: "POST", path: "/api/partners/notifications/push", token: key,
                json:
                    #"{"recipients":{"emails":["alice@example.com"]},"title":"Deposit \#(index)","body":"Confirmed"}"#,
                headers: [("Prefer", "wait=10")])
            #expect(response.status == 200, "\(response.text)")
            #expect(response.text.contains(#""sent":1"#), "\(response.text)")
        }
        #expect(harness.simulator.received().count == pushes)
        // Each push's delivery is written leased to the worker its notification names, and the notification carries
        // it whole: the worker sends it with no statement, neither a claim nor a read. (A push written before the
        // intake saw the listeners, or while its list of them was older than a second, is listed instead: the worker
        // leases it by id, or walks when the notification reached both workers.) Woken together, the two workers
        // would take two turns a push, one of them finding nothing.
        let claims = first.metrics.claims + second.metrics.claims - claimsBefore
        let listed = first.metrics.listedClaims + second.metrics.listedClaims - listedBefore
        let reads = first.metrics.leasedReads + second.metrics.leasedReads - readsBefore
        let carried = first.metrics.carriedRows + second.metrics.carriedRows - carriedBefore
        let counts = "carried: \(carried), reads: \(reads), listed claims: \(listed), claims: \(claims)"
        #expect(carried + listed >= pushes, "\(counts)")
        #expect(carried + claims < pushes + pushes / 2, "\(counts)")
        #expect(carried >= pushes / 2, "\(counts)")
        #expect(reads == 0, "\(counts)")
        let sent = [first, second].map { $0.metrics.value("sent", .apns) }
        #expect(sent.reduce(0, +) == pushes)
        #expect(sent.allSatisfy { $0 >= pushes / 4 }, "sent by each worker: \(sent)")
    }

    /// Rows leased to `worker` as an intake's write leaves them (its notification lost): one delivery each.
    private static func leaseUnheard(_ harness: WorkerHarness, _ worker: DeliveryWorker, users: Int) throws -> [UUID] {
        let queued = try harness.queue(users: users)
        try harness.db.connection.query(
            """
            UPDATE deliveries SET state = 'leased', leased_by = $1, attempts = 1, lease_expires_at = now() + interval '1 hour'
             WHERE id = ANY ($2::uuid[])
            """, [worker.configuration.workerID, queued.deliveries])
        return queued.deliveries
    }

    private static func registrations(_ harness: WorkerHarness, _ worker: DeliveryWorker) throws -> Int {
        try harness.db.count(
            "SELECT count(*) FROM worker_listeners WHERE worker_id = $1", [worker.configuration.workerID])
    }

    @Test func aDrainingWorkerWithdrawsItsLeaseAndGivesBackWhatWasLeasedToIt() async throws {
        let harness = try WorkerHarness()
        let worker = try harness.startWorker { $0.claimer.pollInterval = .seconds(30) }
        try await harness.waitUntil("the listener registers its lease") { try Self.registrations(harness, worker) == 1 }
        let unheard = try Self.leaseUnheard(harness, worker, users: 3)
        worker.drain()
        #expect(try Self.registrations(harness, worker) == 0)
        // Pending again, their attempt unspent, for another worker.
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM deliveries WHERE id = ANY ($1::uuid[]) AND state = 'pending' AND leased_by IS NULL
                   AND attempts = 0
                """, [unheard]) == 3)
        #expect(harness.simulator.received().isEmpty)
    }

    @Test func aListenerThatReconnectsReleasesTheRowsLeasedToItMeanwhile() async throws {
        let harness = try WorkerHarness()
        let worker = try harness.startWorker { $0.claimer.pollInterval = .seconds(30) }
        try await harness.waitUntil("the listener registers its lease") { try Self.registrations(harness, worker) == 1 }
        let unheard = try Self.leaseUnheard(harness, worker, users: 2)
        let listener = try harness.db.count(
            "SELECT pid FROM worker_listeners WHERE worker_id = $1",
            [worker.configuration.workerID])
        _ = try harness.db.connection.query("SELECT pg_terminate_backend($1)", [listener])
        // Its new listener registers in the old one's place; the claimer gives back what it never heard of, and
        // walks (notifications may have been missed): the rows are sent long before their lease or the poll.
        try await harness.waitUntil("the unheard rows are sent", timeout: .seconds(15)) {
            harness.simulator.received().filter { $0.status == 200 }.count == unheard.count
        }
        try await harness.waitUntil("every outcome recorded") { try harness.outstanding() == 0 }
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM worker_listeners WHERE worker_id = $1 AND pid <> $2",
                [worker.configuration.workerID, listener]) == 1)
    }

    @Test func aClaimerThatLosesItsConnectionGivesBackWhatALostClaimLeased() async throws {
        let harness = try WorkerHarness()
        let worker = try harness.startWorker { $0.claimer.pollInterval = .seconds(1) }
        try await harness.waitUntil("the listener registers its lease") { try Self.registrations(harness, worker) == 1 }
        // Rows a claim leased to this worker before its connection died with the answer (a crash, a failover).
        let unheard = try Self.leaseUnheard(harness, worker, users: 2)
        let claimer = try harness.db.count(
            """
            SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1
            """, ["herald-worker claimer"])
        _ = try harness.db.connection.query("SELECT pg_terminate_backend($1)", [claimer])
        // The listener kept its connection; the claimer's next statement fails, and once it reconnects it gives back
        // the rows it never heard of: sent long before their hour's lease.
        try await harness.waitUntil("the rows of the lost claim are sent", timeout: .seconds(20)) {
            harness.simulator.received().filter { $0.status == 200 }.count == unheard.count
        }
        try await harness.waitUntil("every outcome recorded") { try harness.outstanding() == 0 }
        #expect(worker.metrics.render().contains("herald_worker_released_unheard_total 2\n"))
        #expect(worker.metrics.render().contains("herald_worker_rescued_total 0\n"))
    }
}
