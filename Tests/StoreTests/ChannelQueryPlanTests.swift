import Foundation
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The index each broadcast channel query relies on (sql/034_live_channels.sql), proven with EXPLAIN on a
/// private database with 20,000 channels of 20 mini-apps (a tenth of them open, the rest ended; their next work
/// due in no particular order, as changes make it) and five audit rows each: large enough that the planner would
/// not pick an index by accident.
@Suite("Broadcast channel query plans", .serialized, .requiresDatabase)
struct ChannelQueryPlanTests {
    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            let c = db.connection
            _ = try c.query(
                """
                INSERT INTO live_channels (id, partner_id, mini_app_id, template, attributes, state, status,
                                           apns_channel_id, last_timestamp, relevance_score, apns_end_payload,
                                           created_at, updated_at, expires_at, next_at)
                SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000000aa', 'app.' || (g % 20), 'status', '{}',
                       '{}', CASE WHEN (g / 20) % 10 = 0 THEN 'open' ELSE 'ended' END, 'c' || g, 0, 50, '{}', now(), now(),
                       now() + make_interval(secs => g), now() + random() * interval '1 hour'
                  FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO live_channel_events (id, created_at, channel_id, partner_id, kind, version, outcome)
                SELECT gen_random_uuid(), now(), c.id, c.partner_id, 'update', v,
                       CASE WHEN v = 5 AND c.status = 'open' THEN 'pending' ELSE 'sent' END
                  FROM live_channels c, generate_series(1, 5) v
                """)
            _ = try c.query(
                """
                INSERT INTO users (id, tenant_id) SELECT 'u' || g, 't1' FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                             status, last_timestamp, created_at, updated_at, expires_at,
                                             apns_end_payload, fcm_end_payload, end_timestamp, channel_id)
                SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000000aa', 'app.' || (g % 20), 'u' || g, 'status',
                       '{}', '{}', '{}', 'active', 0, now(), now(), now() + interval '1 hour', '{}', '{}', 0,
                       CASE WHEN g % 100 = 0 THEN gen_random_uuid() END
                  FROM generate_series(1, 20000) g
                """)
            for table in ["live_channels", "live_channel_events", "users", "live_activities"] {
                try c.execute("ANALYZE \(table)")
            }
            return db
        } catch {
            fatalError("cannot build the channel query-plan fixture: \(error)")
        }
    }()

    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        try Self.database.connection.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }
            .joined(separator: "\n")
    }

    func statement(
        _ function: String, from start: String, through: String? = nil, into: String? = nil,
        arguments: [String]
    ) throws -> String {
        var names = Dictionary(uniqueKeysWithValues: arguments.enumerated().map { ($1, "$\($0 + 1)") })
        if let into { names[into] = "" }
        return try functionStatement(
            function, on: Self.database.connection, from: start, to: through ?? ";",
            throughEnd: through != nil, renaming: names)
    }

    @Test("the workers' claim reads channels with work due from the partial due index")
    func claim() throws {
        let query = try statement(
            "herald_channel_claim", from: "SELECT c.id FROM live_channels c",
            through: "SKIP LOCKED", arguments: ["p_limit", "p_now"])
        let text = try plan(query, [64, Date()])
        #expect(text.contains("live_channels_due"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("the channel sweep's unknown ids are one set difference: the managed channels are read once")
    func unmanaged() throws {
        let listed = (1...10_000).map { "c\($0)" }
        let text = try Self.database.connection.plan(Queries.ChannelSync.unmanaged, [listed])
        #expect(text.contains("SetOp"), "\(text)")
        #expect(!text.contains("Nested Loop"), "\(text)")
        // The fixture's open channels among c1...c10000 are the blocks of 20 from every 200th (c1...c19, c200...):
        // 1,000 managed, the 9,000 others (ended) unknown.
        let unknown = try Self.database.connection.query(Queries.ChannelSync.unmanaged.text, [listed]).rows
            .map { try $0.string(0) }
        #expect(unknown.count == 9_000)
        #expect(unknown.contains("c21") && !unknown.contains("c1") && !unknown.contains("c219"))
    }

    @Test("a channel is read by its primary key, its audit by the channel's index")
    func findAndEvents() throws {
        let find = try Self.database.connection.plan(Queries.Channels.find, [UUID(), UUID()])
        #expect(find.contains("live_channels_pkey"), "\(find)")
        let events = try Self.database.connection.plan(Queries.Channels.events, [UUID(), 50])
        #expect(events.contains("live_channel_events_channel"), "\(events)")
        #expect(!events.contains("Seq Scan"), "\(events)")
    }

    @Test("the host's list and the mini-app's cap read the mini-app's open channels by their index")
    func perMiniApp() throws {
        let list = try Self.database.connection.plan(Queries.Channels.followable, ["app.7", 1_000])
        #expect(list.contains("live_channels_mini_app"), "\(list)")
        #expect(!list.contains("Seq Scan"), "\(list)")
        let cap = try statement(
            "herald_channel_open", from: "SELECT count(*) INTO v_open", into: "INTO v_open",
            arguments: ["p_mini_app"])
        let capText = try plan(cap, ["app.7"])
        #expect(capText.contains("live_channels_mini_app"), "\(capText)")
        #expect(!capText.contains("Seq Scan"), "\(capText)")
    }

    @Test("recording a broadcast settles the channel's pending audit rows by the pending index")
    func pendingEvents() throws {
        let query = try statement(
            "herald_channel_record", from: "UPDATE live_channel_events\n           SET outcome = CASE WHEN version",
            arguments: ["p_id", "p_outcome", "p_version", "p_reason", "p_now"])
        let text = try plan(query, [UUID(), "broadcast", 5, "x", Date()])
        #expect(text.contains("live_channel_events_pending"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("retention deletes finished channels by the partial finished index")
    func retention() throws {
        let text = try plan(Queries.Maintenance.deleteFinishedChannels.text, [5_000])
        #expect(text.contains("live_channels_finished"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("a channel's end finds the users' activities that follow it by their partial index")
    func followers() throws {
        let query = try statement(
            "herald_channel_change", from: "UPDATE live_activities a",
            arguments: ["p_id", "p_now", "p_delete_at"])
        let text = try plan(query, [UUID(), Date(), Date()])
        #expect(text.contains("live_activities_channel"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }
}
