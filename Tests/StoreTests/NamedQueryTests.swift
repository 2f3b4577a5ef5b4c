import Foundation
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

/// Every named query of Sources/Store/Queries is valid SQL against the migrated schema: each is prepared (parsed,
/// its names and types resolved) on a fresh database, so a query that names a dropped column fails here rather than
/// on its first run.
@Suite("Named queries", .requiresDatabase)
struct NamedQueryTests {
    @Test("every named query PREPARE takes prepares against the schema; every other one is marked unprepared")
    func everyQueryPrepares() throws {
        let database = try QueueDatabase()
        #expect(!Queries.all.isEmpty)
        let preparable = ["SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "VALUES"]
        for (index, sql) in Queries.all.enumerated() {
            let keyword = sql.text.prefix { !$0.isWhitespace }.uppercased()
            guard preparable.contains(keyword) else {
                // DDL, COPY, LISTEN: each run by its own test (migrations, backfill, the listener).
                #expect(!sql.isPrepared, "\(sql.name) (\(keyword)) cannot be prepared: mark it `-- unprepared`")
                continue
            }
            do {
                try database.connection.execute("PREPARE named_\(index) AS " + sql.text)
            } catch {
                Issue.record("\(sql.name) does not prepare: \(error)")
            }
        }
    }

    @Test("names are unique and say their file")
    func names() {
        let names = Queries.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { $0.split(separator: ".").count == 2 })
        #expect(Queries.WorkerHeartbeats.list.name == "worker_heartbeats.list")
    }

    @Test("a generated query binds its declared parameters in order, under its file's statement")
    func generatedBindings() {
        let id = UUID()
        let query = Queries.Deliveries.ExtendLeases(worker: "w1", ids: [id], leaseSeconds: 30)
        #expect(type(of: query).sql == Queries.Deliveries.extendLeases)
        #expect(query.bindings.count == 3)
        #expect(query.bindings[0] as? String == "w1")
        #expect(query.bindings[1] as? [UUID] == [id])
        #expect(query.bindings[2] as? Int == 30)
        let none = Queries.Console.FailuresOfPartner(since: Date(timeIntervalSince1970: 0), limit: 5, miniAppID: "m")
        #expect(none.bindings.compactMap { $0 }.count == 3)
    }

    @Test("a LISTEN channel is filled in quoted, a quote in its name doubled")
    func listenQuotesTheChannel() throws {
        let listen = Queries.Notifications.listen
        #expect(!listen.isPrepared)
        #expect(listen.filling("channel", identifier: "herald_deliveries").text == #"LISTEN "herald_deliveries""#)
        #expect(listen.filling("channel", identifier: #"a"b; DROP"#).text == #"LISTEN "a""b; DROP""#)
    }

    @Test(
        "an unprepared query runs unnamed, alone or in a pipeline, on a connection that prepares",
        arguments: [false, true])
    func unpreparedRunsUnnamed(inPipeline: Bool) throws {
        let database = try QueueDatabase()
        let connection = database.connection
        #expect(connection.preparedStatements)
        var search = RequestSearch()
        search.miniAppID = "app"
        let queries: [any NamedQuery] = [
            ConsoleStore.requestSearch(search),
            Queries.PushRequests.Summaries(ids: [UUID()], createdAt: [Date()]),
        ]
        for _ in 0..<2 {
            if inPipeline {
                #expect(try connection.pipeline(queries: queries).count == 2)
            } else {
                for query in queries { _ = try connection.rows(query) }
            }
        }
        func prepared(_ text: String) throws -> Int? {
            try connection.query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE $1", [text])
                .first?.int("n")
        }
        #expect(try prepared("%FROM push_requests p\n%") == 0)
        #expect(try prepared("%JOIN push_requests p%") == 1)
    }

    @Test("a row is read by column name, and a missing column is named in the error")
    func rowsByName() throws {
        let database = try QueueDatabase()
        let store = WorkerHeartbeatStore()
        let heartbeat = WorkerHeartbeat(
            workerID: "w1", host: "h", version: "v", release: "1.0.0", startedAt: Date(timeIntervalSince1970: 1),
            inFlight: 2, pausedUpstreams: ["apns"], claimsPerSecond: 3, intervalSeconds: 5)
        try store.beat(heartbeat, on: database.connection)
        let listed = try store.list(on: database.connection)
        #expect(listed.map(\.heartbeat) == [heartbeat])
        let result = try database.connection.query("SELECT 1 AS one")
        let error = #expect(throws: PostgresError.self) { try result.rows[0].int("two") }
        #expect(error?.code == .decodingFailed)
        #expect(error?.serverMessage.contains("two") == true, "\(error?.serverMessage ?? "")")
    }
}
