import Foundation
import HeraldCore
import Postgres

/// Deliveries finished in one minute of the last hour, by outcome (a sent group row counts its members).
public struct MinuteOutcomes: Sendable, Equatable {
    /// 0 is the current minute, 59 the oldest.
    public let minutesAgo: Int
    public let counts: [String: Int]
}

/// Failed, dead or expired deliveries not yet replayed, of one partner, outcome and reason.
public struct FailureGroup: Sendable, Equatable, QueryRow, Decodable {
    public let miniAppID: String
    public let outcome: String
    /// `last_error` as recorded (an APNs or FCM reason, `ttl`, ...); nil when none was recorded.
    public let reason: String?
    public let count: Int
    public let firstAt: Date
    public let lastAt: Date

    enum CodingKeys: String, CodingKey {
        case miniAppID, outcome, firstAt, lastAt
        case reason = "lastError"
        case count = "deliveries"
    }
}

/// One audit row, as the console lists it (Queries/console.sql, `requests`).
public struct RequestSummary: Sendable, Equatable, QueryRow, Decodable {
    public let id: UUID
    public let createdAt: Date
    public let miniAppID: String
    public let title: String
    public let lane: Int
    public let recipients: Int
    public let deliveries: Int
    /// Users opted out at acceptance, and (`suppressedDeliveries`) deliveries suppressed since, as
    /// `PushRequestSummary` has them.
    public let suppressed: Int
    public let suppressedDeliveries: Int
    public let sent: Int
    public let failed: Int
    /// Deliveries a newer push with the same collapse key replaced before they were sent.
    public let superseded: Int
    /// Deliveries a retraction stopped before they went out.
    public let cancelled: Int
    /// Pending deliveries waiting for their user's quiet hours.
    public let held: Int

    /// The deliveries without an outcome yet.
    public var pending: Int {
        max(
            0,
            deliveries
                - PushRequestSummary.finished(
                    sent: sent, failed: failed, suppressed: suppressedDeliveries, superseded, cancelled))
    }
}

/// One finished delivery of a request. Never a device token: the device is named by the host's id.
public struct RequestDelivery: Sendable, Equatable, QueryRow, Decodable {
    public let id: UUID
    public let service: String
    public let deviceID: String
    public let outcome: String
    public let reason: String?
    public let attempts: Int
    public let members: Int
    public let finishedAt: Date
    public let replayed: Bool

    enum CodingKeys: String, CodingKey {
        case id, service, deviceID, outcome, attempts, members, finishedAt, replayed
        case reason = "lastError"
    }
}

/// What the console's request search filters on; every field optional.
public struct RequestSearch: Sendable, Equatable {
    public var id: UUID?
    public var miniAppID: String?
    public var since: Date?
    public var until: Date?
    public var limit = 50

    public init() {}
}

/// The console's read-only queries (docs/console.md). Each reads an index of its own or a small table;
/// `ConsoleQueryPlanTests` checks the plans.
public struct ConsoleStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The last hour, minute by minute, by outcome.
    public func lastHour() throws -> [MinuteOutcomes] {
        let rows = try pool.withConnection { try $0.rows(Queries.Console.LastHour()) }
        var minutes: [Int: [String: Int]] = [:]
        for row in rows {
            minutes[row.minutesAgo, default: [:]][row.outcome] = row.deliveries
        }
        return (0..<60).map { MinuteOutcomes(minutesAgo: $0, counts: minutes[$0] ?? [:]) }
    }

    /// Unreplayed failures finished since `since`, largest groups first.
    public func failures(since: Date, miniAppID: String?, limit: Int = 200) throws -> [FailureGroup] {
        try pool.withConnection { connection in
            guard let miniAppID else {
                return try connection.rows(Queries.Console.Failures(since: since, limit: limit))
            }
            return try connection.rows(
                Queries.Console.FailuresOfPartner(since: since, limit: limit, miniAppID: miniAppID))
        }
    }

    /// Audit rows, newest first.
    public func requests(_ search: RequestSearch) throws -> [RequestSummary] {
        let query = Self.requestSearch(search)
        return try pool.withConnection { connection in
            try connection.rows(query)
        }
    }

    /// The finished deliveries of a request created at `createdAt`: every failed, dead or expired one, and the
    /// others finished within an hour of the request (Queries/console.sql, `requestDeliveries`).
    public func deliveries(requestID: UUID, createdAt: Date, limit: Int = 500) throws -> [RequestDelivery] {
        try pool.withConnection { connection in
            try connection.rows(
                Queries.Console.RequestDeliveries(requestID: requestID, createdAt: createdAt, limit: limit))
        }
    }
}

extension ConsoleStore {
    /// One outcome's deliveries finished in one minute of the last hour (Queries/console.sql, `lastHour`).
    struct MinuteOutcome: QueryRow, Decodable {
        let minutesAgo: Int
        let outcome: String
        let deliveries: Int
    }

    /// The request search (Queries/console.sql, `requests`) for `search`: a condition not given binds NULL, and an
    /// id's UUIDv7 time names its partition.
    static func requestSearch(_ search: RequestSearch) -> Queries.Console.Requests {
        Queries.Console.Requests(
            id: search.id, createdAt: search.id.flatMap(UUIDv7.timestamp(of:)), miniAppID: search.miniAppID,
            since: search.since, until: search.until, limit: max(1, min(search.limit, 500)))
    }
}

/// A live partner's use of its limits and its webhook's health.
public struct PartnerUsage: Sendable, Equatable, QueryRow, Decodable {
    public let partnerID: UUID
    public let lastMinute: Int
    public let lastDay: Int
    public let webhookFailedDay: Int
    public let webhookLastError: String?

    enum CodingKeys: String, CodingKey {
        case webhookFailedDay, webhookLastError
        case partnerID = "id"
        case lastMinute = "minuteCount"
        case lastDay = "dayCount"
    }
}

extension ConsoleStore {
    /// Every live partner's use, keyed by partner id.
    public func partnerUsage() throws -> [UUID: PartnerUsage] {
        let rows = try pool.withConnection { try $0.rows(Queries.Console.PartnerUsage()) }
        return Dictionary(rows.map { ($0.partnerID, $0) }, uniquingKeysWith: { _, last in last })
    }
}

/// A live partner's pushes of a recent window: deliveries sent, and those the host's app reported received and
/// opened.
public struct PartnerEngagement: Sendable, Equatable, QueryRow, Decodable {
    public let partnerID: UUID
    public let sent: Int
    public let received: Int
    public let opened: Int

    enum CodingKeys: String, CodingKey {
        case sent, received, opened
        case partnerID = "id"
    }

    /// received / sent, nil before anything was sent.
    public var deliveryRate: Double? { sent > 0 ? Double(received) / Double(sent) : nil }
    /// opened / sent, nil before anything was sent.
    public var openRate: Double? { sent > 0 ? Double(opened) / Double(sent) : nil }
}

extension ConsoleStore {
    /// Every live partner's pushes accepted since `since`, keyed by partner id.
    public func partnerEngagement(since: Date) throws -> [UUID: PartnerEngagement] {
        let rows = try pool.withConnection {
            try $0.rows(Queries.Console.PartnerEngagement(since: since, sinceID: UUIDv7.lowest(at: since)))
        }
        return Dictionary(rows.map { ($0.partnerID, $0) }, uniquingKeysWith: { _, last in last })
    }
}

/// Live Activities active now of one mini-app, and their device targets holding an event back (an iPhone
/// whose update token has not been reported yet).
public struct ActivityCounts: Sendable, Equatable, QueryRow, Decodable {
    public let miniAppID: String
    public let active: Int
    public let held: Int
}

/// A webhook event that failed for good (its 24-hour window ran out, or a 4xx other than 408/429).
public struct FailedWebhookEvent: Sendable, Equatable, QueryRow, Decodable {
    public let id: UUID
    public let miniAppID: String
    public let type: String
    public let subjectID: UUID
    public let attempts: Int
    public let lastStatus: Int?
    public let lastError: String?
    public let finishedAt: Date
}

extension ConsoleStore {
    public func activityCounts() throws -> [ActivityCounts] {
        try pool.withConnection { connection in
            try connection.rows(Queries.Console.ActivityCounts())
        }
    }

    public func failedWebhooks(since: Date, limit: Int = 200) throws -> [FailedWebhookEvent] {
        try pool.withConnection { connection in
            try connection.rows(Queries.Console.FailedWebhooks(since: since, limit: limit))
        }
    }
}
