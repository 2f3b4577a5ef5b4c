import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import Postgres
import Store
import Testing

@Suite("Database outage", .requiresDatabase)
struct DatabaseOutageTests {
    @Test("503 while Postgres is unreachable, nothing half-written, and recovery without a restart")
    func outageAndRecovery() throws {
        let cluster = try Self.migratedCluster()
        defer { cluster.destroy() }
        let intake = try IntakeHarness(configure: { $0.databaseURL = cluster.databaseURL })
        defer { intake.stop() }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)

        try cluster.stop()
        // Pooled connections are now dead and new ones cannot be opened.
        for _ in 0..<3 {
            let push = try intake.push(partner.key, pushBody(partner, emails: [user.email]), idempotencyKey: "during")
            #expect(push.status == 503)
            #expect(push.errorCode == "database_unavailable")
            #expect(push.headers["retry-after"] == "1")
        }
        #expect(try intake.request("GET", "/readyz", token: nil).status == 503)
        #expect(try intake.request("GET", "/healthz", token: nil).status == 200)
        #expect(try intake.host("PUT", "/api/internal/users/\(user.id)/opt-outs/\(partner.miniAppID)").status == 503)

        try cluster.start()
        #expect(try intake.request("GET", "/readyz", token: nil).status == 200)
        let after = try intake.push(partner.key, pushBody(partner, emails: [user.email]), idempotencyKey: "during")
        #expect(after.status == 202)
        #expect(after.headers["idempotent-replayed"] == nil)

        let check = PostgresPool(configuration: .init(url: cluster.databaseURL, maxConnections: 1))
        defer { check.close() }
        let requests = try check.withConnection { try $0.query("SELECT count(*) FROM push_requests").first!.int(0) }
        let deliveries = try check.withConnection { try $0.query("SELECT count(*) FROM deliveries").first!.int(0) }
        #expect(requests == 2)
        #expect(deliveries == 4)
    }

    /// What the previous release's intake meets between `heraldctl migrate` and its own replacement when the
    /// migration replaced a function it calls (docs/architecture.md, *Schema changes across releases*).
    @Test("503 with Retry-After while a function the push route calls is gone, nothing written, 202 once it is back")
    func functionReplacedUnderneath() throws {
        let cluster = try Self.migratedCluster()
        defer { cluster.destroy() }
        let intake = try IntakeHarness(configure: { $0.databaseURL = cluster.databaseURL })
        defer { intake.stop() }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        // Its statements are prepared on the pooled connections before the schema changes under them.
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)

        let admin = try PostgresConnection(url: cluster.databaseURL)
        let counts = "SELECT (SELECT count(*) FROM push_requests) + (SELECT count(*) FROM deliveries)"
        let before = try admin.query(counts).first!.int(0)
        try admin.execute("ALTER FUNCTION herald_intake_push RENAME TO herald_intake_push_replaced")
        for _ in 0..<3 {
            let push = try intake.push(partner.key, pushBody(partner, emails: [user.email]), idempotencyKey: "rolling")
            #expect(push.status == 503)
            #expect(push.errorCode == "database_unavailable")
            #expect(push.headers["retry-after"] == "1")
            #expect(push.json["error"]?["message"]?.stringValue == HeraldError.databaseUnavailable.message)
            #expect(push.json["error"]?["field"] == .null)
        }
        #expect(try admin.query(counts).first!.int(0) == before)

        try admin.execute("ALTER FUNCTION herald_intake_push_replaced RENAME TO herald_intake_push")
        let after = try intake.push(partner.key, pushBody(partner, emails: [user.email]), idempotencyKey: "rolling")
        #expect(after.status == 202)
        #expect(after.headers["idempotent-replayed"] == nil)
        #expect(try admin.query(counts).first!.int(0) == before + 3)
    }

    /// A private cluster (the suite's is never stopped or altered) with Herald's schema.
    private static func migratedCluster() throws -> PostgresCluster {
        let cluster = try PostgresCluster()
        let pool = PostgresPool(configuration: .init(url: cluster.databaseURL, maxConnections: 2))
        defer { pool.close() }
        do {
            let migrator = try Migrator.load(from: TestEnvironment.repositoryRoot.appendingPathComponent("sql"))
            try pool.withConnection { try migrator.migrate($0) }
        } catch {
            cluster.destroy()
            throw error
        }
        return cluster
    }
}
