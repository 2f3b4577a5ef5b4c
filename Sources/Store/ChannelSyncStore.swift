import Foundation
import Postgres

/// A broadcast channel leased to a worker, with what it needs to make APNs agree with the row.
public struct LeasedChannel: Sendable, Equatable {
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

    public init(id: UUID, status: ChannelStatus, apnsChannelID: String?, environment: String?, version: Int,
                sentVersion: Int, payload: String?, priority: Int?, expiresAt: Date, deleteAt: Date?, attempts: Int) {
        self.id = id
        self.status = status
        self.apnsChannelID = apnsChannelID
        self.environment = environment
        self.version = version
        self.sentVersion = sentVersion
        self.payload = payload
        self.priority = priority
        self.expiresAt = expiresAt
        self.deleteAt = deleteAt
        self.attempts = attempts
    }
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
        try pool.withConnection { connection in
            try connection.query(Self.claimSQL, [limit, leaseSeconds, now]).rows.map { row in
                guard let status = ChannelStatus(rawValue: try row.string(1)) else {
                    throw PostgresError(code: .decodingFailed, serverMessage: "unexpected channel status")
                }
                return LeasedChannel(
                    id: try row.uuid(0), status: status, apnsChannelID: row.optionalString(2),
                    environment: row.optionalString(3), version: try row.int(4), sentVersion: try row.int(5),
                    payload: row.optionalString(6), priority: try row.optionalInt(7), expiresAt: try row.date(8),
                    deleteAt: try row.optionalDate(9), attempts: try row.int(10))
            }
        }
    }

    public func record(_ outcome: ChannelCallOutcome, channelID: UUID, now: Date) throws {
        let parameters: [(any PostgresEncodable)?]
        switch outcome {
        case .created(let apnsID, let environment):
            parameters = [channelID, "created", nil, nil, nil, apnsID, environment, now]
        case .broadcast(let version):
            parameters = [channelID, "broadcast", version, nil, nil, nil, nil, now]
        case .refused(let version, let reason):
            parameters = [channelID, "refused", version, reason, nil, nil, nil, now]
        case .deleted:
            parameters = [channelID, "deleted", nil, nil, nil, nil, nil, now]
        case .closed:
            parameters = [channelID, "closed", nil, nil, nil, nil, nil, now]
        case .gone(let reason):
            parameters = [channelID, "gone", nil, reason, nil, nil, nil, now]
        case .retry(let reason, let at):
            parameters = [channelID, "retry", nil, reason, at, nil, nil, now]
        case .release:
            parameters = [channelID, "release", nil, nil, nil, nil, nil, now]
        }
        _ = try pool.withConnection { try $0.query(Self.recordSQL, parameters) }
    }

    /// $1 limit, $2 lease seconds, $3 now (sql/functions/channel_claim.sql).
    public static let claimSQL = "SELECT * FROM herald_channel_claim($1, $2, $3)"

    public static let recordSQL = """
        SELECT herald_channel_record($1, $2, $3::integer, $4::text, $5::timestamptz, $6::text, $7::text, $8)
        """
}
