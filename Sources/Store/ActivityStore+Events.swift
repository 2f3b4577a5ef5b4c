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

/// What wrote an audit row: the partner's start, update and end, or Herald's end at the TTL or on a replacement;
/// for a scheduled start, its acceptance (`schedule`), the partner's `cancel` and the sweep's `refuse`.
public enum ActivityEventKind: String, Sendable, CaseIterable, Decodable {
    case start, update, end, expire
    case replaceEnd = "replace-end"
    case schedule, cancel, refuse
}

/// One audit row of an activity, with its deliveries' outcomes so far.
public struct ActivityEventRecord: Sendable, Equatable, Decodable {
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
    /// Why a scheduled start was refused (kind `refuse`).
    public let reason: String?

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
        -> [ActivityEventRecord]
    {
        // Every event of an activity comes after its start: partitions before the activity's month are skipped.
        let since = Date(timeIntervalSince1970: Double(UUIDv7.millisecond(of: activityID) ?? 0) / 1000)
        return try pool.withConnection { connection in
            if let cursor {
                try connection.rows(
                    Queries.Activities.EventsAfter(
                        activityID: activityID, partnerID: partnerID, since: since, limit: limit,
                        cursorCreatedAt: cursor.createdAt, cursorID: cursor.id))
            } else {
                try connection.rows(
                    Queries.Activities.Events(activityID: activityID, partnerID: partnerID, since: since, limit: limit))
            }
        }
    }
}

extension ActivityEventRecord: QueryRow {}
