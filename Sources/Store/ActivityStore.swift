import Foundation
import HeraldCore
import Postgres

/// What an activity is in.
public enum ActivityStatus: String, Sendable, Decodable {
    case active, ended, replaced, expired
    /// Dismissed or ended by the user on every device (the device's word, or a start that created nothing).
    case dismissed
    /// A start with `startAt`, held until then (sql/062_scheduled_starts.sql); it becomes `active` when sent.
    case scheduled
    /// A scheduled start the partner deleted before it was sent: nothing was sent.
    case cancelled
    /// A scheduled start that failed a check when it came due (`ActivityRecord.startRefusal`): nothing was sent.
    case refused
}

/// What the host may report of an activity on one device: ActivityKit's `ActivityState`, and Android's word.
public enum ActivityDeviceState: String, Sendable, CaseIterable {
    case active, dismissed, ended, stale
    /// An Android phone shows it as an ordinary notification: the user or the system declined Android 16's
    /// promotion to a Live Update. It still shows the activity, so sending continues.
    case notPromoted = "not_promoted"
}

/// The answer of `ActivityStore.putDeviceState`.
public enum ActivityDeviceStateResult: Sendable, Equatable {
    /// No such activity, or it was not started on that device.
    case notFound
    /// `not_promoted` from a device that is not an Android phone: nothing was written.
    case notAndroid
    /// Recorded; the activity's status afterwards (`dismissed` once no device shows it).
    case recorded(ActivityStatus)
}

/// One device an activity was started on, as the partner's GET shows it.
public struct ActivityDeviceView: Sendable, Equatable, Decodable {
    public let deviceID: String
    public let platform: String
    /// The device's word (`active`, `dismissed`, `ended`, `stale`, `not_promoted`), `unconfirmed` (the start
    /// created nothing), else what Herald knows: `starting` (the start not delivered yet), `following` (started
    /// from a broadcast channel, which updates it), `awaiting_token` (an iPhone whose update token has not come),
    /// `active`.
    public let state: String
}

/// One Live Activity's row, as the partner API shows it and as a change merges into it.
public struct ActivityRecord: Sendable, Decodable {
    public let id: UUID
    public let partnerID: UUID
    public let miniAppID: String
    public let template: String
    public let attributesJSON: String
    public let stateJSON: String
    public let startAlertJSON: String
    public let status: ActivityStatus
    /// Bumped by every change; a change is written only onto the version it was merged into.
    public let version: Int
    /// aps.timestamp of the newest event.
    public let lastTimestamp: Int
    public let createdAt: Date
    public let updatedAt: Date
    public let expiresAt: Date
    public let endedAt: Date?
    public let dismissAt: Date?
    /// iOS `relevance-score` of its starts and updates (0-100).
    public let relevanceScore: Int
    /// The broadcast channel it follows (started from one): the channel's changes are its changes.
    public let channelID: UUID?
    /// Its user (an alert with `localized` variants is shown in the one the user's locale matches).
    public let userID: String
    /// When a scheduled start is (or was) due; nil for a start sent at once.
    public let startAt: Date?
    /// Why a scheduled start was not sent (status `refused`): `expired`, `partner_revoked`, `no_session`,
    /// `opted_out`, `quiet_hours`, `no_live_device`, or a `LiveActivityBudgetReason` of a start.
    public let startRefusal: String?
}

/// Who a start goes to: the recipient's user, its session and opt-out state for the mini-app, the
/// devices that can show an activity, and the active activity a start would replace.
public struct ActivityAudience: Sendable {
    public struct Device: Sendable, Equatable {
        public let deviceID: String
        public let service: PushService
        public let environment: String
    }
    /// The active activity of the same user and mini-app.
    public let userID: String
    public let hasSession: Bool
    public let optedOut: Bool
    public let devices: [Device]
    public let replaced: StoredLiveActivity?
}

/// The answer of `ActivityStore.admitStart`: ONE round trip.
public struct ActivityStartAdmission: Sendable {
    public let stored: IdempotentResponse?
    /// Nil when the recipient is no user of the partner's tenant.
    public let audience: ActivityAudience?
    public let reservation: RateReservation
}

/// The answer of `ActivityStore.admitChange`: ONE round trip.
public struct ActivityChangeAdmission: Sendable {
    public let stored: IdempotentResponse?
    /// Nil when the partner has no activity with this id.
    public let activity: ActivityRecord?
    public let reservation: RateReservation
}

/// The idempotency part of an activity write: the key, the request's hash and the answer to replay.
public struct ActivityKey: Sendable {
    public var key: String?
    public var bodyHash: String?
    public var response: String
    public init(key: String?, bodyHash: String?, response: String) {
        self.key = key
        self.bodyHash = bodyHash
        self.response = response
    }
}

/// The two payloads one event sends, rendered at intake.
public struct ActivityPayloads: Sendable {
    public var apns: String
    public var fcm: String
    public init(apns: String, fcm: String) {
        self.apns = apns
        self.fcm = fcm
    }
}

/// Everything a start writes (herald_activity_start, sql/functions/activity_start.sql).
public struct ActivityStartWrite: Sendable {
    public struct Replacement: Sendable {
        public var id: UUID
        public var end: ActivityPayloads
        public var timestamp: Int
        public init(id: UUID, end: ActivityPayloads, timestamp: Int) {
            self.id = id
            self.end = end
            self.timestamp = timestamp
        }
    }
    public var partnerID: UUID
    public var key: ActivityKey
    public var activityID: UUID
    public var now: Date
    public var miniAppID: String
    public var userID: String
    public var template: String
    public var attributesJSON: String
    public var stateJSON: String
    public var startAlertJSON: String
    public var expiresAt: Date
    public var timestamp: Int
    public var start: ActivityPayloads
    /// The end the TTL sweep will send, and its timestamp.
    public var end: ActivityPayloads
    public var endTimestamp: Int
    public var devices: [ActivityAudience.Device]
    public var replaced: Replacement?
    public var relevanceScore: Int
    /// The budgets the start is checked against, under the user's lock.
    public var budgets: LiveActivityBudgets
    /// What the audit row records of the partner's request (ActivityStore+Events.swift).
    public var inputs = ActivityEventInputs()
    /// A start from a broadcast channel: the channel the activity follows.
    public var channelID: UUID?
    /// A scheduled start: when it is due (`now` and `expiresAt` count from it), and the in-app session window the
    /// intake checks it against again then (HERALD_SESSION_WINDOW_DAYS).
    public var startAt: Date?
    public var sessionWindowDays = 30

    public init(
        partnerID: UUID, key: ActivityKey, activityID: UUID, now: Date, miniAppID: String, userID: String,
        template: String, attributesJSON: String, stateJSON: String, startAlertJSON: String,
        expiresAt: Date, timestamp: Int, start: ActivityPayloads, end: ActivityPayloads, endTimestamp: Int,
        devices: [ActivityAudience.Device], replaced: Replacement?, relevanceScore: Int,
        budgets: LiveActivityBudgets
    ) {
        self.partnerID = partnerID
        self.key = key
        self.activityID = activityID
        self.now = now
        self.miniAppID = miniAppID
        self.userID = userID
        self.template = template
        self.attributesJSON = attributesJSON
        self.stateJSON = stateJSON
        self.startAlertJSON = startAlertJSON
        self.expiresAt = expiresAt
        self.timestamp = timestamp
        self.start = start
        self.end = end
        self.endTimestamp = endTimestamp
        self.devices = devices
        self.replaced = replaced
        self.relevanceScore = relevanceScore
        self.budgets = budgets
    }
}

/// What `herald_activity_start` came to.
/// One batch of the sweep of scheduled starts (herald_activity_start_due): how many were sent and refused.
public struct ScheduledStartSweep: Sendable, Equatable, Decodable {
    public let started: Int
    public let refused: Int
    public init(started: Int, refused: Int) {
        self.started = started
        self.refused = refused
    }
}

public struct ActivityStartOutcome: Sendable, Equatable, Decodable {
    /// `started`, `duplicate`, or `refused` (then `refusal` says why).
    public let result: ActivityWriteResult
    public let refusal: LiveActivityBudgetReason?
    /// Seconds until the hour's start budget has room again (`refusal` a start budget).
    public let retryAfter: Int?
    /// apns-priority of the replaced activity's end, if one was replaced: 10, or 5 when that activity's
    /// alerted budget was spent.
    public let replacedPriority: Int?
}

/// An update merged into `version` (herald_activity_update).
public struct ActivityUpdateWrite: Sendable {
    public var partnerID: UUID
    public var key: ActivityKey
    public var activityID: UUID
    public var version: Int
    public var now: Date
    public var stateJSON: String
    public var expiresAt: Date
    public var timestamp: Int
    public var update: ActivityPayloads
    /// The update as a start, for devices whose start has not gone out yet.
    public var restart: ActivityPayloads
    public var apnsPriority: Int
    public var end: ActivityPayloads
    public var endTimestamp: Int
    public var relevanceScore: Int
    /// `HERALD_LA_ALERTED_UPDATES_PER_HOUR`.
    public var alertedLimit: Int
    /// With an alert: the same update without it (priority 5) and its answer, sent instead once the
    /// activity's alerted budget is spent.
    public var silent: (payloads: ActivityPayloads, response: String)?
    /// What the audit row records of the partner's request (ActivityStore+Events.swift).
    public var inputs = ActivityEventInputs()

    public init(
        partnerID: UUID, key: ActivityKey, activityID: UUID, version: Int, now: Date, stateJSON: String,
        expiresAt: Date, timestamp: Int, update: ActivityPayloads, restart: ActivityPayloads,
        apnsPriority: Int, end: ActivityPayloads, endTimestamp: Int, relevanceScore: Int, alertedLimit: Int,
        silent: (payloads: ActivityPayloads, response: String)?
    ) {
        self.partnerID = partnerID
        self.key = key
        self.activityID = activityID
        self.version = version
        self.now = now
        self.stateJSON = stateJSON
        self.expiresAt = expiresAt
        self.timestamp = timestamp
        self.update = update
        self.restart = restart
        self.apnsPriority = apnsPriority
        self.end = end
        self.endTimestamp = endTimestamp
        self.relevanceScore = relevanceScore
        self.alertedLimit = alertedLimit
        self.silent = silent
    }
}

/// The partner's end of `version` (herald_activity_end).
public struct ActivityEndWrite: Sendable {
    public var partnerID: UUID
    public var key: ActivityKey
    public var activityID: UUID
    public var version: Int
    public var now: Date
    public var stateJSON: String
    public var dismissAt: Date
    public var timestamp: Int
    public var end: ActivityPayloads
    public var apnsPriority: Int
    /// What the audit row records of the partner's request (ActivityStore+Events.swift).
    public var inputs = ActivityEventInputs()

    public init(
        partnerID: UUID, key: ActivityKey, activityID: UUID, version: Int, now: Date, stateJSON: String,
        dismissAt: Date, timestamp: Int, end: ActivityPayloads, apnsPriority: Int
    ) {
        self.partnerID = partnerID
        self.key = key
        self.activityID = activityID
        self.version = version
        self.now = now
        self.stateJSON = stateJSON
        self.dismissAt = dismissAt
        self.timestamp = timestamp
        self.end = end
        self.apnsPriority = apnsPriority
    }
}

/// What an activity write came to.
public enum ActivityWriteResult: String, Sendable, Decodable {
    case started, updated
    /// A start with `startAt`, held until then (herald_activity_schedule).
    case scheduled
    /// A scheduled start deleted before it was sent (herald_activity_cancel).
    case cancelled
    /// An alerted update sent silent: the activity's alerted budget was spent.
    case updatedSilently = "updated_silent"
    case endedNow = "ended_now"
    /// A start over a budget (`ActivityStartOutcome.refusal`): nothing was written.
    case refused
    /// Another request holds the idempotency key: nothing was written.
    case duplicate
    case notFound = "not_found"
    /// The activity ended (or reached its TTL) before this change.
    case ended
    /// The activity changed since it was read: merge again.
    case conflict
}

/// What a reported update token did.
public enum ActivityTokenResult: String, Sendable {
    case notFound = "not_found"
    case notIOS = "not_ios"
    case unchanged, stored
    /// The token released an update or end that was waiting for it.
    case sent
}

/// The queries of the Live Activity endpoints and the TTL sweep (sql/functions/activity_*.sql, expire_activities.sql).
public struct ActivityStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The stored response of the key, the start's audience and a rate-limit slot, in ONE round trip.
    public func admitStart(
        partner: PartnerProfile, idempotencyKey: String?, now: Date, email: String?,
        wallet: String?, sessionSince: Date, template: LiveActivityTemplate
    ) throws
        -> ActivityStartAdmission
    {
        let audience = Queries.Activities.Audience(
            tenantID: partner.tenantID, email: email, wallet: wallet, miniAppID: partner.miniAppID,
            sessionSince: sessionSince, template: template.rawValue)
        let admission = try PushStore.admission(
            on: pool, partner: partner, idempotencyKey: idempotencyKey, now: now,
            lookup: audience)
        return ActivityStartAdmission(
            stored: admission.stored, audience: admission.lookup?.first,
            reservation: admission.reservation)
    }

    /// The stored response of the key, the partner's activity and a rate-limit slot, in ONE round trip.
    public func admitChange(partner: PartnerProfile, idempotencyKey: String?, now: Date, activityID: UUID) throws
        -> ActivityChangeAdmission
    {
        let find = Queries.Activities.Find(id: activityID, partnerID: partner.id)
        let admission = try PushStore.admission(
            on: pool, partner: partner, idempotencyKey: idempotencyKey, now: now,
            lookup: find)
        return ActivityChangeAdmission(
            stored: admission.stored, activity: admission.lookup?.first,
            reservation: admission.reservation)
    }

    /// The partner's activity by id; nil for another partner's.
    public func find(id: UUID, partnerID: UUID) throws -> ActivityRecord? {
        try pool.withConnection { try $0.row(Queries.Activities.Find(id: id, partnerID: partnerID)) }
    }

    public func start(_ write: ActivityStartWrite) throws -> ActivityStartOutcome {
        try pool.withConnection { try $0.row(Start(write: write))! }
    }

    /// Holds a start with `startAt` (`write.startAt` set): `scheduled`, or `duplicate`.
    public func schedule(_ write: ActivityStartWrite) throws -> ActivityWriteResult {
        try pool.withConnection { try $0.row(Schedule(write: write))!.result }
    }

    /// Cancels a scheduled start read at `version`: `cancelled`, or a refusal (`conflict`: read it again).
    public func cancel(partnerID: UUID, key: ActivityKey, activityID: UUID, version: Int, now: Date) throws
        -> ActivityWriteResult
    {
        let query = Cancel(partnerID: partnerID, key: key, activityID: activityID, version: version, now: now)
        return try pool.withConnection { try $0.row(query)!.result }
    }

    public func update(_ write: ActivityUpdateWrite) throws -> ActivityWriteResult {
        try pool.withConnection { try $0.row(Update(write: write))!.result }
    }

    public func end(_ write: ActivityEndWrite) throws -> ActivityWriteResult {
        try pool.withConnection { try $0.row(End(write: write))!.result }
    }

    /// Records the device's word about `activityID` on `deviceID` (functions/activity_device_state.sql).
    public func putDeviceState(activityID: UUID, deviceID: String, state: ActivityDeviceState) throws
        -> ActivityDeviceStateResult
    {
        let query = Queries.Activities.DeviceState(activityID: activityID, deviceID: deviceID, state: state.rawValue)
        let text = try pool.withConnection { try $0.row(query)!.result }
        switch text {
        case "not_found": return .notFound
        case "not_android": return .notAndroid
        default:
            guard let status = ActivityStatus(rawValue: text) else {
                throw PostgresError(code: .decodingFailed, serverMessage: "unexpected activity status \(text)")
            }
            return .recorded(status)
        }
    }

    /// The devices the activity was started on, by device id.
    public func devices(activityID: UUID) throws -> [ActivityDeviceView] {
        try pool.withConnection { try $0.rows(Queries.Activities.Devices(activityID: activityID)) }
    }

    /// One batch of the sweep of iPhones whose start created nothing (no update token `seconds` after it
    /// reached APNs): how many became unconfirmed.
    public static func unconfirm(on connection: PostgresConnection, seconds: Int, limit: Int) throws -> Int {
        try connection.row(Queries.Activities.Unconfirm(seconds: seconds, limit: limit))!.count
    }

    public func putToken(activityID: UUID, deviceID: String, token: String) throws -> ActivityTokenResult {
        let text = try pool.withConnection {
            try $0.row(Queries.Activities.Token(activityID: activityID, deviceID: deviceID, token: token))!.result
        }
        guard let result = ActivityTokenResult(rawValue: text) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected token result \(text)")
        }
        return result
    }

    /// One batch of the TTL sweep on `connection`: returns how many activities expired.
    public static func expire(on connection: PostgresConnection, limit: Int) throws -> Int {
        try connection.row(Queries.Activities.Expire(limit: limit))!.count
    }

    /// One batch of the sweep of scheduled starts due at `now` on `connection` (functions/activity_start_due.sql).
    public static func startDue(on connection: PostgresConnection, now: Date, limit: Int) throws -> ScheduledStartSweep
    {
        try connection.row(Queries.Activities.StartDue(now: now, limit: limit))!
    }

    /// Sends or refuses every scheduled start due at `now`, in batches of `batchSize`: the totals.
    public func startAllDue(now: Date, batchSize: Int = 1_000) throws -> ScheduledStartSweep {
        try pool.withConnection { connection in
            var started = 0, refused = 0
            while true {
                let batch = try Self.startDue(on: connection, now: now, limit: batchSize)
                started += batch.started
                refused += batch.refused
                if batch.started + batch.refused < batchSize {
                    return ScheduledStartSweep(started: started, refused: refused)
                }
            }
        }
    }

    /// Sweeps until nothing is due, in batches of `batchSize` (short transactions: pushes keep flowing).
    public func expireAll(batchSize: Int = 1_000) throws -> Int {
        try pool.withConnection { connection in
            var total = 0
            while true {
                let expired = try Self.expire(on: connection, limit: batchSize)
                total += expired
                if expired < batchSize { return total }
            }
        }
    }
}

extension ActivityAudience: QueryRow {
    public init(row: PostgresRow) throws {
        // [[device_id, service, environment], ...] (herald_activity_audience).
        guard let rows = try? JSONParser.parse(Array(row.string("devices").utf8)).arrayValue else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected audience devices")
        }
        var devices: [ActivityAudience.Device] = []
        for device in rows {
            guard let fields = device.arrayValue, fields.count == 3, let id = fields[0].stringValue,
                let service = fields[1].stringValue, let environment = fields[2].stringValue
            else { throw PostgresError(code: .decodingFailed, serverMessage: "unexpected audience device") }
            devices.append(
                .init(deviceID: id, service: try RecipientResolution.service(service), environment: environment))
        }
        let replaced = try row.isNull("old_id") ? nil : StoredLiveActivity(row: row, prefix: "old_")
        self.init(
            userID: try row.string("user_id"), hasSession: try row.bool("has_session"),
            optedOut: try row.bool("opted_out"), devices: devices, replaced: replaced)
    }
}

extension StoredLiveActivity {
    /// An activity from a row's columns, each named behind `prefix` (`old_`: the activity a start replaces).
    init(row: PostgresRow, prefix: String = "") throws {
        self.init(
            id: try row.uuid(prefix + "id"), template: try row.string(prefix + "template"),
            attributesJSON: try row.string(prefix + "attributes"), stateJSON: try row.string(prefix + "state"),
            lastTimestamp: try row.int(prefix + "last_timestamp"), createdAt: try row.date(prefix + "created_at"),
            expiresAt: try row.date(prefix + "expires_at"))
    }
}

extension ActivityRecord: QueryRow {}
extension ScheduledStartSweep: QueryRow {}
extension ActivityStartOutcome: QueryRow {}
extension ActivityDeviceView: QueryRow {}

extension ActivityStore {
    struct Start: NamedQuery {
        typealias Row = ActivityStartOutcome
        static let sql = Queries.Activities.start
        let write: ActivityStartWrite
        var bindings: [(any PostgresEncodable)?] {
            let d = write.devices
            let r = write.replaced
            let b = write.budgets
            return [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.activityID, write.now,
                write.miniAppID, write.userID, write.template, write.attributesJSON, write.stateJSON,
                write.startAlertJSON, write.expiresAt, write.timestamp, write.end.apns, write.end.fcm,
                write.endTimestamp, d.map(\.deviceID), d.map(\.service.rawValue),
                write.start.apns, write.start.fcm, r?.id, r?.end.apns, r?.end.fcm, r?.timestamp,
                write.relevanceScore, b.maxActivePerUser, b.startsPerUserHour, b.startsPerUserAppHour,
                b.alertedUpdatesPerHour, write.inputs.alertTitle, write.inputs.ttlSeconds, write.channelID,
            ]
        }
    }

    struct Schedule: NamedQuery {
        typealias Row = ResultRow<ActivityWriteResult>
        static let sql = Queries.Activities.schedule
        let write: ActivityStartWrite
        var bindings: [(any PostgresEncodable)?] {
            let d = write.devices
            let b = write.budgets
            return [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.activityID, write.now,
                write.miniAppID, write.userID, write.template, write.attributesJSON, write.stateJSON,
                write.startAlertJSON, write.startAt, write.expiresAt, write.timestamp, write.end.apns, write.end.fcm,
                write.endTimestamp, d.map(\.deviceID), d.map(\.service.rawValue), write.start.apns, write.start.fcm,
                write.relevanceScore, write.sessionWindowDays, b.maxActivePerUser, b.startsPerUserHour,
                b.startsPerUserAppHour, b.alertedUpdatesPerHour, write.inputs.alertTitle, write.inputs.ttlSeconds,
            ]
        }
    }

    struct Cancel: NamedQuery {
        typealias Row = ResultRow<ActivityWriteResult>
        static let sql = Queries.Activities.cancel
        let partnerID: UUID
        let key: ActivityKey
        let activityID: UUID
        let version: Int
        let now: Date
        var bindings: [(any PostgresEncodable)?] {
            [partnerID, key.key, key.bodyHash, key.response, activityID, version, now]
        }
    }

    struct Update: NamedQuery {
        typealias Row = ResultRow<ActivityWriteResult>
        static let sql = Queries.Activities.update
        let write: ActivityUpdateWrite
        var bindings: [(any PostgresEncodable)?] {
            [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.activityID, write.version,
                write.now, write.stateJSON, write.expiresAt, write.timestamp, write.update.apns, write.restart.apns,
                write.update.fcm, write.restart.fcm, write.apnsPriority, write.end.apns, write.end.fcm,
                write.endTimestamp, write.relevanceScore, write.alertedLimit, write.silent?.payloads.apns,
                write.silent?.payloads.fcm, write.silent?.response, write.inputs.patchJSON, write.inputs.alertTitle,
                write.inputs.ttlSeconds,
            ]
        }
    }

    struct End: NamedQuery {
        typealias Row = ResultRow<ActivityWriteResult>
        static let sql = Queries.Activities.end
        let write: ActivityEndWrite
        var bindings: [(any PostgresEncodable)?] {
            [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.activityID, write.version,
                write.now, write.stateJSON, write.dismissAt, write.timestamp, write.end.apns, write.end.fcm,
                write.apnsPriority, write.inputs.alertTitle, write.inputs.dismissAt,
            ]
        }
    }
}
