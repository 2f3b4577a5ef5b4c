import Foundation
import Testing

/// Every Live Activity event (its deliveries and its audit row) is queued by one SQL function, and every broadcast
/// channel event (the channel's newest change and its audit row) by another: the paths that send one (start, update,
/// end, the replaced, expired and revoked activities' ends, a late token's release, a scheduled start's acceptance,
/// cancellation, refusal and start; a channel's open, change, end and TTL) call them and write no audit row of their
/// own.
@Suite struct ActivityEventWriterLayoutTests {
    static let functions = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Store/Migrations/functions")

    /// The definition files whose SQL contains `text`.
    func files(containing text: String) throws -> Set<String> {
        var found: Set<String> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.functions.path)
        where name.hasSuffix(".sql") {
            let sql = try String(contentsOf: Self.functions.appendingPathComponent(name), encoding: .utf8)
            if sql.contains(text) { found.insert(name) }
        }
        return found
    }

    @Test("Live Activity audit rows are inserted in one place, functions/activity_event.sql")
    func oneInsertOfActivityEvents() throws {
        #expect(try files(containing: "INSERT INTO live_activity_events") == ["activity_event.sql"])
    }

    @Test("broadcast channel audit rows are inserted in one place, functions/channel_event.sql")
    func oneInsertOfChannelEvents() throws {
        #expect(try files(containing: "INSERT INTO live_channel_events") == ["channel_event.sql"])
    }

    @Test("every path that sends an activity event calls the one writer")
    func activityPathsCallTheWriter() throws {
        #expect(
            try files(containing: "herald_activity_event(")
                == [
                    "activity_start.sql", "activity_update.sql", "activity_end.sql", "activity_token.sql",
                    "activity_ends_dispatch.sql", "activity_event.sql", "activity_schedule.sql", "activity_cancel.sql",
                    "activity_start_due.sql",
                ])
        #expect(
            try files(containing: "herald_activity_ends_dispatch(")
                == [
                    "activity_replace.sql", "expire_activities.sql", "partner_end_activities.sql",
                    "activity_ends_dispatch.sql",
                ])
        #expect(
            try files(containing: "herald_channel_event(")
                == ["channel_open.sql", "channel_change.sql", "channel_claim.sql", "channel_event.sql"])
    }
}
