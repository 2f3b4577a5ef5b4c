import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

/// The host's delivery events (Migrations/functions/delivery_event.sql, delivery_find.sql) against a private
/// database: a delivery found by the id its payload carries, single or a group row's member, in the outbox or in
/// history; each event stored and counted once; push.opened coalesced per request; the lookup's indexes.
@Suite("Delivery events", .serialized, .requiresDatabase)
struct DeliveryEventTests {
    let db: QueueDatabase
    let store: DeliveryEventStore

    init() throws {
        db = try QueueDatabase()
        store = DeliveryEventStore(pool: PostgresPool(configuration: .init(url: db.url, maxConnections: 1)))
    }

    /// A request of `count` APNs deliveries to users u1..u`count` (16 or more: group rows, as the writer makes them).
    func request(_ partner: (id: UUID, miniApp: String), count: Int) throws -> (
        request: (id: UUID, createdAt: Date), ids: [UUID]
    ) {
        for index in 1...count { try db.user("u\(index)", apnsToken: String(format: "%064x", index)) }
        return try db.enqueueRequest(partner: partner, deliveries: (1...count).map { ("u\($0)", .apns) })
    }

    /// The request's rows leave the outbox as a sent completion leaves them (a group row keeps its members).
    func finish(_ request: UUID) throws {
        _ = try db.connection.query(
            """
            WITH moved AS (DELETE FROM deliveries WHERE request_id = $1 RETURNING *)
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, created_at, finished_at, request_created_at, members,
                                          member_users, member_devices)
            SELECT id, request_id, partner_id, lane, service, CASE WHEN members IS NULL THEN user_id ELSE '' END,
                   CASE WHEN members IS NULL THEN device_id ELSE '' END, 'sent', 1, created_at, now(),
                   request_created_at, members, member_users, member_devices
              FROM moved
            """, [request])
        _ = try db.connection.query("UPDATE push_requests SET sent = deliveries WHERE id = $1", [request])
    }

    func counts(_ request: UUID) throws -> [Int] {
        let row = try #require(
            try db.connection.query(
                "SELECT sent, received, opened, dismissed FROM push_requests WHERE id = $1", [request]
            ).first)
        return try (0..<4).map { try row.int($0) }
    }

    func record(_ id: UUID, _ event: DeliveryEventReport.Event, at: Date = Date(), user: String? = nil)
        throws -> DeliveryEventResult
    {
        try store.record(deliveryID: id, .init(event: event, at: at, userID: user), now: Date())
    }

    @Test("a group's member and a single delivery are found in the outbox and in history; each event counts once")
    func countedOnce() throws {
        let partner = try db.partner()
        let group = try request(partner, count: 20)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE request_id = $1", [group.request.id]) == 1)
        let singles = try db.enqueueRequest(partner: partner, deliveries: [("u1", .apns), ("u2", .apns)])

        // Still in the outbox (its completion not committed yet): a member of the group row.
        #expect(try record(group.ids[3], .received).outcome == .recorded)
        try finish(group.request.id)
        try finish(singles.request.id)
        // In history: the member again, opened now (received stays as first reported), and a single row.
        let earlier = Date().addingTimeInterval(-60)
        #expect(try record(group.ids[3], .opened, at: earlier).outcome == .recorded)
        #expect(try record(group.ids[3], .received).outcome == .repeated)
        #expect(try counts(group.request.id) == [20, 1, 1, 0])

        // Opened implies received, both counted once; a repeat changes nothing and answers the first time.
        let first = try record(singles.ids[0], .opened, at: earlier)
        #expect(first.outcome == .recorded)
        let again = try record(singles.ids[0], .opened)
        #expect(again.outcome == .repeated)
        #expect(again.at != nil && again.at == first.at)
        #expect(try record(singles.ids[0], .received).outcome == .repeated)
        #expect(try record(singles.ids[1], .dismissed).outcome == .recorded)
        #expect(try counts(singles.request.id) == [2, 2, 1, 1])
        #expect(try db.count("SELECT count(*) FROM delivery_events") == 6)
        // A time before the push's acceptance (a phone's clock behind) is stored as the acceptance.
        let behind = try record(group.ids[4], .received, at: group.request.createdAt.addingTimeInterval(-3_600))
        #expect(behind.at.map { $0 >= group.request.createdAt.addingTimeInterval(-0.001) } == true)
    }

    @Test("an unknown id, a Live Activity's delivery and another user's delivery are not found; nothing is written")
    func notFound() throws {
        let partner = try db.partner()
        try db.user("u1", apnsToken: String(format: "%064x", 1))
        let singles = try db.enqueueRequest(partner: partner, deliveries: [("u1", .apns)])
        let activityDelivery = UUIDv7.make(at: Date())
        _ = try db.connection.query(
            """
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, created_at, finished_at, activity_event)
            VALUES ($1, gen_random_uuid(), $2, 0, 'apns', 'u1', 'iphone', 'sent', 1, now(), now(), 'update')
            """, [activityDelivery, partner.id])
        #expect(try record(UUIDv7.make(at: Date()), .opened).outcome == .notFound)
        #expect(try record(UUID(), .opened).outcome == .notFound)
        #expect(try record(activityDelivery, .received).outcome == .notFound)
        #expect(try record(singles.ids[0], .opened, user: "u2").outcome == .notFound)
        #expect(try db.count("SELECT count(*) FROM delivery_events") == 0)
        #expect(try counts(singles.request.id) == [0, 0, 0, 0])
        #expect(try record(singles.ids[0], .opened, user: "u1").outcome == .recorded)
    }

    @Test("an event after its push's counting window changes nothing")
    func late() throws {
        let partner = try db.partner()
        try db.user("u1", apnsToken: String(format: "%064x", 1))
        let singles = try db.enqueueRequest(partner: partner, deliveries: [("u1", .apns)])
        let later = Date().addingTimeInterval(Double(DeliveryEventReport.countingDays) * 86_400 + 60)
        let result = try store.record(
            deliveryID: singles.ids[0], .init(event: .opened, at: later), now: later)
        #expect(result.outcome == .late)
        #expect(try db.count("SELECT count(*) FROM delivery_events") == 0)
        #expect(try counts(singles.request.id) == [0, 0, 0, 0])
    }

    @Test("opens coalesce into one pending push.opened per request with the newest counts; none without a webhook")
    func openedWebhookCoalesced() throws {
        let withHook = try db.partner()
        let without = try db.partner()
        _ = try db.connection.query(
            "UPDATE partners SET webhook_url = 'https://hooks.example/h', webhook_secret = 'whsec_x' WHERE id = $1",
            [withHook.id])
        let group = try request(withHook, count: 20)
        try finish(group.request.id)
        let quiet = try db.enqueueRequest(partner: without, deliveries: [("u1", .apns)])

        // A received alone queues nothing (the completion's push.completed is the one event so far).
        #expect(try record(group.ids[0], .received).outcome == .recorded)
        #expect(try db.count("SELECT count(*) FROM webhook_events WHERE type = 'push.opened'") == 0)
        for index in 0..<3 { #expect(try record(group.ids[index], .opened).outcome == .recorded) }
        #expect(try record(group.ids[0], .opened).outcome == .repeated)
        #expect(try record(quiet.ids[0], .opened).outcome == .recorded)
        // A dismissal while it waits updates its counts too.
        #expect(try record(group.ids[9], .dismissed).outcome == .recorded)

        let events = try db.connection.query(
            """
            SELECT id, partner_id, body, extract(epoch FROM available_at - created_at)::int AS delay FROM webhook_events
             WHERE type = 'push.opened'
            """)
        #expect(events.rows.count == 1)
        let event = try #require(events.first)
        #expect(try event.uuid(1) == withHook.id)
        #expect(try event.int(3) == DeliveryEventReport.openedWebhookDelaySeconds)
        let body = try JSONParser.parse(Array(try event.string(2).utf8))
        #expect(
            body.objectMembers?.map(\.key) == [
                "type", "id", "requestId", "sent", "received", "opened", "dismissed", "countedAt",
            ])
        #expect(body["type"] == .string("push.opened"))
        #expect(body["id"] == .string(try event.uuid(0).uuidString.lowercased()))
        #expect(body["requestId"] == .string(group.request.id.uuidString.lowercased()))
        #expect(body["sent"] == .number(20) && body["received"] == .number(4) && body["opened"] == .number(3))
        #expect(body["dismissed"] == .number(1))

        // Once a sender took it, the next open queues a new event.
        _ = try db.connection.query("UPDATE webhook_events SET state = 'sending' WHERE type = 'push.opened'")
        #expect(try record(group.ids[5], .opened).outcome == .recorded)
        let pending = "SELECT count(*) FROM webhook_events WHERE type = 'push.opened' AND state = 'pending'"
        #expect(try db.count(pending) == 1)
        #expect(try db.count(pending + #" AND body LIKE '%"opened":4%'"#) == 1)
        // The tried one fails and waits for its retry: it keeps the body it was sent with; opens rewrite the new one.
        _ = try db.connection.query(
            "UPDATE webhook_events SET state = 'pending', attempts = 1 WHERE type = 'push.opened' AND state = 'sending'"
        )
        #expect(try record(group.ids[6], .opened).outcome == .recorded)
        #expect(try db.count(pending) == 2)
        #expect(try db.count(pending + #" AND attempts = 1 AND body LIKE '%"opened":3%'"#) == 1)
        #expect(try db.count(pending + #" AND attempts = 0 AND body LIKE '%"opened":5%'"#) == 1)
    }

    @Test(
        "the lookup uses delivery_history_id, the members' GIN indexes and the outbox's primary key, in the months since the id's time"
    )
    func lookupPlan() throws {
        let c = db.connection
        let partner = try db.partner()
        _ = try c.query(
            """
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, created_at, finished_at, request_created_at, members,
                                          member_users, member_devices, activity_event)
            SELECT gen_random_uuid(), gen_random_uuid(), $1, 0, 'apns', 'u' || g, 'iphone', 'sent', 1,
                   now() - make_interval(mins => g), now() - make_interval(mins => g), now(),
                   CASE WHEN g % 20 = 0 THEN ARRAY[gen_random_uuid(), gen_random_uuid()] END,
                   CASE WHEN g % 20 = 0 THEN ARRAY['a', 'b'] END, CASE WHEN g % 20 = 0 THEN ARRAY['i', 'i'] END,
                   CASE WHEN g % 7 = 0 THEN 'update' END
              FROM generate_series(1, 20000) g
            """, [partner.id])
        _ = try c.query(
            """
            INSERT INTO deliveries (id, request_id, request_created_at, partner_id, service, user_id, device_id,
                                    environment, payload, available_at)
            SELECT gen_random_uuid(), gen_random_uuid(), now(), $1, 'apns', 'u' || g, 'iphone', 'production', '{}',
                   now() FROM generate_series(1, 5000) g
            """, [partner.id])
        try c.execute("ANALYZE delivery_history")
        try c.execute("ANALYZE deliveries")
        // The settings the reporting function runs its statements with (functions/planner_settings.sql).
        let settings = try c.query(
            "SELECT s FROM pg_proc, unnest(proconfig) s WHERE proname = 'herald_delivery_event'"
        ).rows.map { try $0.string(0).split(separator: "=", maxSplits: 1).map(String.init) }
        #expect(settings.contains(["plan_cache_mode", "force_generic_plan"]))
        for setting in settings { try c.execute("SET \(setting[0]) = '\(setting[1])'") }
        defer {
            _ = try? c.execute("DEALLOCATE find_delivery")
            for setting in settings { _ = try? c.execute("RESET \(setting[0])") }
        }
        try c.execute(
            "PREPARE find_delivery (uuid) AS SELECT request_id, user_id FROM herald_delivery_find($1)")
        let id = UUIDv7.make(at: Date()).uuidString.lowercased()
        let plan = try c.query("EXPLAIN EXECUTE find_delivery ('\(id)')").rows.map { try $0.string(0) }
            .joined(separator: "\n")
        let month = Self.partition(Date())
        #expect(plan.contains("delivery_history_\(month)_id_idx"), "\(plan)")
        #expect(plan.contains("delivery_history_\(month)_members_idx"), "\(plan)")
        #expect(plan.contains("deliveries_pkey"), "\(plan)")
        #expect(plan.contains("deliveries_members"), "\(plan)")
        #expect(!plan.contains("Seq Scan"), "\(plan)")
        // The months before the id's (less a day) are pruned.
        let previous = Self.partition(Date().addingTimeInterval(-40 * 86_400))
        if Calendar.utc.component(.day, from: Date()) > 1 {
            #expect(!plan.contains("delivery_history_\(previous)"), "\(plan)")
        }
    }

    @Test("the console's rates sum a partner's requests of the window through push_requests_mini_app, by id range")
    func engagementPlan() throws {
        let c = db.connection
        let partner = try db.partner(miniApp: "app.engaged")
        let other = try db.partner(miniApp: "app.other")
        // 20,000 requests each over the last 25 days, with UUIDv7 ids of their creation time, as the intake makes them.
        for (id, app) in [(partner.id, "app.engaged"), (other.id, "app.other")] {
            _ = try c.query(
                """
                INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, title, body, data, lane, recipients,
                                           deliveries, suppressed, missing, sent, received, opened)
                SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3)
                        || '-' || substr(r, 7, 12))::uuid, t, $1, $2, 'T', 'B', '{}', 0, 1, 2, 0, '{}', 2, 1, g % 2
                  FROM (SELECT g, t, lpad(to_hex(floor(extract(epoch FROM t) * 1000)::bigint), 12, '0') AS h,
                               md5($2 || g) AS r
                          FROM generate_series(1, 20000) g, LATERAL (SELECT now() - make_interval(secs => g * 108) AS t) x) y
                """, [id, app])
        }
        try c.execute("ANALYZE push_requests")
        // A day and half a step back: the day's 800 requests, whatever the few milliseconds since the insert.
        let since = Date().addingTimeInterval(-86_454)
        let query = Queries.Console.PartnerEngagement(since: since, sinceID: UUIDv7.lowest(at: since))
        let plan = try c.query("EXPLAIN " + Queries.Console.partnerEngagement.text, query.bindings).rows
            .map { try $0.string(0) }.joined(separator: "\n")
        #expect(plan.contains("push_requests_mini_app") || plan.contains("mini_app_id_id_idx"), "\(plan)")
        // No sequential scan but of the empty months ahead (a cost under 0.1).
        let scans = plan.split(separator: "\n").filter { $0.contains("Seq Scan on push_requests") }
        #expect(scans.allSatisfy { $0.contains("cost=0.00..0.0") }, "\(plan)")
        // The figures: the day's 800 requests of the partner, each 2 sent, 1 received, every other one opened.
        let rows = try c.rows(query)
        let engaged = try #require(rows.first { $0.partnerID == partner.id })
        #expect(engaged.sent == 1_600 && engaged.received == 800 && engaged.opened == 400, "\(engaged)")
        #expect(engaged.deliveryRate == 0.5 && engaged.openRate == 0.25)
    }

    static func partition(_ date: Date) -> String {
        let parts = Calendar.utc.dateComponents([.year, .month], from: date)
        return String(format: "%04d_%02d", parts.year!, parts.month!)
    }
}

extension Calendar {
    fileprivate static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
