import Foundation
import HeraldCore
import HeraldTestSupport
import Testing
import Worker

@testable import Simulator

/// Workers sending group rows (sql/016_delivery_groups.sql) to the simulator: every member once, its
/// own outcome, retries of one member without the others, one probe per group (GOAWAY in the middle of a
/// group: DeliveryOutcomeTests).
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
        #expect(
            try harness.db.count("SELECT count(DISTINCT id) FROM delivery_history_deliveries WHERE outcome = 'sent'")
                == 800)
    }

    /// The completer records a group's members together (sql/functions/complete_deliveries.sql): each group sent
    /// whole is one completion, so one history row of all its members, however the answers were batched,
    /// even with a batch limit smaller than a group (a group begun in a batch is finished in it).
    @Test func eachGroupSentWholeIsRecordedInOneStatement() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queueThroughIntake(users: 400, android: true)
        // A hold no answer here comes near: the test is about batching, not about time.
        try harness.startWorker {
            $0.claimer.batchSize = 120
            $0.completer.maxBatch = 30
            $0.completer.groupHold = .seconds(10)
        }
        try await harness.waitUntil("all sent", timeout: .seconds(60)) { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 800, failed: 0))
        #expect(try harness.db.count("SELECT count(*) FROM delivery_history") == 16)
        #expect(try harness.db.count("SELECT count(*) FROM delivery_history WHERE cardinality(members) = 50") == 16)
        #expect(queued.deliveries.allSatisfy { harness.timesReceived($0) == 1 })
    }

    /// A slow member does not hold its group's answered members past the hold: they are recorded without
    /// it (one history row of 39), and it is recorded when it answers (a row of its own). Read from the
    /// history at the end rather than watched, so a late-resumed test task cannot miss the moment.
    @Test func answeredMembersAreRecordedWhenTheHoldEndsWithoutASlowOne() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queueThroughIntake(users: 40)
        harness.simulator.setFault(SimulatorFault(delayMs: 5000), token: WorkerHarness.apnsToken(5))
        try harness.startWorker { $0.completer.groupHold = .milliseconds(200) }
        try await harness.waitUntil("all recorded", timeout: .seconds(60)) { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 40, failed: 0))
        let pieces = try harness.db.connection.query(
            """
            SELECT cardinality(members), $1 = ANY (members) FROM delivery_history ORDER BY cardinality(members)
            """, [queued.deliveries[5]]
        ).rows.map { (try $0.int(0), try $0.bool(1)) }
        #expect(pieces.map(\.0) == [1, 39] && pieces.map(\.1) == [true, false])
        #expect(queued.deliveries.allSatisfy { harness.timesReceived($0) == 1 })
        #expect(try harness.db.outcome(of: queued.deliveries[5])?.attempts == 1)
    }

    @Test func aMemberIsRetriedOrFailedAloneAndTheRestOfItsGroupIsSentOnce() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queueThroughIntake(users: 40)
        harness.simulator.setFault(
            SimulatorFault(status: 503, reason: "ServiceUnavailable", times: 1),
            token: WorkerHarness.apnsToken(5))
        harness.simulator.setFault(
            SimulatorFault(status: 410, reason: "Unregistered"), token: WorkerHarness.apnsToken(7))
        try harness.startWorker()
        try await harness.waitUntil("all recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 39, failed: 1))
        let retried = try #require(try harness.db.outcome(of: queued.deliveries[5]))
        #expect(retried.outcome == "sent" && retried.attempts == 2)
        #expect(harness.timesReceived(queued.deliveries[5]) == 2)
        #expect(try harness.db.outcome(of: queued.deliveries[7])?.outcome == "token_invalid")
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE user_id = 'user-7' AND apns_token_invalidated_at IS NOT NULL
                """) == 1)
        for (index, id) in queued.deliveries.enumerated() where index != 5 {
            #expect(harness.timesReceived(id) == 1)
            if index != 7 { #expect(try harness.db.outcome(of: id)?.attempts == 1) }
        }
    }

    /// A paused upstream's probe claim may be a whole group: it is ONE probe (one lengthening of the pause
    /// when it fails), and delivery resumes by itself soon after the upstream accepts again.
    @Test func aGroupClaimedAsTheProbeLengthensThePauseOnce() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        for user in 0...40 {
            try harness.db.user("user-\(user)", apnsToken: WorkerHarness.apnsToken(user))
            harness.simulator.setFault(
                SimulatorFault(status: 403, reason: "InvalidProviderToken"),
                token: WorkerHarness.apnsToken(user))
        }
        // One push pauses the upstream.
        let first = try harness.db.enqueueRequest(partner: partner, deliveries: [("user-40", .apns)])
        // A first pause long enough for this task to swap the rows before the first probe even on a busy
        // machine; a maximum the fixed behaviour never reaches here.
        let worker = try harness.startWorker {
            $0.pauses.base = .seconds(2)
            $0.pauses.maximum = .seconds(120)
        }
        // Both waits below poll on this thread: a task resumed seconds late on a busy suite would let more
        // probes fail (each one doubling the pause) before the faults are cleared.
        try harness.waitUntilBlocking("the upstream paused") {
            worker.pausedUpstreams["apns"] == "InvalidProviderToken"
        }
        // The deferred row is taken away (however late this task resumed), so the next claim, the probe,
        // can only take the group queued now, whole.
        try harness.db.connection.query("DELETE FROM deliveries WHERE id = $1", [first.ids[0]])
        let group = try harness.db.enqueueRequest(partner: partner, deliveries: (0..<40).map { ("user-\($0)", .apns) })
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE member_count = 40") == 1)
        try harness.waitUntilBlocking("the group probed") {
            try harness.db.count("SELECT count(*) FROM deliveries WHERE member_count = 40") == 0
        }
        // Had each of its 40 members counted as a failed probe, the pause would be at its 120 s maximum;
        // counted once it is 4 s (8 s if a late task let the deferred row be probed first).
        harness.simulator.clearFaults()
        try await harness.waitUntil("everything delivered after the upstream accepted again", timeout: .seconds(45)) {
            try harness.outstanding() == 0
        }
        for id in group.ids {
            let outcome = try #require(try harness.db.outcome(of: id))
            #expect(outcome.outcome == "sent" && outcome.attempts == 1)
        }
    }
}
