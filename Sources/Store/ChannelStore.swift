import Foundation
import HeraldCore
import Postgres

/// Where a broadcast channel stands (sql/034_live_channels.sql).
public enum ChannelStatus: String, Sendable, CaseIterable {
    /// Written; APNs has not made the channel yet.
    case opening
    /// APNs made it: phones can follow it, changes are broadcast.
    case open
    /// Ended (by the partner or the TTL): the end is broadcast, then the APNs channel is deleted.
    case ending
    /// Over: the APNs channel is deleted, or was never made.
    case ended
    /// APNs refused the channel for good (`ChannelRecord.failure` says why).
    case failed
}

/// One broadcast channel as the partner and the host see it.
public struct ChannelRecord: Sendable, Equatable {
    public let id: UUID
    public let partnerID: UUID
    public let miniAppID: String
    public let template: String
    public let attributesJSON: String
    public let stateJSON: String
    public let status: ChannelStatus
    public let apnsChannelID: String?
    public let version: Int
    public let sentVersion: Int
    public let lastTimestamp: Int
    public let relevanceScore: Int
    public let createdAt: Date
    public let updatedAt: Date
    public let expiresAt: Date
    public let endedAt: Date?
    public let failure: String?
    public let broadcasts: Int
}

/// A partner's new channel, ready to write: its payloads are rendered and signed (the TTL's end).
public struct ChannelOpenWrite: Sendable {
    public var partnerID: UUID
    public var key: ActivityKey
    public var channelID: UUID
    public var now: Date
    public var miniAppID: String
    public var template: String
    public var attributesJSON: String
    public var stateJSON: String
    public var expiresAt: Date
    public var timestamp: Int
    public var relevanceScore: Int
    public var endPayload: String
    /// The partner's ttlSeconds when it gave one (the audit keeps what was given).
    public var ttlGiven: Int?
    public var maxOpen: Int

    public init(partnerID: UUID, key: ActivityKey, channelID: UUID, now: Date, miniAppID: String, template: String,
                attributesJSON: String, stateJSON: String, expiresAt: Date, timestamp: Int, relevanceScore: Int,
                endPayload: String, ttlGiven: Int?, maxOpen: Int) {
        self.partnerID = partnerID
        self.key = key
        self.channelID = channelID
        self.now = now
        self.miniAppID = miniAppID
        self.template = template
        self.attributesJSON = attributesJSON
        self.stateJSON = stateJSON
        self.expiresAt = expiresAt
        self.timestamp = timestamp
        self.relevanceScore = relevanceScore
        self.endPayload = endPayload
        self.ttlGiven = ttlGiven
        self.maxOpen = maxOpen
    }
}

/// What opening a channel came to.
public enum ChannelOpenResult: String, Sendable {
    case opened
    /// Another request holds the idempotency key: nothing was written.
    case duplicate
    /// The mini-app has its most channels opening or open: nothing was written.
    case tooManyChannels = "too_many_channels"
}

/// A partner's update or end of a channel, ready to write.
public struct ChannelChangeWrite: Sendable {
    public enum Kind: String, Sendable { case update, end }

    public var partnerID: UUID
    public var key: ActivityKey
    public var channelID: UUID
    /// The version the change was merged into.
    public var version: Int
    public var now: Date
    public var kind: Kind
    public var stateJSON: String
    public var timestamp: Int
    /// The broadcast of this change and its apns-priority.
    public var payload: String
    public var priority: Int
    /// The TTL's end with the new state (an update), or the end itself (an end).
    public var endPayload: String
    public var expiresAt: Date
    public var relevanceScore: Int
    /// An end: when the APNs channel is deleted.
    public var deleteAt: Date?
    public var inputs: ActivityEventInputs
    /// An alerted update: the channel's alerted budget an hour, and the silent variant (payload, answer) sent
    /// instead once it is spent.
    public var alertedLimit: Int?
    public var silent: (payload: String, response: String)?

    public init(partnerID: UUID, key: ActivityKey, channelID: UUID, version: Int, now: Date, kind: Kind,
                stateJSON: String, timestamp: Int, payload: String, priority: Int, endPayload: String, expiresAt: Date,
                relevanceScore: Int, deleteAt: Date?, inputs: ActivityEventInputs) {
        self.partnerID = partnerID
        self.key = key
        self.channelID = channelID
        self.version = version
        self.now = now
        self.kind = kind
        self.stateJSON = stateJSON
        self.timestamp = timestamp
        self.payload = payload
        self.priority = priority
        self.endPayload = endPayload
        self.expiresAt = expiresAt
        self.relevanceScore = relevanceScore
        self.deleteAt = deleteAt
        self.inputs = inputs
    }
}

/// One audit row of a channel.
public struct ChannelEventRecord: Sendable, Equatable {
    public let id: UUID
    public let kind: String
    public let createdAt: Date
    public let stateJSON: String?
    public let alertTitle: String?
    public let ttlSeconds: Int?
    public let dismissAt: Date?
    public let idempotencyKey: String?
    /// `pending`, `sent`, `superseded` (a newer change was broadcast first), `failed` or `not_sent` (the channel
    /// ended before APNs made it).
    public let outcome: String
    public let reason: String?
    public let finishedAt: Date?
}

/// The intake's queries of broadcast channels (sql/034_live_channels.sql); the worker's are `ChannelSyncStore`'s.
public struct ChannelStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The stored response of the key, the partner's channel (when `channelID` is given) and a rate-limit slot,
    /// in ONE round trip.
    public func admit(partner: PartnerProfile, idempotencyKey: String?, now: Date, channelID: UUID?) throws
        -> (stored: IdempotentResponse?, channel: ChannelRecord?, reservation: RateReservation) {
        let admission = try PushStore.admission(
            on: pool, partner: partner, idempotencyKey: idempotencyKey, now: now,
            lookup: channelID.map { (Self.findSQL, [$0, partner.id]) })
        return (stored: admission.stored, channel: try admission.lookup?.first.map(Self.record),
                reservation: admission.reservation)
    }

    public func open(_ write: ChannelOpenWrite) throws -> ChannelOpenResult {
        let text = try pool.withConnection { connection in
            try connection.query(Self.openSQL, [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.channelID, write.now,
                write.miniAppID, write.template, write.attributesJSON, write.stateJSON, write.expiresAt,
                write.timestamp, write.relevanceScore, write.endPayload, write.ttlGiven, write.maxOpen,
            ]).first!.string(0)
        }
        guard let result = ChannelOpenResult(rawValue: text) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected channel open result \(text)")
        }
        return result
    }

    /// An update or end: `updated`, `updated_silent` (the alerted budget was spent), `ended_now`, or `not_found`,
    /// `ended`, `conflict`, `duplicate`.
    public func change(_ write: ChannelChangeWrite) throws -> ActivityWriteResult {
        let text = try pool.withConnection { connection in
            try connection.query(Self.changeSQL, [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.channelID, write.version,
                write.now, write.kind.rawValue, write.stateJSON, write.timestamp, write.payload, write.priority,
                write.endPayload, write.expiresAt, write.relevanceScore, write.deleteAt, write.inputs.patchJSON,
                write.inputs.alertTitle, write.inputs.ttlSeconds, write.inputs.dismissAt, write.alertedLimit,
                write.silent?.payload, write.silent?.response,
            ]).first!.string(0)
        }
        guard let result = ActivityWriteResult(rawValue: text) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected channel change result \(text)")
        }
        return result
    }

    /// The partner's channel by id; nil for another partner's.
    public func find(id: UUID, partnerID: UUID) throws -> ChannelRecord? {
        try pool.withConnection { try $0.query(Self.findSQL, [id, partnerID]).first.map(Self.record) }
    }

    /// A channel's audit rows, newest first.
    public func events(channelID: UUID, limit: Int) throws -> [ChannelEventRecord] {
        try pool.withConnection { connection in
            try connection.query(Self.eventsSQL, [channelID, limit]).rows.map { row in
                ChannelEventRecord(
                    id: try row.uuid(0), kind: try row.string(1), createdAt: try row.date(2),
                    stateJSON: row.optionalString(3), alertTitle: row.optionalString(4), ttlSeconds: try row.optionalInt(5),
                    dismissAt: try row.optionalDate(6), idempotencyKey: row.optionalString(7), outcome: try row.string(8),
                    reason: row.optionalString(9), finishedAt: try row.optionalDate(10))
            }
        }
    }

    /// The mini-app's channels phones can follow now (open, with their APNs id), oldest first, each with its
    /// partner's display name (the brand the app shows).
    public func followable(miniAppID: String, limit: Int) throws -> [(channel: ChannelRecord, displayName: String)] {
        try pool.withConnection { connection in
            try connection.query(Self.followableSQL, [miniAppID, limit]).rows.map { row in
                (try Self.record(row), try row.string(18))
            }
        }
    }

    static func record(_ row: PostgresRow) throws -> ChannelRecord {
        guard let status = ChannelStatus(rawValue: try row.string(6)) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected channel status")
        }
        return ChannelRecord(
            id: try row.uuid(0), partnerID: try row.uuid(1), miniAppID: try row.string(2), template: try row.string(3),
            attributesJSON: try row.string(4), stateJSON: try row.string(5), status: status,
            apnsChannelID: row.optionalString(7), version: try row.int(8), sentVersion: try row.int(9),
            lastTimestamp: try row.int(10), relevanceScore: try row.int(11), createdAt: try row.date(12),
            updatedAt: try row.date(13), expiresAt: try row.date(14), endedAt: try row.optionalDate(15),
            failure: row.optionalString(16), broadcasts: try row.int(17))
    }
}

// The statements, named so tests can EXPLAIN exactly what runs.
extension ChannelStore {
    /// The columns `record` reads, in its order, each after `alias` (`c.`) when given.
    static func columns(_ alias: String = "") -> String {
        ["id", "partner_id", "mini_app_id", "template", "attributes::text", "state::text", "status", "apns_channel_id",
         "version", "sent_version", "last_timestamp", "relevance_score", "created_at", "updated_at", "expires_at",
         "ended_at", "failure", "broadcasts"].map { alias + $0 }.joined(separator: ", ")
    }

    /// $1 id, $2 partner: a primary-key probe; another partner's id finds nothing.
    public static let findSQL = "SELECT \(columns()) FROM live_channels WHERE id = $1 AND partner_id = $2"

    /// $1 mini-app, $2 limit: the open channels, by the mini-app's index, with their partner's display name.
    public static let followableSQL = """
        SELECT \(columns("c.")), p.display_name
          FROM live_channels c JOIN partners p ON p.id = c.partner_id
         WHERE c.mini_app_id = $1 AND c.status = 'open' AND c.apns_channel_id IS NOT NULL
         ORDER BY c.created_at LIMIT $2
        """

    /// $1 channel, $2 limit: newest first, by the channel's index.
    public static let eventsSQL = """
        SELECT id, kind, created_at, state::text, alert_title, ttl_seconds, dismiss_at, idempotency_key, outcome,
               reason, finished_at
          FROM live_channel_events WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
        """

    public static let openSQL = """
        SELECT herald_channel_open($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13::smallint,
                                   $14, $15, $16)
        """

    public static let changeSQL = """
        SELECT herald_channel_change($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12::smallint, $13, $14,
                                     $15::smallint, $16, $17::jsonb, $18, $19, $20, $21, $22, $23)
        """
}
