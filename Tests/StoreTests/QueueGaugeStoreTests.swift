import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

/// The autoscaling gauges' statement against real Postgres: the figures per lane, and the plan.
@Suite(.requiresDatabase) struct QueueGaugeStoreTests {
    let store = QueueGaugeStore()
    static let apnsToken = String(repeating: "ab", count: 32)

    @Test func countsDueRowsAndTheOldestDueAgePerLane() throws {
        let db = try QueueDatabase()
        #expect(
            try store.gauges(on: db.connection) == [
                LaneGauge(lane: "realtime", due: 0, oldestDueSeconds: 0),
                LaneGauge(lane: "bulk", due: 0, oldestDueSeconds: 0),
            ])
        let partner = try db.partner()
        let other = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 10)
        try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns, lane: 0,
            availableAt: Date().addingTimeInterval(-30))
        try db.delivery(
            request: request, partner: other.id, user: "u1", service: .apns, lane: 0,
            availableAt: Date().addingTimeInterval(-2))
        try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns, lane: 1,
            availableAt: Date().addingTimeInterval(-8))
        // Not due yet (either lane), and leased: neither counts.
        try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns, lane: 0,
            availableAt: Date().addingTimeInterval(600))
        try db.delivery(
            request: request, partner: other.id, user: "u1", service: .apns, lane: 1,
            availableAt: Date().addingTimeInterval(600))
        let leased = try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns, lane: 1,
            availableAt: Date().addingTimeInterval(-100))
        try db.connection.query(
            "UPDATE deliveries SET state = 'leased', leased_by = 'w', lease_expires_at = now() + interval '1 minute' WHERE id = $1",
            [leased])

        let gauges = try store.gauges(on: db.connection)
        #expect(gauges.map(\.lane) == ["realtime", "bulk"])
        #expect(gauges.map(\.due) == [2, 1])
        #expect(gauges[0].oldestDueSeconds >= 29 && gauges[0].oldestDueSeconds < 60, "\(gauges)")
        #expect(gauges[1].oldestDueSeconds >= 7 && gauges[1].oldestDueSeconds < 30, "\(gauges)")
    }

    @Test func theCountStopsAtTheLimit() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 30)
        try db.deliveries(count: 30, request: request, partner: partner.id, user: "u1", lane: 1)
        let rows = try db.connection.query(Queries.QueueGauges.dueByLane.text, [25]).rows
        #expect(try rows.map { try $0.int("due") } == [0, 25])
    }

    @Test func theGaugeStatementUsesTheDuePartialIndex() throws {
        let db = try QueueDatabase()
        try db.user("u1", apnsToken: Self.apnsToken)
        for lane in [0, 1] {
            let partner = try db.partner()
            let request = try db.request(partner: partner.id, deliveries: 20000)
            try db.deliveries(count: 20000, request: request, partner: partner.id, user: "u1", lane: lane)
        }
        // Finished history-like rows would leave the table; leased ones stay and are outside the index.
        try db.connection.execute(
            "UPDATE deliveries SET state = 'leased', leased_by = 'w', lease_expires_at = now() WHERE ctid IN (SELECT ctid FROM deliveries LIMIT 30000)"
        )
        try db.connection.execute("ANALYZE deliveries")
        let plan = try db.connection.plan(Queries.QueueGauges.dueByLane, [QueueGaugeStore.countLimit])
        #expect(plan.contains("deliveries_due_partner"), "\(plan)")
        #expect(!plan.contains("Seq Scan on deliveries"), "\(plan)")
    }
}
