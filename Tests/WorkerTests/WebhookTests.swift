import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Postgres
import Synchronization
import Testing
import Worker

/// Delivery webhooks end to end: events written by the triggers of sql/functions/webhook_event.sql when a
/// request completes, sent by the worker's WebhookSender to a local HTTPS receiver, signed, retried, given
/// up, never sent twice by a drained worker.
@Suite("Delivery webhooks", .requiresDatabase)
struct WebhookTests {
    static let secret = "whsec_" + String(repeating: "ab", count: 32)

    /// A receiver that records each POST and answers what `answer` says for the event's n-th attempt (1-based).
    final class Receiver: Sendable {
        struct Received: Sendable {
            let eventID: String
            let signature: String
            let body: [UInt8]
            let contentType: String?
        }

        final class Log: Sendable {
            let received = Mutex<[Received]>([])
            let concurrent = Mutex<(now: Int, most: Int)>((0, 0))
        }

        private let log = Log()
        private let server: HTTP2Server

        init(delay: Duration = .zero, answer: @escaping @Sendable (_ attempt: Int) -> Int = { _ in 200 }) throws {
            let log = log
            server = try TestTLSServer.start(
                handler: ClosureHandler { request, responder in
                    let entry = Received(
                        eventID: request.header("herald-event-id") ?? "",
                        signature: request.header("herald-signature") ?? "", body: request.body,
                        contentType: request.header("content-type"))
                    let attempt = log.received.withLock { list in
                        list.append(entry)
                        return list.count { $0.eventID == entry.eventID }
                    }
                    log.concurrent.withLock {
                        $0.now += 1; $0.most = max($0.most, $0.now)
                    }
                    let respond: @Sendable () -> Void = {
                        log.concurrent.withLock { $0.now -= 1 }
                        let status = answer(attempt)
                        // No body on a 204 or 304 (HTTP forbids one; curl reports the stream broken).
                        let body = [204, 304].contains(status) ? [] : Array("ok".utf8)
                        responder.respond(HTTP2Response(status: status, body: body))
                    }
                    if delay > .zero {
                        DispatchQueue.global().asyncAfter(deadline: .now() + delay / .seconds(1), execute: respond)
                    } else {
                        respond()
                    }
                })
        }

        var url: String { "https://127.0.0.1:\(server.port)/hooks/herald" }
        var all: [Received] { log.received.withLock { $0 } }
        var mostAtOnce: Int { log.concurrent.withLock { $0.most } }
        func stop() { server.stop() }
    }

    /// A worker quick to retry, trusting the test CA and allowed to reach loopback.
    static func startWorker(
        _ harness: WorkerHarness, clock: any HeraldClock = SystemClock(),
        _ adjust: (inout WorkerConfiguration) -> Void = { _ in }
    ) throws -> DeliveryWorker {
        let configuration = harness.configuration { configuration in
            configuration.webhooks.fetch.allowPrivateAddresses = true
            configuration.webhooks.fetch.extraCAFile = TestCredentials.shared.caFile
            configuration.webhooks.pollInterval = .milliseconds(50)
            configuration.webhooks.retry.backoff = ExponentialBackoff(
                base: .milliseconds(20), maximum: .milliseconds(100))
            adjust(&configuration)
        }
        let worker = DeliveryWorker(
            configuration: configuration, upstreams: try WorkerUpstreams.make(configuration),
            clock: clock)
        worker.start()
        return worker
    }

    static func setWebhook(_ harness: WorkerHarness, partner: UUID, url: String) throws {
        _ = try harness.db.connection.query(
            "UPDATE partners SET webhook_url = $2, webhook_secret = $3 WHERE id = $1",
            [partner, url, secret])
    }

    static func events(_ harness: WorkerHarness) throws -> [(
        state: String, attempts: Int, error: String?, status: Int?
    )] {
        try harness.db.connection.query(
            "SELECT state, attempts, last_error, last_status FROM webhook_events ORDER BY created_at"
        ).rows.map { row in
            (try row.string(0), try row.int(1), row.optionalString(2), try row.optionalInt(3))
        }
    }

    @Test("a completed request's event reaches the receiver once, signed; the body has the documented fields")
    func delivered() throws {
        let harness = try WorkerHarness()
        let receiver = try Receiver()
        defer { receiver.stop() }
        let queued = try harness.queue(users: 3)
        try Self.setWebhook(harness, partner: queued.partner, url: receiver.url)
        let worker = try Self.startWorker(harness)
        defer { worker.drain() }

        try harness.waitUntilBlocking("the webhook") {
            try receiver.all.count == 1 && Self.events(harness).first?.state == "delivered"
        }
        let received = receiver.all[0]
        #expect(received.contentType == "application/json")
        #expect(
            WebhookSignature.verify(
                header: received.signature, secret: Self.secret, body: received.body,
                now: Int(Date().timeIntervalSince1970)))
        #expect(
            !WebhookSignature.verify(
                header: received.signature, secret: Self.secret + "x", body: received.body,
                now: Int(Date().timeIntervalSince1970)))
        let body = try JSONParser.parse(received.body)
        #expect(
            body.objectMembers?.map(\.key) == [
                "type", "id", "requestId", "sent", "failed", "suppressed", "superseded", "cancelled", "completedAt",
            ])
        #expect(body["type"] == .string("push.completed"))
        #expect(body["id"] == .string(received.eventID))
        #expect(body["requestId"] == .string(queued.request.id.uuidString.lowercased()))
        #expect(body["sent"] == .number(3) && body["failed"] == .number(0) && body["suppressed"] == .number(0))
        #expect(body["superseded"] == .number(0) && body["cancelled"] == .number(0))
        #expect(ISO8601.parse(body["completedAt"]?.stringValue ?? "") != nil)
        let event = try #require(try Self.events(harness).first)
        #expect(event.attempts == 1 && event.status == 200 && event.error == nil)
        #expect(worker.metrics.webhooks("delivered") == 1)
        #expect(worker.metrics.render().contains("herald_worker_webhooks_total{outcome=\"delivered\"} 1"))
        // A later event delivered shows the sender went on polling: the first was not sent again meanwhile.
        _ = try harness.db.request(partner: queued.partner, deliveries: 0)
        try harness.waitUntilBlocking("a later event") { receiver.all.count >= 2 }
        #expect(receiver.all.count == 2)
        #expect(Set(receiver.all.map(\.eventID)).count == 2)
    }

    @Test("a partner without a webhook gets no event")
    func noWebhook() throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 2)
        let worker = try Self.startWorker(harness)
        defer { worker.drain() }
        try harness.waitUntilBlocking("the request's completion") {
            try harness.db.counts(of: queued.request).sent == 2
        }
        #expect(try harness.db.count("SELECT count(*) FROM webhook_events") == 0)
    }

    @Test("500s are retried with backoff until a 2xx; 429 too")
    func retried() throws {
        let harness = try WorkerHarness()
        let receiver = try Receiver { attempt in attempt == 1 ? 500 : attempt == 2 ? 429 : 204 }
        defer { receiver.stop() }
        let queued = try harness.queue(users: 1)
        try Self.setWebhook(harness, partner: queued.partner, url: receiver.url)
        let worker = try Self.startWorker(harness)
        defer { worker.drain() }
        try harness.waitUntilBlocking("delivery after two retries") {
            (try Self.events(harness)).first?.state == "delivered"
        }
        #expect(receiver.all.count == 3)
        #expect(Set(receiver.all.map(\.eventID)).count == 1, "every attempt carries the same event id")
        #expect(Set(receiver.all.map { $0.body }).count == 1, "and the same body")
        #expect(try Self.events(harness).first?.attempts == 3)
        #expect(worker.metrics.webhooks("retried") == 2 && worker.metrics.webhooks("delivered") == 1)
    }

    @Test("other answers fail the event at once", arguments: [400, 404, 410, 301])
    func failedAtOnce(_ status: Int) throws {
        let harness = try WorkerHarness()
        let receiver = try Receiver { _ in status }
        defer { receiver.stop() }
        let queued = try harness.queue(users: 1)
        try Self.setWebhook(harness, partner: queued.partner, url: receiver.url)
        let worker = try Self.startWorker(harness)
        defer { worker.drain() }
        try harness.waitUntilBlocking("the failure") { (try Self.events(harness)).first?.state == "failed" }
        let event = try #require(try Self.events(harness).first)
        #expect(event.attempts == 1 && event.status == status && event.error == "http_\(status)")
        #expect(receiver.all.count == 1)
    }

    /// A clock a day and an hour ahead: every event's 24-hour window has passed.
    struct LaterClock: HeraldClock {
        var now: Date { Date().addingTimeInterval(25 * 3600) }
    }

    @Test("past the 24-hour window a retryable answer fails the event (an injected clock)")
    func windowPassed() throws {
        let harness = try WorkerHarness()
        let receiver = try Receiver { _ in 503 }
        defer { receiver.stop() }
        let queued = try harness.queue(users: 1)
        try Self.setWebhook(harness, partner: queued.partner, url: receiver.url)
        let worker = try Self.startWorker(harness, clock: LaterClock())
        defer { worker.drain() }
        try harness.waitUntilBlocking("the failure") { (try Self.events(harness)).first?.state == "failed" }
        let event = try #require(try Self.events(harness).first)
        #expect(event.error == "http_503" && event.attempts == 1)
        #expect(receiver.all.count == 1)
    }

    @Test("without HERALD_WEBHOOK_ALLOW_PRIVATE a loopback receiver is refused and the event failed, nothing sent")
    func loopbackRefused() throws {
        let harness = try WorkerHarness()
        let receiver = try Receiver()
        defer { receiver.stop() }
        let queued = try harness.queue(users: 1)
        try Self.setWebhook(harness, partner: queued.partner, url: receiver.url)
        let worker = try Self.startWorker(harness) { $0.webhooks.fetch.allowPrivateAddresses = false }
        defer { worker.drain() }
        try harness.waitUntilBlocking("the failure") { (try Self.events(harness)).first?.state == "failed" }
        #expect(try Self.events(harness).first?.error == "address_refused")
        #expect(receiver.all.isEmpty)
    }

    @Test("a slow endpoint holds at most its per-partner share; another partner's events go on meanwhile")
    func perPartnerCap() throws {
        let harness = try WorkerHarness()
        let slow = try Receiver(delay: .milliseconds(400))
        let fast = try Receiver()
        defer { slow.stop(); fast.stop() }
        let slowPartner = try harness.db.partner()
        let fastPartner = try harness.db.partner()
        try Self.setWebhook(harness, partner: slowPartner.id, url: slow.url)
        try Self.setWebhook(harness, partner: fastPartner.id, url: fast.url)
        // Ten completed requests of each partner: requests with nothing to send complete as they are written.
        for partner in [slowPartner.id, fastPartner.id] {
            for _ in 0..<10 { _ = try harness.db.request(partner: partner, deliveries: 0) }
        }
        #expect(try harness.db.count("SELECT count(*) FROM webhook_events") == 20)
        let worker = try Self.startWorker(harness) { configuration in
            configuration.webhooks.perPartner = 2
            configuration.webhooks.maxInFlight = 4
        }
        defer { worker.drain() }
        try harness.waitUntilBlocking("the fast partner's events") { fast.all.count == 10 }
        #expect(slow.all.count < 10, "the fast partner did not wait for the slow one")
        try harness.waitUntilBlocking("the slow partner's events") { slow.all.count == 10 }
        #expect(slow.mostAtOnce <= 2)
        try harness.waitUntilBlocking("every event recorded") {
            try harness.db.count("SELECT count(*) FROM webhook_events WHERE state = 'delivered'") == 20
        }
    }

    @Test("a drained worker waits for its answers and records them: a restart sends nothing twice")
    func restartSendsNothingTwice() throws {
        let harness = try WorkerHarness()
        let receiver = try Receiver(delay: .milliseconds(300))
        defer { receiver.stop() }
        let partner = try harness.db.partner()
        try Self.setWebhook(harness, partner: partner.id, url: receiver.url)
        for _ in 0..<6 { _ = try harness.db.request(partner: partner.id, deliveries: 0) }
        let first = try Self.startWorker(harness) { $0.webhooks.perPartner = 3 }
        try harness.waitUntilBlocking("sends in flight") { !receiver.all.isEmpty }
        first.drain()
        let second = try Self.startWorker(harness) { $0.webhooks.perPartner = 3 }
        defer { second.drain() }
        try harness.waitUntilBlocking("every event delivered") {
            try harness.db.count("SELECT count(*) FROM webhook_events WHERE state = 'delivered'") == 6
        }
        // A later event delivered shows the second worker went on polling: nothing was sent twice meanwhile.
        _ = try harness.db.request(partner: partner.id, deliveries: 0)
        try harness.waitUntilBlocking("a later event") { receiver.all.count >= 7 }
        #expect(receiver.all.count == 7)
        #expect(Set(receiver.all.map(\.eventID)).count == 7)
    }
    @Test(
        "an activity ended or expired writes its event with its pushes' outcomes so far; replaced writes none",
        arguments: ["ended", "expired", "replaced"])
    func activityEvents(_ status: String) throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try Self.setWebhook(harness, partner: partner.id, url: "https://hooks.example.com/h")
        try harness.db.user("u-activity")
        let activity = UUID()
        let connection = harness.db.connection
        try connection.query(
            """
            INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                         last_timestamp, created_at, updated_at, expires_at, apns_end_payload,
                                         fcm_end_payload, end_timestamp)
            VALUES ($1, $2, $3, 'u-activity', 'progress', '{}', '{}', '{}', 1, now(), now(), now() + interval '1 hour',
                    '{}', '{}', 2)
            """, [activity, partner.id, partner.miniApp])
        for outcome in ["sent", "sent", "failed", "suppressed", "superseded"] {
            try connection.query(
                """
                INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                              attempts, created_at, finished_at)
                VALUES (gen_random_uuid(), $1, $2, 0, 'apns', 'u-activity', 'iphone', $3, 1, now(), now())
                """, [activity, partner.id, outcome])
        }
        try connection.query(
            "UPDATE live_activities SET status = $2, ended_at = now() WHERE id = $1", [activity, status])
        let bodies = try connection.query("SELECT body FROM webhook_events WHERE subject_id = $1", [activity]).rows
        guard status != "replaced" else {
            #expect(bodies.isEmpty)
            return
        }
        let body = try JSONParser.parse(try #require(bodies.first).string(0))
        #expect(bodies.count == 1)
        #expect(
            body.objectMembers?.map(\.key) == [
                "type", "id", "activityId", "sent", "failed", "suppressed", "completedAt",
            ])
        #expect(body["type"] == .string("activity.\(status)"))
        #expect(body["activityId"] == .string(activity.uuidString.lowercased()))
        #expect(body["sent"] == .number(2) && body["failed"] == .number(1) && body["suppressed"] == .number(1))
        // Ending it again (an update to a finished activity) writes nothing more.
        try connection.query("UPDATE live_activities SET status = 'expired' WHERE id = $1", [activity])
        #expect(try harness.db.count("SELECT count(*) FROM webhook_events WHERE subject_id = $1", [activity]) == 1)
    }
}
