import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

/// `heraldctl workers`: the workers' heartbeat rows, live and lost, with the real executable.
@Suite("heraldctl workers", .requiresDatabase)
struct WorkersCommandTests {
    @Test("workers: live ones first, a worker three beats late is lost, each one's release; piped lines and --json")
    func workers() throws {
        let (url, pool, close) = try HeraldCtlTests.migratedDatabase()
        defer { close() }
        try pool.withConnection { c in
            _ = try c.execute(
                """
                INSERT INTO worker_heartbeats (worker_id, host, version, started_at, last_seen_at, in_flight,
                                               paused_upstreams, claims_per_second, interval_seconds, release)
                VALUES ('w-live', 'host-a', '1.2.3', now() - interval '1 hour', now(), 7, '{fcm}', 42.5, 5, '0.10.0'),
                       ('w-lost', 'host-b', '1.2.3', now() - interval '2 hours', now() - interval '16 seconds', 0, '{}', 0, 5,
                        NULL)
                """)
        }
        let result = try HeraldCtlTests.run(["workers", "--json"], url: url)
        #expect(result.status == 0, "\(result.output)")
        let json = try JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        let workers = json["workers"]?.arrayValue ?? []
        #expect(workers.map { $0["workerId"]?.stringValue } == ["w-live", "w-lost"])
        #expect(workers.map { $0["status"]?.stringValue } == ["live", "lost"])
        #expect(workers.first?["inFlight"] == .number(7))
        #expect(workers.first?["pausedUpstreams"] == .array([.string("fcm")]))
        #expect(workers.first?["claimsPerSecond"] == .number(42.5))
        // The lost one's row was written by a release before the column: its release is unknown.
        #expect(workers.map { $0["release"] } == [.string("0.10.0"), .null])
        let piped = try HeraldCtlTests.run(["workers"], url: url)
        let lines = piped.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("w-live\thost-a\t1.2.3\tlive\t") == true, "\(piped.output)")
        #expect(lines.first?.hasSuffix("\tfcm\t0.10.0") == true, "\(piped.output)")
        #expect(lines.last?.hasSuffix("\t-\t-") == true, "\(piped.output)")
        #expect(try HeraldCtlTests.run(["workers", "extra"], url: url).status == 2)
    }
}
