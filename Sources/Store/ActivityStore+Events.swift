import Foundation
import HeraldCore
import Postgres

/// What an activity's audit row records of the partner's request, as it was given (sql/033_live_activity_events.sql).
public struct ActivityEventInputs: Sendable, Equatable {
    /// An update's state patch, as JSON text (a start's and an end's state are the write's own).
    public var patchJSON: String?
    /// The partner's alert title; nil without an alert.
    public var alertTitle: String?
    /// A start's or update's `ttlSeconds`, when given.
    public var ttlSeconds: Int?
    /// An end's `dismissAt`, when given.
    public var dismissAt: Date?

    public init(patchJSON: String? = nil, alertTitle: String? = nil, ttlSeconds: Int? = nil, dismissAt: Date? = nil) {
        self.patchJSON = patchJSON
        self.alertTitle = alertTitle
        self.ttlSeconds = ttlSeconds
        self.dismissAt = dismissAt
    }
}

/// What wrote an audit row: the partner's start, update and end, or Herald's end at the TTL or on a replacement.
public enum ActivityEventKind: String, Sendable, CaseIterable {
    case start, update, end, expire
    case replaceEnd = "replace-end"
}

/// One audit row of an activity, with its deliveries' outcomes so far.
public struct ActivityEventRecord: Sendable, Equatable {
    public let id: UUID
    public let kind: ActivityEventKind
    public let createdAt: Date
    /// The start's state, an update's patch, the final state of an end; nil for an update without a patch.
    public let stateJSON: String?
    public let alertTitle: String?
    public let ttlSeconds: Int?
    public let dismissAt: Date?
    public let idempotencyKey: String?
    public let apnsDevices: Int
    public let fcmDevices: Int
    public let sent: Int
    public let failed: Int
    public let superseded: Int

    public var devices: Int { apnsDevices + fcmDevices }
    /// Devices whose delivery has no outcome yet (queued, in flight, or held for an iPhone's update token).
    public var pending: Int { max(0, devices - sent - failed - superseded) }
}

/// Where a page of an activity's events starts: after the event with this time and id (newest first).
public struct ActivityEventCursor: Sendable, Equatable {
    public let createdAt: Date
    public let id: UUID
    public init(createdAt: Date, id: UUID) {
        self.createdAt = createdAt
        self.id = id
    }
}

extension ActivityStore {
    /// The partner's events of `activityID`, newest first, after `cursor`, at most `limit`. Events carry their
    /// partner, so another partner's activity finds none; they outlive the activity row (their partitions'
    /// retention is push_requests').
    public func events(activityID: UUID, partnerID: UUID, after cursor: ActivityEventCursor?, limit: Int) throws
        -> [ActivityEventRecord] {
        // Every event of an activity comes after its start: partitions before the activity's month are skipped.
        let since = Date(timeIntervalSince1970: Double(UUIDv7.millisecond(of: activityID) ?? 0) / 1000)
        return try pool.withConnection { connection in
            let rows = if let cursor {
                try connection.query(Self.eventsAfterSQL,
                                     [activityID, partnerID, since, limit, cursor.createdAt, cursor.id])
            } else {
                try connection.query(Self.eventsSQL, [activityID, partnerID, since, limit])
            }
            return try rows.rows.map(Self.event)
        }
    }

    static func event(_ row: PostgresRow) throws -> ActivityEventRecord {
        guard let kind = ActivityEventKind(rawValue: try row.string(1)) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected activity event kind")
        }
        return ActivityEventRecord(
            id: try row.uuid(0), kind: kind, createdAt: try row.date(2), stateJSON: row.optionalString(3),
            alertTitle: row.optionalString(4), ttlSeconds: try row.optionalInt(5), dismissAt: try row.optionalDate(6),
            idempotencyKey: row.optionalString(7), apnsDevices: try row.int(8), fcmDevices: try row.int(9),
            sent: try row.int(10), failed: try row.int(11), superseded: try row.int(12))
    }

    static let eventColumns = """
        SELECT id, kind, created_at, state::text, alert_title, ttl_seconds, dismiss_at, idempotency_key, devices_apns,
               devices_fcm, sent, failed, superseded
          FROM live_activity_events
        """

    /// $1 activity, $2 partner, $3 the activity's creation (partition pruning), $4 limit: the first page, read
    /// from `live_activity_events_activity` in index order.
    public static let eventsSQL = eventColumns + """

         WHERE activity_id = $1 AND partner_id = $2 AND created_at >= $3
         ORDER BY created_at DESC, id DESC
         LIMIT $4
        """

    /// As `eventsSQL`, from after the cursor ($5 created_at, $6 id): the row comparison is an index bound.
    public static let eventsAfterSQL = eventColumns + """

         WHERE activity_id = $1 AND partner_id = $2 AND created_at >= $3 AND (created_at, id) < ($5, $6)
         ORDER BY created_at DESC, id DESC
         LIMIT $4
        """
}
