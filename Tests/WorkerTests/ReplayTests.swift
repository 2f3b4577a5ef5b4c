import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

@testable import Simulator

/// `heraldctl replay` end to end: pushes through the intake fail at the simulator, the real heraldctl
/// executable replays them, workers send them again.
@Suite("heraldctl replay", .serialized, .requiresDatabase)
struct ReplayTests {
    struct Fixture {
        let harness: LiveActivityHarness
        let partner: LiveActivityHarness.Partner
        /// user id -> APNs token
        let users: [(id: String, email: String, token: String)]
    }

    /// A partner and `count` users, each with one iPhone whose APNs token the test knows.
    static func fixture(users count: Int) throws -> Fixture {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        var users: [(String, String, String)] = []
        for _ in 0..<count {
            let id = "replay-\(UUID().uuidString.prefix(8).lowercased())"
            let email = "\(id)@example.com"
            let token = LiveActivityHarness.hexToken()
            try harness.expect(
                harness.host("PUT", "/api/internal/users/\(id)", #"{"tenantId":"t1","emails":["\#(email)"]}"#),
                [200, 201])
            try harness.expect(
                harness.host(
                    "PUT", "/api/internal/users/\(id)/devices/iphone",
                    """
                    {"platform":"ios","environment":"sandbox","apnsToken":"\(token)","bundleId":"\(harness.workers.credentials.apnsTopic)"}
                    """), [200, 201])
            users.append((id, email, token))
        }
        return Fixture(harness: harness, partner: partner, users: users)
    }

    static func push(_ fixture: Fixture, to emails: [String], ttlSeconds: Int? = nil) throws -> UUID {
        let recipients = emails.map { "\"\($0)\"" }.joined(separator: ",")
        let ttl = ttlSeconds.map { #","ttlSeconds":\#($0)"# } ?? ""
        let response = try fixture.harness.expect(
            fixture.harness.request(
                "POST", "/api/partners/notifications/push", token: fixture.partner.apiKey,
                json: #"{"recipients":{"emails":[\#(recipients)]},"title":"Deposit","body":"1/6"\#(ttl)}"#), [202])
        let id = try JSONParser.parse(response.body)["requestId"]?.stringValue ?? ""
        return try #require(UUID(uuidString: id), "\(response.body)")
    }

    static func status(_ fixture: Fixture, _ request: UUID) throws -> JSONValue {
        let response = try fixture.harness.request(
            "GET", "/api/partners/notifications/push/\(request.uuidString.lowercased())",
            token: fixture.partner.apiKey)
        return try JSONParser.parse(response.body)
    }

    /// heraldctl against the fixture's database; the JSON it printed.
    static func replay(_ fixture: Fixture, _ arguments: [String]) throws -> (
        status: Int32, json: JSONValue?, output: String
    ) {
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = fixture.harness.db.url
        let result = try ChildProcess.run(
            TestEnvironment.binDirectory.appendingPathComponent("heraldctl"),
            ["replay"] + arguments, environment: environment)
        let json = try? JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        return (result.status, json, result.output)
    }

    static func counts(_ json: JSONValue?) -> [String: Int] {
        var counts: [String: Int] = [:]
        counts["matched"] = json?["matched"]?.numberValue.map { Int($0) }
        counts["replayed"] = json?["replayed"]?.numberValue.map { Int($0) }
        for key in ["token_invalid", "opted_out", "device_removed", "already_replayed"] {
            counts[key] = json?["skipped"]?[key]?.numberValue.map { Int($0) }
        }
        return counts
    }

    @Test(
        "replay: a dry run counts by skip reason and changes nothing; the replay sends the same bytes under the same id in the bulk lane, never to an invalid token, a removed device or an opted-out user; the request goes back to sending, then completed; a second run sends nothing"
    )
    func replayFlow() async throws {
        let fixture = try Self.fixture(users: 5)
        let harness = fixture.harness
        // Every first send is refused for good (a permanent 400), every later one accepted.
        for user in fixture.users {
            harness.simulator.setFault(
                SimulatorFault(status: 400, reason: "BadCollapseId", times: 1), token: user.token)
        }
        let request = try Self.push(fixture, to: fixture.users.map(\.email))
        let worker = try harness.workers.startWorker()
        try await harness.workers.waitUntil("the five deliveries failed") {
            try Self.status(fixture, request)["failed"] == .number(5)
        }
        worker.drain()
        #expect(try Self.status(fixture, request)["status"] == .string("completed"))

        // After the failure: user 1's token is declared dead, user 2 removes the phone, user 3 opts out.
        try harness.db.connection.execute(
            "UPDATE devices SET apns_token_invalidated_at = now() WHERE user_id = '\(fixture.users[1].id)'")
        try harness.expect(
            harness.host("DELETE", "/api/internal/users/\(fixture.users[2].id)/devices/iphone"), [200, 204])
        try harness.expect(
            harness.host("PUT", "/api/internal/users/\(fixture.users[3].id)/opt-outs/\(fixture.partner.miniApp)"),
            [200, 201, 204])

        let id = request.uuidString.lowercased()
        let dry = try Self.replay(fixture, ["--request", id, "--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.output)")
        #expect(
            Self.counts(dry.json) == [
                "matched": 5, "replayed": 0, "token_invalid": 1, "opted_out": 1,
                "device_removed": 1, "already_replayed": 0,
            ], "\(dry.output)")
        #expect(try harness.db.count("SELECT count(*) FROM deliveries") == 0)
        #expect(try harness.db.count("SELECT count(*) FROM delivery_history WHERE replayed_at IS NOT NULL") == 0)
        #expect(try Self.status(fixture, request)["failed"] == .number(5))

        let replayed = try Self.replay(fixture, ["--request", id, "--json"])
        #expect(replayed.status == 0, "\(replayed.output)")
        #expect(
            Self.counts(replayed.json) == [
                "matched": 5, "replayed": 2, "token_invalid": 1, "opted_out": 1,
                "device_removed": 1, "already_replayed": 0,
            ], "\(replayed.output)")
        // Queued again in the bulk lane, the request pending again.
        #expect(
            try harness.db.count("SELECT count(*) FROM deliveries WHERE lane = 1 AND request_id = $1", [request]) == 2)
        let pending = try Self.status(fixture, request)
        #expect(pending["status"] == .string("sending"), "\(pending)")
        #expect(pending["failed"] == .number(3) && pending["pending"] == .number(2), "\(pending)")

        try harness.workers.startWorker()
        try await harness.workers.waitUntil("the replayed deliveries were sent") {
            try Self.status(fixture, request)["sent"] == .number(2)
        }
        let done = try Self.status(fixture, request)
        #expect(done["status"] == .string("completed") && done["failed"] == .number(3), "\(done)")
        for user in [fixture.users[0], fixture.users[4]] {
            let records = harness.simulator.received(token: user.token)
            try #require(records.count == 2, "\(records.map(\.status))")
            #expect(records[0].status == 400 && records[1].status == 200)
            // What was sent the first time, byte for byte (same delivery id and signature).
            #expect(records[0].body == records[1].body)
        }
        for user in fixture.users[1...3] {
            #expect(harness.simulator.received(token: user.token).count == 1, "no replay to \(user.id)")
        }

        let again = try Self.replay(fixture, ["--request", id, "--json"])
        #expect(
            Self.counts(again.json) == [
                "matched": 5, "replayed": 0, "token_invalid": 1, "opted_out": 1,
                "device_removed": 1, "already_replayed": 2,
            ], "\(again.output)")
        #expect(try harness.db.count("SELECT count(*) FROM deliveries") == 0)
    }

    @Test(
        "replay selects by outcome, reason, partner and finish time; --realtime queues in the realtime lane; sent and token_invalid rows never match"
    )
    func selection() async throws {
        let fixture = try Self.fixture(users: 4)
        let harness = fixture.harness
        // users 0-1: failed (400); user 2: dead (500 every time, 4 attempts); user 3: sent.
        for user in fixture.users[0...1] {
            harness.simulator.setFault(
                SimulatorFault(status: 400, reason: "BadCollapseId", times: 1), token: user.token)
        }
        harness.simulator.setFault(
            SimulatorFault(status: 500, reason: "InternalServerError", times: 4),
            token: fixture.users[2].token)
        let request = try Self.push(fixture, to: fixture.users.map(\.email))
        let worker = try harness.workers.startWorker()
        try await harness.workers.waitUntil("every delivery finished") {
            let status = try Self.status(fixture, request)
            return status["status"] == .string("completed")
        }
        worker.drain()
        // Expired: a push whose TTL passed before any worker ran.
        let expiredRequest = try Self.push(fixture, to: [fixture.users[3].email], ttlSeconds: 1)
        // Its second passed (moved back in the row rather than waited for: the claim compares with now()).
        try harness.db.connection.query(
            """
            UPDATE deliveries SET expires_at = now() - interval '1 second' WHERE request_id = $1::uuid
            """, [expiredRequest.uuidString.lowercased()])
        let expiring = try harness.workers.startWorker()
        try await harness.workers.waitUntil("the short-lived push expired") {
            try Self.status(fixture, expiredRequest)["failed"] == .number(1)
        }
        expiring.drain()
        #expect(try harness.db.count("SELECT count(*) FROM delivery_history WHERE outcome = 'expired'") == 1)

        let partner = fixture.partner.miniApp
        let dead = try Self.replay(fixture, ["--partner", partner, "--outcome", "dead", "--dry-run", "--json"])
        #expect(Self.counts(dead.json)["matched"] == 1, "\(dead.output)")
        let byReason = try Self.replay(
            fixture, ["--partner", partner, "--reason", "BadCollapseId", "--dry-run", "--json"])
        #expect(Self.counts(byReason.json)["matched"] == 2, "\(byReason.output)")
        let future = try Self.replay(fixture, ["--since", ISO8601.format(Date().addingTimeInterval(3_600)), "--json"])
        #expect(Self.counts(future.json)["matched"] == 0, "\(future.output)")
        let all = try Self.replay(fixture, ["--partner", fixture.partner.id, "--since", "1h", "--dry-run", "--json"])
        #expect(Self.counts(all.json)["matched"] == 4, "failed, failed, dead, expired: \(all.output)")

        // The expired push replays with a fresh TTL (the request's ttlSeconds from now), in the realtime lane.
        let expired = try Self.replay(
            fixture,
            [
                "--request", expiredRequest.uuidString, "--outcome", "expired",
                "--realtime", "--json",
            ])
        #expect(Self.counts(expired.json)["replayed"] == 1, "\(expired.output)")
        let row = try #require(
            try harness.db.connection.query(
                "SELECT lane, expires_at > now() FROM deliveries WHERE request_id = $1", [expiredRequest]
            ).first)
        #expect(try row.int(0) == 0 && row.bool(1))
    }

    @Test("two replays of the same rows at once queue each row once")
    func concurrentReplays() async throws {
        let fixture = try Self.fixture(users: 30)
        let harness = fixture.harness
        for user in fixture.users {
            harness.simulator.setFault(
                SimulatorFault(status: 400, reason: "BadCollapseId", times: 1), token: user.token)
        }
        let request = try Self.push(fixture, to: fixture.users.map(\.email))
        let worker = try harness.workers.startWorker()
        try await harness.workers.waitUntil("every delivery failed") {
            try Self.status(fixture, request)["failed"] == .number(30)
        }
        worker.drain()
        let results = runInParallel(3) { _ in try? Self.replay(fixture, ["--request", request.uuidString, "--json"]) }
        let replayed = results.compactMap { Self.counts($0?.json)["replayed"] }
        #expect(replayed.count == 3 && replayed.reduce(0, +) == 30, "\(results.map { $0?.output ?? "nil" })")
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE request_id = $1", [request]) == 30)
        #expect(try Self.status(fixture, request)["failed"] == .number(0))
    }
}
