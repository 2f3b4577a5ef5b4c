import Foundation
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing
import Worker

/// Scheduled Live Activity starts (`startAt`) end to end: the intake holds them, a worker's activity sweeper sends
/// them at their time on its injected clock (or refuses them then), herald-sim receives the push-to-start.
///
/// The intake and the worker run `lag` behind the database's clock, so a start the worker's clock makes due is
/// already due on the database's (a start's rows are due from its time); the test moves the worker's clock to the
/// start's time instead of waiting for it.
@Suite(.requiresDatabase, .serialized)
struct ScheduledStartTests {
    static let lag: TimeInterval = -600
    /// How far ahead a test's start is: far enough that a test the whole suite stalls for minutes (over 3 once)
    /// does not see its worker's clock reach the start on its own; short of `lag`, so the advanced clock stays
    /// behind the database's.
    static let ahead: TimeInterval = 480

    /// The wall clock shifted by an offset the test moves: time passes as usual (the completer's pacing needs it)
    /// and jumps when the test says so.
    final class ShiftedClock: HeraldClock {
        private let offset: Mutex<TimeInterval>
        init(_ offset: TimeInterval) { self.offset = Mutex(offset) }
        var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }
        func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    }

    struct Setup {
        let harness: LiveActivityHarness
        let clock: ShiftedClock
        let worker: DeliveryWorker
        let partner: LiveActivityHarness.Partner
        let user: LiveActivityHarness.User

        /// The intake's time (and, until the test moves it, the worker's).
        var now: Date { Date().addingTimeInterval(ScheduledStartTests.lag) }

        /// Waits until the worker's sweeper has run `count` more passes (each sends whatever start is due).
        func sweeps(_ count: Int = 3) async throws {
            let passes = worker.activitySweepPasses
            try await harness.workers.waitUntil("\(count) activity sweeps") {
                worker.activitySweepPasses >= passes + count
            }
        }

        func json(_ response: TestHTTPClient.Response) throws -> JSONValue { try JSONParser.parse(response.body) }

        /// What the simulator received of `activityID`, on the user's iPhone and Pixel.
        func received(_ activityID: String) throws -> (apns: [JSONValue], fcm: [JSONValue]) {
            let apns = harness.apnsPushes(to: try #require(user.pushToStartToken)).compactMap(\.payload)
                .filter { $0["activityId"]?.stringValue == activityID }
            let fcm = harness.fcmMessages(to: try #require(user.fcmToken)).compactMap(LiveActivityHarness.data)
                .filter { $0["activityId"]?.stringValue == activityID }
            return (apns, fcm)
        }

        /// The activity's events, newest first: (kind, reason).
        func events(_ activityID: String) throws -> [(kind: String, reason: String?, devices: Int)] {
            let response = try harness.request(
                "GET", "/api/partners/live-activities/\(activityID)/events", token: partner.apiKey)
            return try json(response)["events"]?.arrayValue?.map {
                (
                    $0["kind"]?.stringValue ?? "", $0["reason"]?.stringValue,
                    Int($0["devices"]?["total"]?.numberValue ?? -1)
                )
            } ?? []
        }
    }

    static func setup() throws -> Setup {
        let harness = try LiveActivityHarness(clock: ShiftedClock(lag))
        let clock = ShiftedClock(lag)
        let worker = try harness.workers.startWorker(clock: clock) { $0.activitySweeper.interval = .milliseconds(50) }
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        return Setup(harness: harness, clock: clock, worker: worker, partner: partner, user: user)
    }

    @Test func aScheduledStartIsNotSentBeforeItsTimeAndIsSentAtIt() async throws {
        let s = try Self.setup()
        let startAt = s.now.addingTimeInterval(Self.ahead)
        let response = try s.harness.start(s.partner, s.user, idempotencyKey: "planned", startAt: startAt)
        #expect(response.status == 201, "\(response.text)")
        let answer = try s.json(response)
        #expect(answer["status"]?.stringValue == "scheduled")
        #expect(answer["startAt"]?.stringValue == ISO8601.format(startAt))
        let expiresAt = try #require(answer["expiresAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(abs(expiresAt.timeIntervalSince(startAt) - 1_800) < 0.01, "the TTL counts from the start")
        let id = try s.harness.activityID(response)

        try await s.sweeps()
        #expect(try s.received(id).apns.isEmpty && s.received(id).fcm.isEmpty, "nothing before its time")
        #expect(try s.harness.outstanding(id) == 0)
        let waiting = try s.json(s.harness.get(s.partner, id))
        #expect(waiting["status"]?.stringValue == "scheduled")
        #expect(waiting["startAt"]?.stringValue == ISO8601.format(startAt))
        #expect(waiting["devices"]?.arrayValue?.isEmpty == true)

        s.clock.advance(by: Self.ahead + 1)
        try await s.harness.workers.waitUntil("the start reached both devices") {
            let received = try s.received(id)
            return received.apns.count == 1 && received.fcm.count == 1
        }
        let (apns, fcm) = try s.received(id)
        let aps = try #require(apns.first?["aps"])
        #expect(aps["event"]?.stringValue == "start")
        #expect(aps["attributes-type"]?.stringValue == "MiniAppProgressAttributes")
        #expect(fcm.first?["event"]?.stringValue == "start")

        let started = try s.json(s.harness.get(s.partner, id))
        #expect(started["status"]?.stringValue == "active")
        #expect(started["startAt"]?.stringValue == ISO8601.format(startAt))
        // Sent when the worker's clock reached it: the activity's start and TTL count from then.
        let createdAt = try #require(started["createdAt"]?.stringValue.flatMap(ISO8601.parse))
        let expiry = try #require(started["expiresAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(createdAt >= startAt && createdAt <= s.clock.now)
        #expect(abs(expiry.timeIntervalSince(createdAt) - 1_800) < 0.01)
        try await s.harness.workers.waitUntil("the start's outcomes recorded") {
            try s.events(id).first?.devices == 2 && s.harness.outstanding(id) == 0
        }
        #expect(try s.events(id).map(\.kind) == ["start", "schedule"])
    }

    @Test func aStartMoreThanSevenDaysAheadIs422AndOneInThePastStartsNow() async throws {
        let s = try Self.setup()
        let far = try s.harness.start(s.partner, s.user, startAt: s.now.addingTimeInterval(8 * 86_400))
        #expect(far.status == 422, "\(far.text)")
        #expect(try s.json(far)["error"]?["code"]?.stringValue == "start_at_out_of_range")
        #expect(try s.json(far)["error"]?["field"]?.stringValue == "startAt")
        #expect(try s.harness.db.count("SELECT count(*) FROM live_activities") == 0, "a refusal writes nothing")

        let malformed = try s.harness.request(
            "POST", "/api/partners/live-activities", token: s.partner.apiKey,
            json: #"{"recipient":{"email":"\#(s.user.email)"},"template":"progress","#
                + #""attributes":{"title":"Deposit"},"state":\#(LiveActivityHarness.progressState),"#
                + #""startAt":"tomorrow"}"#)
        #expect(try malformed.status == 400 && (s.json(malformed)["error"]?["field"]?.stringValue) == "startAt")

        // Seven days ahead is the edge, and is held.
        let edge = try s.harness.start(s.partner, s.user, startAt: s.now.addingTimeInterval(7 * 86_400 - 60))
        #expect(try edge.status == 201 && (s.json(edge)["status"]?.stringValue) == "scheduled", "\(edge.text)")

        // A time already past (or a few seconds ahead) means now: sent at once, no sweep needed.
        let past = try s.harness.start(s.partner, s.user, startAt: s.now.addingTimeInterval(-30))
        #expect(try past.status == 201 && (s.json(past)["status"]?.stringValue) == "active", "\(past.text)")
        let id = try s.harness.activityID(past)
        try await s.harness.workers.waitUntil("the start reached the iPhone") { try s.received(id).apns.count == 1 }
        #expect(try s.json(s.harness.get(s.partner, id))["startAt"] == nil)
    }

    @Test func aCancelledScheduledStartIsNeverSentAndUpdatesWaitForTheStart() async throws {
        let s = try Self.setup()
        let startAt = s.now.addingTimeInterval(Self.ahead)
        let id = try s.harness.activityID(s.harness.start(s.partner, s.user, startAt: startAt))

        let update = try s.harness.update(s.partner, id, #"{"state":{"progress":0.5}}"#)
        #expect(update.status == 409, "\(update.text)")
        #expect(try s.json(update)["error"]?["code"]?.stringValue == "activity_scheduled")

        let cancel = try s.harness.end(s.partner, id)
        #expect(cancel.status == 200, "\(cancel.text)")
        #expect(try s.json(cancel)["status"]?.stringValue == "cancelled")
        let again = try s.harness.end(s.partner, id, #"{"alert":{"title":"Bye"}}"#)
        #expect(try again.status == 200 && (s.json(again)["status"]?.stringValue) == "cancelled", "idempotent")
        let late = try s.harness.update(s.partner, id, #"{"state":{"progress":0.5}}"#)
        #expect(try late.status == 409 && (s.json(late)["error"]?["code"]?.stringValue) == "activity_ended")

        s.clock.advance(by: Self.ahead + 1)
        try await s.sweeps()
        // An immediate start afterwards reaches the simulator: anything the cancelled one sent would be before it.
        let later = try s.harness.activityID(s.harness.start(s.partner, s.user))
        try await s.harness.workers.waitUntil("the later start reached the iPhone") {
            try s.received(later).apns.count == 1
        }
        #expect(try s.received(id).apns.isEmpty && s.received(id).fcm.isEmpty, "never sent")
        #expect(try s.json(s.harness.get(s.partner, id))["status"]?.stringValue == "cancelled")
        #expect(try s.events(id).map(\.kind) == ["cancel", "schedule"])
        #expect(try s.events(id).allSatisfy { $0.devices == 0 })
    }

    @Test func theStartBudgetIsCheckedWhenTheStartIsDue() async throws {
        let s = try Self.setup()
        let startAt = s.now.addingTimeInterval(Self.ahead)
        let id = try s.harness.activityID(s.harness.start(s.partner, s.user, startAt: startAt))
        // The hour's starts for this user and mini-app (3 by default) spent between the intake and the start's time.
        for _ in 0..<3 {
            _ = try s.harness.activityID(s.harness.start(s.partner, s.user))
        }

        s.clock.advance(by: Self.ahead + 1)
        try await s.harness.workers.waitUntil("the sweep decided the start") {
            try s.json(s.harness.get(s.partner, id))["status"]?.stringValue != "scheduled"
        }
        let refused = try s.json(s.harness.get(s.partner, id))
        #expect(refused["status"]?.stringValue == "refused")
        #expect(refused["refusal"]?.stringValue == "starts_per_user_app")
        #expect(refused["endedAt"]?.stringValue != nil)
        let events = try s.events(id)
        #expect(events.map(\.kind) == ["refuse", "schedule"])
        #expect(events.first?.reason == "starts_per_user_app")
        try await s.sweeps()
        #expect(try s.received(id).apns.isEmpty && s.received(id).fcm.isEmpty, "not sent")
        #expect(try s.harness.db.count("SELECT count(*) FROM deliveries WHERE activity_id = $1::uuid", [id]) == 0)
        #expect(s.worker.metrics.render().contains("herald_worker_activity_scheduled_refused_total 1"))
    }

    @Test func anOptOutAfterTheIntakeRefusesTheStartWhenDue() async throws {
        let s = try Self.setup()
        let id = try s.harness.activityID(
            s.harness.start(s.partner, s.user, startAt: s.now.addingTimeInterval(Self.ahead)))
        try s.harness.expect(
            s.harness.host("PUT", "/api/internal/users/\(s.user.id)/opt-outs/\(s.partner.miniApp)"), [200, 201, 204])

        s.clock.advance(by: Self.ahead + 1)
        try await s.harness.workers.waitUntil("the sweep decided the start") {
            try s.json(s.harness.get(s.partner, id))["status"]?.stringValue != "scheduled"
        }
        let refused = try s.json(s.harness.get(s.partner, id))
        #expect(refused["status"]?.stringValue == "refused")
        #expect(refused["refusal"]?.stringValue == "opted_out")
        #expect(try s.events(id).first?.reason == "opted_out")
        #expect(try s.received(id).apns.isEmpty && s.received(id).fcm.isEmpty, "not sent")
    }

    @Test func aStartDueInsideTheUsersQuietHoursIsRefused() async throws {
        let s = try Self.setup()
        let startAt = s.now.addingTimeInterval(Self.ahead)
        let id = try s.harness.activityID(s.harness.start(s.partner, s.user, startAt: startAt))
        // Quiet hours (UTC) from an hour before the start's time to an hour after it.
        let minutes = { (date: Date) in Int(date.timeIntervalSince1970 / 60) % 1_440 }
        let start = QuietHours.text(minutes(startAt.addingTimeInterval(-3_600)))
        let end = QuietHours.text(minutes(startAt.addingTimeInterval(3_600)))
        try s.harness.expect(
            s.harness.host(
                "PUT", "/api/internal/users/\(s.user.id)",
                #"{"tenantId":"t1","emails":["\#(s.user.email)"],"timeZone":"UTC","#
                    + #""quietHours":{"start":"\#(start)","end":"\#(end)"}}"#), [200])

        s.clock.advance(by: Self.ahead + 1)
        try await s.harness.workers.waitUntil("the sweep decided the start") {
            try s.json(s.harness.get(s.partner, id))["status"]?.stringValue != "scheduled"
        }
        #expect(try s.json(s.harness.get(s.partner, id))["refusal"]?.stringValue == "quiet_hours")
        #expect(try s.events(id).first?.reason == "quiet_hours")
        #expect(try s.received(id).apns.isEmpty && s.received(id).fcm.isEmpty, "not sent")
    }

    @Test func severalWorkersSendEachScheduledStartOnce() async throws {
        let s = try Self.setup()
        for _ in 0..<2 {
            try s.harness.workers.startWorker(clock: s.clock) { $0.activitySweeper.interval = .milliseconds(20) }
        }
        var starts: [(id: String, user: LiveActivityHarness.User)] = []
        for _ in 0..<8 {
            let user = try s.harness.user(sessionWith: [s.partner.miniApp])
            let id = try s.harness.activityID(
                s.harness.start(s.partner, user, startAt: s.now.addingTimeInterval(Self.ahead)))
            starts.append((id, user))
        }
        s.clock.advance(by: Self.ahead + 1)
        try await s.harness.workers.waitUntil("every start reached its devices") {
            starts.allSatisfy { start in
                let apns = s.harness.apnsPushes(to: start.user.pushToStartToken ?? "")
                let fcm = s.harness.fcmMessages(to: start.user.fcmToken ?? "")
                return apns.count >= 1 && fcm.count >= 1
            }
        }
        // Three sweepers at once: each start was decided once and sent once per device.
        try await s.sweeps()
        for start in starts {
            #expect(s.harness.apnsPushes(to: try #require(start.user.pushToStartToken)).count == 1)
            #expect(s.harness.fcmMessages(to: try #require(start.user.fcmToken)).count == 1)
            #expect(try s.events(start.id).map(\.kind) == ["start", "schedule"])
        }
    }
}
