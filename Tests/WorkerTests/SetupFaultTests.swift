import Foundation
import HeraldCore
import HeraldTestSupport
import Store
import Testing
import Worker

@testable import Simulator

/// An upstream that refuses Herald's own credentials or configuration is paused; its rows
/// stay queued with their attempts unspent, `/readyz` and a metric say so, and delivery resumes by
/// itself once the upstream accepts again. One revoked key never turns the queue into `failed`.
@Suite(.requiresDatabase) struct SetupFaultTests {
    /// (service, status, reason) of each setup fault the real services answer.
    static let faults: [(PushService, Int, String)] = [
        (.apns, 403, "InvalidProviderToken"),
        (.apns, 400, "TopicDisallowed"),
        (.apns, 400, "BadCertificateEnvironment"),
        (.fcm, 401, "THIRD_PARTY_AUTH_ERROR"),
        (.fcm, 403, "PERMISSION_DENIED"),
        // Another Firebase project's credentials than the one that issued the tokens: never a dead token.
        (.fcm, 403, "SENDER_ID_MISMATCH"),
    ]

    @Test(arguments: 0..<faults.count)
    func aSetupFaultPausesTheUpstreamKeepsItsRowsAndResumesByItself(index: Int) async throws {
        let (service, status, reason) = Self.faults[index]
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 5, android: service == .fcm)
        let ids =
            service == .apns
            ? queued.deliveries
            : stride(from: 1, to: queued.deliveries.count, by: 2).map {
                queued.deliveries[$0]
            }
        for user in 0..<5 {
            let token = service == .apns ? WorkerHarness.apnsToken(user) : WorkerHarness.fcmToken(user)
            harness.simulator.setFault(SimulatorFault(status: status, reason: reason), token: token)
        }
        let worker = try harness.startWorker {
            $0.pauses.base = .milliseconds(300)
            $0.pauses.maximum = .seconds(1)
        }
        let health = try WorkerHealthServer(worker: worker, host: "127.0.0.1", port: 0)
        defer { health.stop() }

        try await harness.waitUntil("the upstream paused") { worker.pausedUpstreams[service.rawValue] == reason }
        let readiness = try TestHTTPClient.send(port: health.port, method: "GET", path: "/readyz")
        #expect(readiness.status == 503)
        #expect(readiness.text.contains(#""\#(service.rawValue)":"\#(reason)""#), "\(readiness.text)")
        #expect(worker.metrics.render().contains(#"herald_worker_upstream_paused{upstream="\#(service.rawValue)"} 1"#))
        // While paused (and probing once a second), nothing of that upstream is failed and no
        // attempt is spent: every row is pending or out as the single probe. Two more probes refused show the pause
        // lasted.
        func refused() -> Int {
            harness.simulator.received().filter { $0.service.rawValue == service.rawValue && $0.reason == reason }.count
        }
        let refusedAtPause = refused()
        try await harness.waitUntil("two more probes refused") { refused() >= refusedAtPause + 2 }
        for id in ids { #expect(try harness.db.outcome(of: id) == nil) }
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM deliveries WHERE service = $1 AND attempts > 1
                """, [service.rawValue]) == 0)

        harness.simulator.clearFaults()
        try await harness.waitUntil("everything delivered after the upstream accepted again") {
            try harness.outstanding() == 0
        }
        for id in ids {
            let outcome = try #require(try harness.db.outcome(of: id))
            #expect(outcome.outcome == "sent")
            #expect(outcome.attempts == 1, "a paused row keeps its attempts")
        }
        #expect(worker.pausedUpstreams.isEmpty)
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL OR fcm_token_invalidated_at IS NOT NULL
                """) == 0, "a setup fault retires no token")
        try await harness.waitUntil("ready again") {
            try TestHTTPClient.send(port: health.port, method: "GET", path: "/readyz").status == 200
        }
    }

    @Test func aTopicRefusedForOneDevicesOwnAppFailsThatDeliveryOnly() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        let request = try harness.db.request(partner: partner.id, deliveries: 2)
        try harness.db.user("foreign-app", apnsToken: WorkerHarness.apnsToken(0), bundleID: "com.not.ours")
        try harness.db.user("our-app", apnsToken: WorkerHarness.apnsToken(1))
        harness.simulator.setFault(
            SimulatorFault(status: 400, reason: "TopicDisallowed"), token: WorkerHarness.apnsToken(0))
        let foreign = try harness.db.delivery(
            request: request, partner: partner.id, user: "foreign-app", service: .apns)
        let ours = try harness.db.delivery(request: request, partner: partner.id, user: "our-app", service: .apns)
        let worker = try harness.startWorker()
        try await harness.waitUntil("both recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: foreign)?.outcome == "failed")
        #expect(try harness.db.outcome(of: foreign)?.error == "TopicDisallowed")
        #expect(try harness.db.outcome(of: ours)?.outcome == "sent")
        #expect(worker.pausedUpstreams.isEmpty)
    }
}
