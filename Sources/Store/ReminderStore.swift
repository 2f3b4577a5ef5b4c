import Foundation
import HeraldCore
import Postgres

/// A reminder as the host reads it: the text as it was given (without the brand prefix).
public struct ReminderRecord: Sendable, Equatable, Decodable {
    public let id: UUID
    public let miniAppID: String
    public let title: String
    public let body: String
    public let deepLink: String?
    public let at: Date
    public let status: ReminderStatus
    public let createdAt: Date

    public init(
        id: UUID, miniAppID: String, title: String, body: String, deepLink: String?, at: Date,
        status: ReminderStatus, createdAt: Date
    ) {
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

    public init(
        reminderID: UUID, userID: String, partner: PartnerProfile, maxPending: Int, title: String, at: Date,
        push: OutboxWrite
    ) {
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
public enum ReminderCancelOutcome: String, Sendable, Decodable {
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
            try connection.pipeline(queries: [
                Queries.Partners.FindActiveByMiniApp(miniAppID: miniAppID),
                Queries.Reminders.Audience(userID: userID, miniAppID: miniAppID),
            ])
        }
        let partner = try results[0].first.map { try PartnerRecord(row: $0).profile }
        let rows = try AudienceDevice.rows(of: results[1])
        guard let first = rows.first else { return ReminderLookup(partner: partner, audience: nil) }
        let devices = try rows.compactMap { row -> RecipientResolution.Device? in
            guard let deviceID = row.deviceID, let service = row.service, let environment = row.environment else {
                return nil
            }
            return RecipientResolution.Device(
                userID: userID, deviceID: deviceID,
                service: try RecipientResolution.service(service),
                environment: environment)
        }
        return ReminderLookup(
            partner: partner,
            audience: ReminderAudience(
                tenantID: first.tenantID, optedOut: first.optedOut, devices: devices))
    }

    /// Writes the reminder, its audit row and its deliveries in one statement, unless the user has
    /// `maxPending` pending reminders of the mini-app already (exact across intake processes).
    public func schedule(_ write: ReminderWrite) throws -> ReminderScheduleOutcome {
        guard let row = try pool.withConnection({ try $0.row(Schedule(write: write)) }) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_schedule_reminder answered no row")
        }
        let pending = row.pending
        switch row.outcome {
        case "scheduled": return .scheduled(pending: pending)
        case "limited": return .limited(pending: pending)
        case "user_not_found": return .userNotFound
        case "tenant_mismatch": return .tenantMismatch
        case "replay":
            guard let reminder = row.reminder else {
                throw PostgresError(code: .decodingFailed, serverMessage: "herald_schedule_reminder named no reminder")
            }
            return .replay(reminderID: reminder)
        case "key_reused": return .keyReused
        case let other:
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_schedule_reminder answered \(other)")
        }
    }

    /// The reminder the user scheduled with `key` in the last 24 hours, with its status as first answered
    /// (scheduled); nil when there is none.
    public func keyed(userID: String, key: String) throws -> KeyedReminder? {
        try pool.withConnection { connection in
            try connection.row(Queries.Reminders.Keyed(userID: userID, key: key))
        }
    }

    /// The user's pending reminders, soonest first; nil when there is no such user.
    public func pending(userID: String) throws -> [ReminderRecord]? {
        let results = try pool.withConnection { connection in
            try connection.pipeline(queries: [
                Queries.Reminders.UserExists(userID: userID), Queries.Reminders.Pending(userID: userID),
            ])
        }
        guard try results[0].first?.bool("user_exists") == true else { return nil }
        return try ReminderRecord.rows(of: results[1])
    }

    /// Cancels a pending reminder of the user: its deliveries leave the outbox in the same
    /// transaction, so nothing of it is sent.
    public func cancel(userID: String, reminderID: UUID) throws -> ReminderCancelOutcome {
        let outcome = try pool.withConnection { connection in
            try connection.row(Queries.Reminders.Cancel(reminderID: reminderID, userID: userID))?.result
        }
        guard let outcome else {
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_cancel_reminder answered no row")
        }
        return outcome
    }
}

// The statements (Sources/Store/Queries/reminders.sql).
extension ReminderStore {
    /// The user's tenant and opt-out state, and one device with a valid token (all nil for a user without).
    struct AudienceDevice: QueryRow, Decodable {
        let tenantID: String
        let optedOut: Bool
        let deviceID: String?
        let service: String?
        let environment: String?
    }

    typealias CancelOutcome = ResultRow<ReminderCancelOutcome>

    struct Schedule: NamedQuery {
        struct Row: QueryRow, Decodable {
            let outcome: String
            let pending: Int
            let reminder: UUID?
        }

        static let sql = Queries.Reminders.schedule
        let write: ReminderWrite
        var bindings: [(any PostgresEncodable)?] {
            let (push, d) = (write.push, write.push.deliveries)
            return [
                write.reminderID, write.userID, write.partner.tenantID, write.partner.id, write.partner.miniAppID,
                write.maxPending, push.requestID, push.createdAt, write.title, push.title, push.body, push.deepLink,
                write.at, push.dueAt, push.sendAt, push.ttlSeconds, d.map(\.id), d.map(\.service.rawValue),
                d.map(\.deviceID), d.map(\.environment), d.map(\.payload), push.idempotencyKey, push.bodyHash,
            ]
        }
    }
}

extension ReminderRecord: QueryRow {}

extension KeyedReminder: QueryRow {
    public init(row: PostgresRow) throws {
        self.init(record: try ReminderRecord(row: row), bodyHash: try row.string("body_hash"))
    }
}
