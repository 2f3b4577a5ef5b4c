import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Intake
import Store
import Testing
import Worker

/// The intake's NOTIFY names one worker, the workers taking turns (Sources/Intake/DeliveryNotifier.swift): one push
/// costs one claim, not one per worker, and the pushes are shared between the workers; the claim leases the row the
/// notification lists, by primary key.
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
        // Each worker claims once when its listener connects (work may have come meanwhile).
        try await Task.sleep(for: .milliseconds(300))
        let claimsBefore = first.metrics.claims + second.metrics.claims
        let listedBefore = first.metrics.listedClaims + second.metrics.listedClaims

        let (intake, port) = try WorkerProcessTests.startIntake(databaseURL: harness.db.url)
        defer { intake.stop() }
        let pushes = 8
        for index in 0..<pushes {
            let response = try TestHTTPClient.json(
                port: port, method: "POST", path: "/api/partners/notifications/push", token: key,
                json: #"{"recipients":{"emails":["alice@example.com"]},"title":"Deposit \#(index)","body":"Confirmed"}"#,
                headers: [("Prefer", "wait=10")])
            #expect(response.status == 200, "\(response.text)")
            #expect(response.text.contains(#""sent":1"#), "\(response.text)")
        }
        #expect(harness.simulator.received().count == pushes)
        // Woken together, the two workers would claim twice a push, one of them finding nothing.
        let claims = first.metrics.claims + second.metrics.claims - claimsBefore
        #expect(claims >= pushes && claims < pushes + pushes / 2, "claims: \(claims)")
        // Each notification lists its push's delivery, and the worker's last walk found the queue drained: the
        // worker leases it by id. (A push written before the intake saw the listeners notifies both workers, and the
        // one that finds its row taken walks next.)
        let listed = first.metrics.listedClaims + second.metrics.listedClaims - listedBefore
        #expect(listed >= pushes, "listed claims: \(listed) of \(claims)")
        let sent = [first, second].map { $0.metrics.value("sent", .apns) }
        #expect(sent.reduce(0, +) == pushes)
        #expect(sent.allSatisfy { $0 >= pushes / 4 }, "sent by each worker: \(sent)")
    }
}
