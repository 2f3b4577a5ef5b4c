import Foundation
import Postgres

/// A broadcast channel leased to a worker, with what it needs to make APNs agree with the row.
public struct LeasedChannel: Sendable, Equatable, Decodable {
    public let id: UUID
    public let status: ChannelStatus
    public let apnsChannelID: String?
    public let environment: String?
    public let version: Int
    public let sentVersion: Int
    public let payload: String?
    public let priority: Int?
    public let expiresAt: Date
    public let deleteAt: Date?
    /// Claims of this row since its last success, this one included.
    public let attempts: Int
}

/// What came of a worker's call for a leased channel (sql/functions/channel_record.sql says what each does).
public enum ChannelCallOutcome: Sendable, Equatable {
    case created(apnsChannelID: String, environment: String)
    case broadcast(version: Int)
    case refused(version: Int, reason: String)
    case deleted
    case closed
    case gone(reason: String)
    case retry(reason: String, at: Date)
    case release
}

/// The worker's queries of broadcast channels: lease the due ones, record what APNs answered.
public struct ChannelSyncStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// Notified after every change a worker has to make APNs agree with (the intake's DeliveryNotifier, outside
    /// the write, coalesced): the worker's listener wakes the channel sender.
    public static let notificationChannel = "herald_channels"

    public func claim(limit: Int, leaseSeconds: Int, now: Date) throws -> [LeasedChannel] {
        try pool.withConnection {
            try $0.rows(Queries.ChannelSync.Claim(limit: limit, leaseSeconds: leaseSeconds, now: now))
        }
    }

    public func record(_ outcome: ChannelCallOutcome, channelID: UUID, now: Date) throws {
        try pool.withConnection { try $0.run(Record(outcome: outcome, channelID: channelID, now: now)) }
    }

    /// Of the channel ids APNs lists for the app, those no channel Herald still manages (opening, open or
    /// ending) carries.
    public func unmanaged(_ apnsChannelIDs: [String]) throws -> [String] {
        guard !apnsChannelIDs.isEmpty else { return [] }
        return try pool.withConnection {
            try $0.rows(Queries.ChannelSync.Unmanaged(apnsChannelIDs: apnsChannelIDs)).map(\.apnsChannelID)
        }
    }
}

/// An APNs channel id no channel of Herald's carries (`ChannelSyncStore.unmanaged`).
public struct UnmanagedChannel: Sendable, Equatable, Decodable, QueryRow {
    public let apnsChannelID: String
}

extension LeasedChannel: QueryRow {}

extension ChannelSyncStore {

    struct Record: NamedQuery {
        static let sql = Queries.ChannelSync.record
        let outcome: ChannelCallOutcome
        let channelID: UUID
        let now: Date
        var bindings: [(any PostgresEncodable)?] {
            switch outcome {
            case .created(let apnsID, let environment):
                [channelID, "created", nil, nil, nil, apnsID, environment, now]
            case .broadcast(let version):
                [channelID, "broadcast", version, nil, nil, nil, nil, now]
            case .refused(let version, let reason):
                [channelID, "refused", version, reason, nil, nil, nil, now]
            case .deleted:
                [channelID, "deleted", nil, nil, nil, nil, nil, now]
            case .closed:
                [channelID, "closed", nil, nil, nil, nil, nil, now]
            case .gone(let reason):
                [channelID, "gone", nil, reason, nil, nil, nil, now]
            case .retry(let reason, let at):
                [channelID, "retry", nil, reason, at, nil, nil, now]
            case .release:
                [channelID, "release", nil, nil, nil, nil, nil, now]
            }
        }
    }
}
