import Foundation
import HeraldCore
import Postgres

/// The worker's statements on the outbox (Queries/deliveries.sql), typed: parameters in, rows out.
extension DeliveryStore {
    struct Claim: NamedQuery {
        typealias Row = ClaimedDelivery
        static let sql = Queries.Deliveries.claim
        let worker: String
        let limit: Int
        let leaseSeconds: Int
        let services: [PushService]
        let cursors: [QueueCursor: Date]
        let bulkLimit: Int
        let userMaxPerHour: Int
        var bindings: [(any PostgresEncodable)?] {
            let ordered = Array(cursors)
            return [
                worker, limit, leaseSeconds, services.map(\.rawValue), ordered.map(\.key.lane),
                ordered.map(\.key.partnerID), ordered.map(\.value), bulkLimit, userMaxPerHour,
            ]
        }
    }

    struct CompletionCounts: QueryRow, Decodable {
        let finishedCount: Int
        let retriedCount: Int
    }

    struct NextAvailableAt: QueryRow, Decodable {
        let nextAvailableAt: Date?
    }
}

/// A row of a claim (`claim`, `claimListed`, `readLeased`: the same columns).
extension ClaimedDelivery: QueryRow {
    public init(row: PostgresRow) throws {
        try self.init(row: row, columns: ClaimColumns(position: row.column))
    }

    /// The columns' positions found by name once for the result, not for every row (the claim is the hot path).
    public static func rows(of result: PostgresResult) throws -> [ClaimedDelivery] {
        guard !result.rows.isEmpty else { return [] }
        let columns = try ClaimColumns(position: result.column)
        return try result.rows.map { try ClaimedDelivery(row: $0, columns: columns) }
    }

    private init(row: PostgresRow, columns c: ClaimColumns) throws {
        guard let service = PushService(rawValue: try row.string(c.service)),
            let verdict = ClaimedDelivery.Verdict(rawValue: try row.string(c.verdict))
        else { throw PostgresError(code: .decodingFailed, serverMessage: "unexpected service or verdict") }
        let event = try row.optionalString(c.activityEvent).map { text in
            guard let event = LiveActivityEvent(rawValue: text) else {
                throw PostgresError(code: .decodingFailed, serverMessage: "unexpected activity event")
            }
            return event
        }
        self.init(
            id: try row.uuid(c.id), service: service, environment: try row.string(c.environment),
            payloadBytes: try row.bytes(c.payload), attempts: try row.int(c.attempts),
            expiresAt: try row.optionalDate(c.expiresAt), token: row.optionalString(c.token), verdict: verdict,
            lane: try row.int(c.lane), partnerID: try row.uuid(c.partnerID), availableAt: try row.date(c.availableAt),
            bundleID: row.optionalString(c.bundleID), activityEvent: event, priority: try row.optionalInt(c.priority),
            groupID: try row.optionalUUID(c.groupID), member: try row.optionalInt(c.member),
            heldUntil: try row.optionalDate(c.heldUntil), collapseID: row.optionalString(c.collapseID))
    }

    /// Where a claim's columns stand in its result, found by their names.
    private struct ClaimColumns {
        let id, service, environment, payload, attempts, expiresAt, token, verdict, lane, partnerID, availableAt,
            bundleID, activityEvent, priority, groupID, member, heldUntil, collapseID: Int

        init(position: (String) throws -> Int) throws {
            id = try position("id")
            service = try position("service")
            environment = try position("environment")
            payload = try position("payload")
            attempts = try position("attempts")
            expiresAt = try position("expires_at")
            token = try position("token")
            verdict = try position("verdict")
            lane = try position("lane")
            partnerID = try position("partner_id")
            availableAt = try position("available_at")
            bundleID = try position("bundle_id")
            activityEvent = try position("activity_event")
            priority = try position("priority")
            groupID = try position("group_id")
            member = try position("member")
            heldUntil = try position("held_until")
            collapseID = try position("collapse_id")
        }
    }
}
