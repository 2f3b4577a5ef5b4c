import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The one writer of push deliveries (sql/functions/outbox_write.sql), called as every push path calls it, and the
/// one expression of their expiry (sql/functions/push_expiry.sql).
@Suite(.requiresDatabase) struct OutboxWriterTests {
    /// The writer's call with three requests of one delivery each, due an hour apart from `due`, TTLs 60, 120 and
    /// 180 seconds; `only`, the requests to write; request 1 marked leased.
    static let writeSQL = """
        SELECT r_id, r_request FROM herald_outbox_write(
            0, $1::uuid[], ARRAY[$2::timestamptz, $2, $2], ARRAY[$3::uuid, $3, $3],
            ARRAY[$2::timestamptz, $2::timestamptz + interval '1 hour', $2::timestamptz + interval '2 hours'],
            ARRAY[60, 120, 180], ARRAY['passive', 'active', NULL]::text[], ARRAY[1, 2, 3], $4::uuid[],
            ARRAY['apns', 'fcm', 'apns'], ARRAY['u1', 'u2', 'u3'], ARRAY['d1', 'd2', 'd3'],
            ARRAY['sandbox', 'production', 'sandbox'], ARRAY['{"n":1}', '{"n":2}', '{"n":3}'], p_only => $5::int[],
            p_lease => 'w1', p_lease_seconds => 30, p_leased => ARRAY[true, true, false])
        """

    @Test(
        "the writer writes only the requests it is given, each delivery due at its request's time and expiring its TTL after, leased only where its request is marked"
    )
    func writesTheGivenRequestsDueExpiringAndLeased() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let due = Date(timeIntervalSince1970: 1_900_000_000)
        let requests = (0..<3).map { _ in UUID() }
        let ids = (0..<3).map { _ in UUID() }
        let rows = try db.connection.query(Self.writeSQL, [requests, due, partner.id, ids, [1, 3]]).rows
        var written: [UUID: UUID] = [:]
        for row in rows { written[try row.uuid(0)] = try row.uuid(1) }
        #expect(written == [ids[0]: requests[0], ids[2]: requests[2]])

        let stored = try db.connection.query(
            """
            SELECT id, available_at, expires_at, state, leased_by, attempts, lease_expires_at IS NOT NULL AS timed,
                   interruption_level::text AS level, payload, member_count
              FROM deliveries WHERE id = ANY ($1::uuid[]) ORDER BY device_id
            """, [ids]
        ).rows
        try #require(stored.count == 2)
        let leased = stored[0], pending = stored[1]
        #expect(try leased.uuid("id") == ids[0] && pending.uuid("id") == ids[2])
        #expect(try leased.date("available_at") == due && leased.date("expires_at") == due.addingTimeInterval(60))
        #expect(try pending.date("available_at") == due.addingTimeInterval(7_200))
        #expect(try pending.date("expires_at") == due.addingTimeInterval(7_200 + 180))
        #expect(try leased.string("state") == "leased" && leased.optionalString("leased_by") == "w1")
        #expect(try leased.int("attempts") == 1 && leased.bool("timed"))
        #expect(try pending.string("state") == "pending" && pending.optionalString("leased_by") == nil)
        #expect(try pending.int("attempts") == 0 && !pending.bool("timed"))
        #expect(try leased.optionalString("level") == "passive" && pending.optionalString("level") == nil)
        #expect(try pending.string("payload") == #"{"n":3}"# && pending.int("member_count") == 1)
    }

    @Test("an id already in the outbox is skipped, not an error, and not returned")
    func anIdInTheOutboxIsSkipped() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let due = Date(timeIntervalSince1970: 1_900_000_000)
        let requests = (0..<3).map { _ in UUID() }
        let ids = (0..<3).map { _ in UUID() }
        _ = try db.connection.query(Self.writeSQL, [requests, due, partner.id, ids, [1]])
        let again = try db.connection.query(Self.writeSQL, [requests, due, partner.id, ids, [1, 2]]).rows
            .map { try $0.uuid(0) }
        #expect(again == [ids[1]])
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE id = ANY ($1::uuid[])", [ids]) == 2)
    }

    @Test("a push's expiry is its TTL after it is due, to the microsecond")
    func expiryIsTheTTLAfterTheDueTime() throws {
        let db = try QueueDatabase()
        let due = Date(timeIntervalSince1970: 1_900_000_000.123456)
        let expiry = try db.connection.query("SELECT herald_push_expiry($1, 86400)", [due]).first!.date(0)
        #expect(abs(expiry.timeIntervalSince(due) - 86_400) < 0.000_001)
    }
}

/// Every push delivery goes into the outbox by one SQL function: no other statement of the project inserts into
/// `deliveries` but the Live Activity fan-out and the completer, which puts a group's retried members back as their
/// own rows.
@Suite struct OutboxWriterLayoutTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("push deliveries are inserted in one place, functions/outbox_write.sql")
    func oneInsertOfPushDeliveries() throws {
        let functions = Self.root.appendingPathComponent("Sources/Store/Migrations/functions")
        var inserting: Set<String> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: functions.path) where name.hasSuffix(".sql") {
            let text = try String(contentsOf: functions.appendingPathComponent(name), encoding: .utf8)
            if text.contains("INSERT INTO deliveries") { inserting.insert(name) }
        }
        #expect(
            inserting == [
                "outbox_write.sql", "activity_event.sql", "complete_deliveries.sql",
            ])
        // No Swift statement of the services writes one (the test helpers' fixtures aside).
        let sources = Self.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        let swift = try files.filter { $0.hasSuffix(".swift") && !$0.hasPrefix("HeraldTestSupport/") }.filter { path in
            try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
                .contains("INSERT INTO deliveries")
        }
        #expect(swift.isEmpty, "\(swift)")
    }
}
