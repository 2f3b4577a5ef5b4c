import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// A push's retraction in the database (Migrations/functions/push_retract.sql): what is queued is cancelled, a
/// group's members one by one; the sent deliveries and those in flight are the messages' targets; the indexes each
/// part reads.
@Suite(.requiresDatabase) struct PushRetractTests {
    let deliveries = DeliveryStore()

    /// A message per target, its payload naming the delivery it retracts.
    static func messages(_ retraction: PushRetraction) -> [PushRetraction.Message] {
        retraction.targets.map {
            .init(id: UUIDv7.make(at: Date()), payload: Array("retract \($0.deliveryID)".utf8), ttlSeconds: 3600)
        }
    }

    @Test func aPartlySentGroupAndARowInFlight() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        var recipients: [(user: String, service: PushService)] = []
        for index in 1...20 {
            try db.user("r\(index)", apnsToken: String(format: "%064x", index))
            recipients.append(("r\(index)", .apns))
        }
        // Twenty deliveries in one group row, claimed whole: four sent, sixteen still in flight.
        let (request, _) = try db.enqueueRequest(partner: partner, deliveries: recipients)
        let claimed = try deliveries.claim(
            on: db.connection, worker: "w1", limit: 100, leaseSeconds: 30, services: [.apns])
        #expect(claimed.count == 20 && claimed.allSatisfy { $0.groupID != nil })
        _ = try deliveries.complete(
            on: db.connection, worker: "w1", claimed.prefix(4).map { CompletedDelivery($0, outcome: .sent) })
        let sent = Set(claimed.prefix(4).map(\.id))
        // Another push of the partner's, queued, which the retraction leaves alone.
        let other = try db.enqueueRequest(partner: partner, deliveries: [("r1", .apns)])

        let store = PushStore(pool: PostgresPool(configuration: .init(url: db.url, maxConnections: 1)))
        let retractionID = UUIDv7.make(at: Date())
        let stranger = try store.retract(
            requestID: request.id, createdAt: request.createdAt, partnerID: UUID(), retractionID: retractionID,
            now: Date(), render: Self.messages)
        #expect(stranger == nil)

        let retraction = try #require(
            try store.retract(
                requestID: request.id, createdAt: request.createdAt, partnerID: partner.id,
                retractionID: retractionID, now: Date(), render: Self.messages))
        // The group row was in flight (leased whole): its sixteen members not done are cancelled, each a target
        // due when the lease ends, and the four sent ones are targets due now.
        #expect(retraction.firstTime && retraction.cancelled == 16 && retraction.retracted == 20)
        #expect(Set(retraction.targets.map(\.deliveryID)) == Set(claimed.map(\.id)))
        let leaseEnd = try db.connection.query(
            "SELECT max(due) FROM (SELECT available_at AS due FROM deliveries WHERE request_id = $1) d",
            [retractionID]
        ).first!.date(0)
        for target in retraction.targets {
            #expect(sent.contains(target.deliveryID) ? target.dueAt < leaseEnd : target.dueAt == leaseEnd)
        }
        // The messages: one row each, under the retraction, at priority 5, due as their targets; the other push
        // is still queued; the worker's late outcome for the group changes nothing.
        #expect(
            try db.count(
                "SELECT count(*) FROM deliveries WHERE request_id = $1 AND priority = 5 AND members IS NULL",
                [retractionID]) == 20)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE request_id = $1", [other.request.id]) == 1)
        #expect(
            try deliveries.complete(
                on: db.connection, worker: "w1", claimed.dropFirst(4).map { CompletedDelivery($0, outcome: .sent) })
                == (0, 0))
        #expect(
            try db.count(
                "SELECT count(*) FROM delivery_history_deliveries WHERE request_id = $1 AND outcome = 'cancelled'",
                [request.id]) == 16)
        let counts = try db.connection.query(
            "SELECT sent, cancelled, retracted, retraction_id FROM push_requests WHERE id = $1", [request.id]
        ).first!
        #expect(try counts.int(0) == 4 && counts.int(1) == 16 && counts.int(2) == 20)
        #expect(try counts.uuid(3) == retractionID)

        // Again: the first retraction's counts, nothing written.
        let again = try #require(
            try store.retract(
                requestID: request.id, createdAt: request.createdAt, partnerID: partner.id,
                retractionID: UUIDv7.make(at: Date()), now: Date(), render: Self.messages))
        #expect(!again.firstTime && again.cancelled == 16 && again.retracted == 20 && again.targets.isEmpty)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE priority = 5") == 20)
    }

    @Test func aQueuedGroupIsCancelledMemberByMember() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        var recipients: [(user: String, service: PushService)] = []
        for index in 1...18 {
            try db.user("q\(index)", fcmToken: String(format: "%064x", index))
            recipients.append(("q\(index)", .fcm))
        }
        let (request, ids) = try db.enqueueRequest(partner: partner, deliveries: recipients)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE members IS NOT NULL") == 1)
        let store = PushStore(pool: PostgresPool(configuration: .init(url: db.url, maxConnections: 1)))
        let retraction = try #require(
            try store.retract(
                requestID: request.id, createdAt: request.createdAt, partnerID: partner.id,
                retractionID: UUIDv7.make(at: Date()), now: Date(), render: Self.messages))
        #expect(retraction.cancelled == 18 && retraction.retracted == 0 && retraction.targets.isEmpty)
        #expect(try db.count("SELECT count(*) FROM deliveries") == 0)
        let cancelled = try db.connection.query(
            "SELECT id FROM delivery_history WHERE request_id = $1 AND outcome = 'cancelled'", [request.id]
        ).rows.map { try $0.uuid(0) }
        #expect(Set(cancelled) == Set(ids))
        let finished = try store.find(requestID: request.id, createdAt: request.createdAt)
        #expect(finished?.finished == 18 && finished?.pending == 0 && finished?.retractedAt != nil)
    }

    @Test(
        "the retraction finds a request's queued rows in the partner's due index and its rows in flight in the lease index"
    )
    func outboxRowsByIndex() throws {
        let db = try QueueDatabase()
        let query = try functionStatement(
            "herald_push_retract", on: db.connection, from: "SELECT q.id FROM deliveries q", to: ")\n        RETURNING",
            renaming: [
                "coalesce(v_request.send_at, v_request.created_at)": "$1::timestamptz",
                "v_request.lane": "$2::smallint", "p_partner": "$3::uuid", "p_request": "$4::uuid",
            ])
        let text = try plan(db, query, [Date(), 0, UUID(), UUID()])
        #expect(text.contains("deliveries_due_partner"), "\(text)")
        #expect(text.contains("deliveries_lease"), "\(text)")
    }

    @Test("the retraction finds a request's sent deliveries by delivery_history_request")
    func sentByRequest() throws {
        let db = try QueueDatabase()
        let query = try functionStatement(
            "herald_push_retract", on: db.connection, from: "FROM delivery_history_deliveries h",
            renaming: ["p_request": "$1::uuid", "v_request.created_at": "$2::timestamptz"])
        let text = try plan(db, "SELECT h.id, v.environment " + query, [UUID(), Date()])
        // Each partition's part of delivery_history_request is named after its column.
        #expect(text.contains("request_id_idx") && !text.contains("Seq Scan"), "\(text)")
    }

    private func plan(_ db: QueueDatabase, _ query: String, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        try db.connection.execute("BEGIN")
        defer { _ = try? db.connection.execute("ROLLBACK") }
        try db.connection.execute("SET LOCAL enable_seqscan = off")
        return try db.connection.query("EXPLAIN " + query, parameters).rows.map { try $0.string(0) }
            .joined(separator: "\n")
    }
}
