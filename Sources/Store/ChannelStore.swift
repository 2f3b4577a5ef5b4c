import Foundation
import HeraldCore
import Postgres

/// Where a broadcast channel stands (sql/034_live_channels.sql).
public enum ChannelStatus: String, Sendable, CaseIterable, Decodable {
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
public struct ChannelRecord: Sendable, Equatable, Decodable {
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

    public init(
        partnerID: UUID, key: ActivityKey, channelID: UUID, now: Date, miniAppID: String, template: String,
        attributesJSON: String, stateJSON: String, expiresAt: Date, timestamp: Int, relevanceScore: Int,
        endPayload: String, ttlGiven: Int?, maxOpen: Int
    ) {
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

    public init(
        partnerID: UUID, key: ActivityKey, channelID: UUID, version: Int, now: Date, kind: Kind,
        stateJSON: String, timestamp: Int, payload: String, priority: Int, endPayload: String, expiresAt: Date,
        relevanceScore: Int, deleteAt: Date?, inputs: ActivityEventInputs
    ) {
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
public struct ChannelEventRecord: Sendable, Equatable, Decodable {
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

/// The intake's queries of broadcast channels (sql/functions/channel_*.sql); the worker's are `ChannelSyncStore`'s.
public struct ChannelStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The stored response of the key, the partner's channel (when `channelID` is given) and a rate-limit slot,
    /// in ONE round trip.
    public func admit(partner: PartnerProfile, idempotencyKey: String?, now: Date, channelID: UUID?) throws
        -> (stored: IdempotentResponse?, channel: ChannelRecord?, reservation: RateReservation)
    {
        let admission = try PushStore.admission(
            on: pool, partner: partner, idempotencyKey: idempotencyKey, now: now,
            lookup: channelID.map { Queries.Channels.Find(id: $0, partnerID: partner.id) })
        return (
            stored: admission.stored, channel: admission.lookup?.first,
            reservation: admission.reservation
        )
    }

    public func open(_ write: ChannelOpenWrite) throws -> ChannelOpenResult {
        let text = try pool.withConnection { try $0.row(Open(write: write))!.result }
        guard let result = ChannelOpenResult(rawValue: text) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected channel open result \(text)")
        }
        return result
    }

    /// An update or end: `updated`, `updated_silent` (the alerted budget was spent), `ended_now`, or `not_found`,
    /// `ended`, `conflict`, `duplicate`.
    public func change(_ write: ChannelChangeWrite) throws -> ActivityWriteResult {
        let text = try pool.withConnection { try $0.row(Change(write: write))!.result }
        guard let result = ActivityWriteResult(rawValue: text) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unexpected channel change result \(text)")
        }
        return result
    }

    /// The partner's channel by id; nil for another partner's.
    public func find(id: UUID, partnerID: UUID) throws -> ChannelRecord? {
        try pool.withConnection { try $0.row(Queries.Channels.Find(id: id, partnerID: partnerID)) }
    }

    /// A channel's audit rows, newest first.
    public func events(channelID: UUID, limit: Int) throws -> [ChannelEventRecord] {
        try pool.withConnection { try $0.rows(Queries.Channels.Events(channelID: channelID, limit: limit)) }
    }

    /// The mini-app's channels phones can follow now (open, with their APNs id), oldest first, each with its
    /// partner's display name (the brand the app shows).
    public func followable(miniAppID: String, limit: Int) throws -> [(channel: ChannelRecord, displayName: String)] {
        try pool.withConnection { connection in
            try connection.rows(Queries.Channels.Followable(miniAppID: miniAppID, limit: limit))
                .map { ($0.channel, $0.displayName) }
        }
    }
}

extension ChannelRecord: QueryRow {}
extension ChannelEventRecord: QueryRow {}

extension ChannelStore {

    /// A channel with its partner's display name, as `followable` (Queries/channels.sql) returns it.
    struct FollowableChannel: QueryRow {
        let channel: ChannelRecord
        let displayName: String
        init(row: PostgresRow) throws {
            channel = try ChannelRecord(row: row)
            displayName = try row.string("display_name")
        }
    }

    struct Open: NamedQuery {
        typealias Row = WriteResultRow
        static let sql = Queries.Channels.open
        let write: ChannelOpenWrite
        var bindings: [(any PostgresEncodable)?] {
            [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.channelID, write.now,
                write.miniAppID, write.template, write.attributesJSON, write.stateJSON, write.expiresAt,
                write.timestamp, write.relevanceScore, write.endPayload, write.ttlGiven, write.maxOpen,
            ]
        }
    }

    struct Change: NamedQuery {
        typealias Row = WriteResultRow
        static let sql = Queries.Channels.change
        let write: ChannelChangeWrite
        var bindings: [(any PostgresEncodable)?] {
            [
                write.partnerID, write.key.key, write.key.bodyHash, write.key.response, write.channelID, write.version,
                write.now, write.kind.rawValue, write.stateJSON, write.timestamp, write.payload, write.priority,
                write.endPayload, write.expiresAt, write.relevanceScore, write.deleteAt, write.inputs.patchJSON,
                write.inputs.alertTitle, write.inputs.ttlSeconds, write.inputs.dismissAt, write.alertedLimit,
                write.silent?.payload, write.silent?.response,
            ]
        }
    }
}
