import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing
import Worker

/// Workers sending group rows (sql/016_delivery_groups.sql) to the simulator: every member once, its
/// own outcome, retries of one member without the others.
@Suite(.requiresDatabase) struct DeliveryGroupFlowTests {
    @Test func twoWorkersSendEveryMemberOfEveryGroupOnce() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queueThroughIntake(users: 400, android: true)
        // 400 deliveries per service: 8 groups of 50 each.
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE member_count = 50") == 16)
        try harness.startWorker { $0.claimer.batchSize = 120 }
        try harness.startWorker { $0.claimer.batchSize = 120 }
        try await harness.waitUntil("all sent", timeout: .seconds(60)) { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 800, failed: 0))
        let received = harness.simulator.received().filter { $0.status == 200 }
        #expect(received.count == 800)
        #expect(Set(received.compactMap { $0.header("apns-id") }).count == 400)
        #expect(queued.deliveries.allSatisfy { harness.timesReceived($0) == 1 })
        #expect(try harness.db.count("SELECT count(DISTINCT id) FROM delivery_history_deliveries WHERE outcome = 'sent'")
                == 800)
    }

    @Test func aMemberIsRetriedOrFailedAloneAndTheRestOfItsGroupIsSentOnce() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queueThroughIntake(users: 40)
        harness.simulator.setFault(SimulatorFault(status: 503, reason: "ServiceUnavailable", times: 1),
                                   token: WorkerHarness.apnsToken(5))
        harness.simulator.setFault(SimulatorFault(status: 410, reason: "Unregistered"), token: WorkerHarness.apnsToken(7))
        try harness.startWorker()
        try await harness.waitUntil("all recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 39, failed: 1))
        let retried = try #require(try harness.db.outcome(of: queued.deliveries[5]))
        #expect(retried.outcome == "sent" && retried.attempts == 2)
        #expect(harness.timesReceived(queued.deliveries[5]) == 2)
        #expect(try harness.db.outcome(of: queued.deliveries[7])?.outcome == "token_invalid")
        #expect(try harness.db.count("""
            SELECT count(*) FROM devices WHERE user_id = 'user-7' AND apns_token_invalidated_at IS NOT NULL
            """) == 1)
        for (index, id) in queued.deliveries.enumerated() where index != 5 {
            #expect(harness.timesReceived(id) == 1)
            if index != 7 { #expect(try harness.db.outcome(of: id)?.attempts == 1) }
        }
    }

    @Test func goAwayMidGroupLosesAndDuplicatesNothing() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queueThroughIntake(users: 60)
        harness.simulator.setFault(SimulatorFault(times: 1, goAway: true), token: WorkerHarness.apnsToken(29))
        try harness.startWorker()
        try await harness.waitUntil("all sent") { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 60, failed: 0))
        let accepted = harness.simulator.received().filter { $0.status == 200 }
        #expect(accepted.count == 60)
        #expect(Set(accepted.compactMap { $0.header("apns-id") }).count == 60)
    }
}
