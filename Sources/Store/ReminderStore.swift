import Foundation
import HeraldCore
import Postgres

/// A reminder as the host reads it: the text as it was given (without the brand prefix).
public struct ReminderRecord: Sendable, Equatable {
    public let id: UUID
    public let miniAppID: String
    public let title: String
    public let body: String
    public let deepLink: String?
    public let at: Date
    public let status: ReminderStatus
    public let createdAt: Date

    public init(id: UUID, miniAppID: String, title: String, body: String, deepLink: String?, at: Date,
                status: ReminderStatus, createdAt: Date) {
        self.id = id
        self.miniAppID = miniAppID
        self.title = title
        self.body = body
        self.deepLink = deepLink
        self.at = at
        self.status = status
        self.createdAt = createdAt
    }
}

/// The user a reminder is for, as a schedule finds it before rendering.
public struct ReminderAudience: Sendable {
    public let tenantID: String
    public let optedOut: Bool
    /// Devices with a valid token, in device id order.
    public let devices: [RecipientResolution.Device]
}

/// What a schedule reads before it renders, in one round trip.
public struct ReminderLookup: Sendable {
    /// The mini-app's active partner; nil when none (never registered, or revoked).
    public let partner: PartnerProfile?
    /// nil when there is no such user.
    public let audience: ReminderAudience?
}

/// Everything one scheduled reminder writes (`herald_schedule_reminder`, sql/functions/schedule_reminder.sql): the
/// reminder, and the push it is delivered as (`push`: its audit row, due at `push.dueAt`, and one delivery per
/// device, each with its own signed payload; the request's Idempotency-Key is the reminder's).
public struct ReminderWrite: Sendable {
    public var reminderID: UUID
    public var userID: String
    public var partner: PartnerProfile
    /// HERALD_REMINDER_MAX_PENDING: pending reminders allowed per user and mini-app.
    public var maxPending: Int
    /// As given, for the host's list (the push's title has the brand prefix).
    public var title: String
    /// The time asked for; the deliveries are due at it, or at the creation when it was slightly past.
    public var at: Date
    public var push: OutboxWrite

    public init(reminderID: UUID, userID: String, partner: PartnerProfile, maxPending: Int, title: String, at: Date,
                push: OutboxWrite) {
        self.reminderID = reminderID
        self.userID = userID
        self.partner = partner
        self.maxPending = maxPending
        self.title = title
        self.at = at
        self.push = push
    }
}

/// What `ReminderStore.schedule` decided; only `scheduled` wrote anything.
public enum ReminderScheduleOutcome: Sendable, Equatable {
    /// Written; `pending` counts the user's pending reminders of this mini-app, this one included.
    case scheduled(pending: Int)
    /// The user already has `pending` (at least the cap) pending reminders of this mini-app.
    case limited(pending: Int)
    /// The user was removed after the lookup.
    case userNotFound
    /// The user moved to another tenant after the lookup.
    case tenantMismatch
    /// The user has a reminder scheduled with the same key and body in the last 24 hours; nothing was written.
    case replay(reminderID: UUID)
    /// The key was used for this user in the last 24 hours with another body; nothing was written.
    case keyReused
}

/// A reminder scheduled with an Idempotency-Key in the last 24 hours, as its first answer showed it.
public struct KeyedReminder: Sendable, Equatable {
    public let record: ReminderRecord
    public let bodyHash: String
}

/// What `ReminderStore.cancel` found.
public enum ReminderCancelOutcome: String, Sendable {
    /// Its deliveries left the outbox now, or it was cancelled before.
    case cancelled
    /// A worker took at least one of its deliveries: too late to cancel.
    case sent
    /// No such reminder of this user.
    case notFound = "not_found"
}

/// The queries of the host's reminders. The schedule and the cancel are functions
/// (sql/functions/schedule_reminder.sql, cancel_reminder.sql), where the rules that need the database are written down.
public struct ReminderStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The mini-app's active partner and the user (tenant, opt-out, devices), in one round trip.
    public func lookup(userID: String, miniAppID: String) throws -> ReminderLookup {
        let results = try pool.withConnection { connection in
            try connection.pipeline([(Self.partnerSQL, [miniAppID]), (Self.audienceSQL, [userID, miniAppID])])
        }
        let partner = try results[0].first.map { try PartnerStore.record($0).profile }
        let rows = results[1].rows
        guard let first = rows.first else { return ReminderLookup(partner: partner, audience: nil) }
        let devices = try rows.filter { !$0.isNull(2) }.map { row in
            RecipientResolution.Device(userID: userID, deviceID: try row.string(2),
                                       service: try RecipientResolution.service(row.string(3)),
                                       environment: try row.string(4))
        }
        return ReminderLookup(partner: partner, audience: ReminderAudience(
            tenantID: try first.string(0), optedOut: try first.bool(1), devices: devices))
    }

    /// Writes the reminder, its audit row and its deliveries in one statement, unless the user has
    /// `maxPending` pending reminders of the mini-app already (exact across intake processes).
    public func schedule(_ write: ReminderWrite) throws -> ReminderScheduleOutcome {
        let (push, d) = (write.push, write.push.deliveries)
        let row = try pool.withConnection { connection in
            try connection.query(Self.scheduleSQL, [
                write.reminderID, write.userID, write.partner.tenantID, write.partner.id, write.partner.miniAppID,
                write.maxPending, push.requestID, push.createdAt, write.title, push.title, push.body, push.deepLink,
                write.at, push.dueAt, push.sendAt, push.ttlSeconds, d.map(\.id), d.map(\.service.rawValue),
                d.map(\.deviceID), d.map(\.environment), d.map(\.payload), push.idempotencyKey, push.bodyHash,
            ]).first!
        }
        let pending = try row.int(1)
        switch try row.string(0) {
        case "scheduled": return .scheduled(pending: pending)
        case "limited": return .limited(pending: pending)
        case "user_not_found": return .userNotFound
        case "tenant_mismatch": return .tenantMismatch
        case "replay": return .replay(reminderID: try row.uuid(2))
        case "key_reused": return .keyReused
        case let other:
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_schedule_reminder answered \(other)")
        }
    }

    /// The reminder the user scheduled with `key` in the last 24 hours, with its status as first answered
    /// (scheduled); nil when there is none.
    public func keyed(userID: String, key: String) throws -> KeyedReminder? {
        try pool.withConnection { connection in
            try connection.query(Self.keyedSQL, [userID, key]).first.map { row in
                KeyedReminder(
                    record: ReminderRecord(
                        id: try row.uuid(0), miniAppID: try row.string(1), title: try row.string(2),
                        body: try row.string(3), deepLink: row.optionalString(4), at: try row.date(5),
                        status: .scheduled, createdAt: try row.date(6)),
                    bodyHash: try row.string(7))
            }
        }
    }

    /// The user's pending reminders, soonest first; nil when there is no such user.
    public func pending(userID: String) throws -> [ReminderRecord]? {
        let results = try pool.withConnection { connection in
            try connection.pipeline([(Self.userExistsSQL, [userID]), (Self.pendingSQL, [userID])])
        }
        guard try results[0].first!.bool(0) else { return nil }
        return try results[1].rows.map { row in
            ReminderRecord(id: try row.uuid(0), miniAppID: try row.string(1), title: try row.string(2),
                           body: try row.string(3), deepLink: row.optionalString(4), at: try row.date(5),
                           status: .scheduled, createdAt: try row.date(6))
        }
    }

    /// Cancels a pending reminder of the user: its deliveries leave the outbox in the same
    /// transaction, so nothing of it is sent.
    public func cancel(userID: String, reminderID: UUID) throws -> ReminderCancelOutcome {
        let text = try pool.withConnection { connection in
            try connection.query(Self.cancelSQL, [reminderID, userID]).first!.string(0)
        }
        guard let outcome = ReminderCancelOutcome(rawValue: text) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_cancel_reminder answered \(text)")
        }
        return outcome
    }
}

// The statements, named so tests can EXPLAIN exactly what runs.
extension ReminderStore {
    /// $1 mini-app: its active partner (partners_active_mini_app).
    public static let partnerSQL = "SELECT \(PartnerStore.columns) FROM partners WHERE mini_app_id = $1 AND revoked_at IS NULL"

    /// $1 user, $2 mini-app: one row per device with a valid token (a row of NULL devices for a user
    /// without any), each with the user's tenant and opt-out state; none when there is no such user.
    /// A valid token is what herald_resolve_lines (sql/functions/resolve_lines.sql) counts for a push.
    public static let audienceSQL = """
        SELECT u.tenant_id,
               EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.id AND o.mini_app_id = $2),
               d.device_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment
          FROM users u
          LEFT JOIN devices d ON d.user_id = u.id
               AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
                 OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL))
         WHERE u.id = $1
         ORDER BY d.device_id
        """

    /// The schedule (sql/functions/schedule_reminder.sql); its parameters are `schedule`'s.
    public static let scheduleSQL = """
        SELECT outcome, pending, reminder FROM herald_schedule_reminder($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
            $12, $13, $14, $15, $16, $17::uuid[], $18::text[], $19::text[], $20::text[], $21::text[], $22, $23)
        """

    /// $1 user, $2 key: the reminder scheduled with the key in the last 24 hours (reminders_idempotency).
    public static let keyedSQL = """
        SELECT r.id, r.mini_app_id, r.title, r.body, r.deep_link, r.at, r.created_at, r.body_hash
          FROM reminders r
         WHERE r.user_id = $1 AND r.idempotency_key = $2 AND r.created_at > now() - interval '24 hours'
        """

    public static let userExistsSQL = "SELECT EXISTS (SELECT 1 FROM users WHERE id = $1)"

    /// $1 user: the pending reminders, from the scheduled ones (reminders_scheduled), each checked
    /// against the outbox (herald_reminder_pending, sql/functions/reminder_pending.sql).
    public static let pendingSQL = """
        SELECT r.id, r.mini_app_id, r.title, r.body, r.deep_link, r.at, r.created_at
          FROM reminders r
         WHERE r.user_id = $1 AND r.status = 'scheduled' AND herald_reminder_pending(r.deliveries)
         ORDER BY r.at, r.id
        """

    /// $1 reminder, $2 user: the cancel (sql/functions/cancel_reminder.sql).
    public static let cancelSQL = "SELECT herald_cancel_reminder($1, $2)"
}
