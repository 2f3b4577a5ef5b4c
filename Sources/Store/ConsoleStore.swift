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
public struct FailureGroup: Sendable, Equatable {
    public let miniAppID: String
    public let outcome: String
    /// `last_error` as recorded (an APNs or FCM reason, `ttl`, ...); nil when none was recorded.
    public let reason: String?
    public let count: Int
    public let firstAt: Date
    public let lastAt: Date
}

/// One audit row, as the console lists it.
public struct RequestSummary: Sendable, Equatable {
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
    /// Pending deliveries waiting for their user's quiet hours.
    public let held: Int

    /// The deliveries without an outcome yet.
    public var pending: Int { max(0, deliveries - sent - failed - suppressedDeliveries) }
}

/// One finished delivery of a request. Never a device token: the device is named by the host's id.
public struct RequestDelivery: Sendable, Equatable {
    public let id: UUID
    public let service: String
    public let deviceID: String
    public let outcome: String
    public let reason: String?
    public let attempts: Int
    public let members: Int
    public let finishedAt: Date
    public let replayed: Bool
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
        let rows = try pool.withConnection { try $0.query(Self.lastHourSQL).rows }
        var minutes: [Int: [String: Int]] = [:]
        for row in rows {
            minutes[try row.int(0), default: [:]][try row.string(1)] = try row.int(2)
        }
        return (0..<60).map { MinuteOutcomes(minutesAgo: $0, counts: minutes[$0] ?? [:]) }
    }

    /// Unreplayed failures finished since `since`, largest groups first.
    public func failures(since: Date, miniAppID: String?, limit: Int = 200) throws -> [FailureGroup] {
        let sql = miniAppID == nil ? Self.failuresSQL : Self.failuresOfPartnerSQL
        var parameters: [(any PostgresEncodable)?] = [since, limit]
        if let miniAppID { parameters.append(miniAppID) }
        return try pool.withConnection { connection in
            try connection.query(sql, parameters).rows.map {
                FailureGroup(miniAppID: try $0.string(0), outcome: try $0.string(1), reason: $0.optionalString(2),
                             count: try $0.int(3), firstAt: try $0.date(4), lastAt: try $0.date(5))
            }
        }
    }

    /// Audit rows, newest first.
    public func requests(_ search: RequestSearch) throws -> [RequestSummary] {
        let (sql, parameters) = Self.requestsStatement(search)
        return try pool.withConnection { connection in
            try connection.query(sql, parameters).rows.map {
                RequestSummary(id: try $0.uuid("id"), createdAt: try $0.date("created_at"),
                               miniAppID: try $0.string("mini_app_id"), title: try $0.string("title"),
                               lane: try $0.int("lane"), recipients: try $0.int("recipients"),
                               deliveries: try $0.int("deliveries"), suppressed: try $0.int("suppressed"),
                               suppressedDeliveries: try $0.int("suppressed_deliveries"), sent: try $0.int("sent"),
                               failed: try $0.int("failed"), held: try $0.int("held"))
            }
        }
    }

    /// The finished deliveries of a request created at `createdAt`: every failed, dead or expired one, and the
    /// others finished within `ConsoleStore.requestWindow` of the request.
    public func deliveries(requestID: UUID, createdAt: Date, limit: Int = 500) throws -> [RequestDelivery] {
        try pool.withConnection { connection in
            try connection.query(Self.requestDeliveriesSQL, [requestID, createdAt, limit]).rows.map {
                RequestDelivery(id: try $0.uuid(0), service: try $0.string(1), deviceID: try $0.string(2),
                                outcome: try $0.string(3), reason: $0.optionalString(4), attempts: try $0.int(5),
                                members: try $0.int(6), finishedAt: try $0.date(7), replayed: try $0.bool(8))
            }
        }
    }
}

extension ConsoleStore {
    /// How long after its creation the console looks for a request's sent rows (which no index by request
    /// holds: only the BRIN on finished_at); the failures are found whenever they finished.
    public static let requestWindow = "1 hour"

    /// The BRIN index on finished_at (sql/010_operations.sql) keeps the scan to the last hour's block ranges.
    public static let lastHourSQL = """
        SELECT least(floor(extract(epoch FROM now() - finished_at) / 60), 59)::int8, outcome,
               sum(coalesce(cardinality(members), 1))::int8
          FROM delivery_history
         WHERE finished_at > now() - interval '1 hour'
         GROUP BY 1, 2
        """

    /// $1 since, $2 limit: the replayable partial index delivery_history_replayable (finished_at).
    public static let failuresSQL = """
        SELECT p.mini_app_id, h.outcome, h.last_error, count(*)::int8, min(h.finished_at), max(h.finished_at)
          FROM delivery_history h JOIN partners p ON p.id = h.partner_id
         WHERE h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL
           AND h.finished_at >= $1 AND h.replayed_at IS NULL
         GROUP BY 1, 2, 3
         ORDER BY 4 DESC, 1, 2, 3
         LIMIT $2
        """

    /// $3 the mini-app: every partner row of it (a revoked one and its successor), by
    /// delivery_history_replayable_partner (partner_id, finished_at).
    public static let failuresOfPartnerSQL = """
        SELECT p.mini_app_id, h.outcome, h.last_error, count(*)::int8, min(h.finished_at), max(h.finished_at)
          FROM delivery_history h JOIN partners p ON p.id = h.partner_id
         WHERE h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL
           AND h.finished_at >= $1 AND h.replayed_at IS NULL
           AND h.partner_id = ANY (ARRAY(SELECT id FROM partners WHERE mini_app_id = $3))
         GROUP BY 1, 2, 3
         ORDER BY 4 DESC, 1, 2, 3
         LIMIT $2
        """

    /// Only the conditions given, so each combination is planned for its index: by id the primary key (with the
    /// partition key from the UUIDv7's time when it has one), by mini-app push_requests_mini_app (mini_app_id, id),
    /// otherwise the primary key backwards (UUIDv7 ids sort by creation). Each listed request's `held` is one probe
    /// of the partial index deliveries_held_request.
    public static func requestsStatement(_ search: RequestSearch) -> (String, [(any PostgresEncodable)?]) {
        var conditions: [String] = []
        var parameters: [(any PostgresEncodable)?] = []
        func bind(_ value: any PostgresEncodable) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        if let id = search.id {
            conditions.append("id = \(bind(id))::uuid")
            if let created = UUIDv7.timestamp(of: id) { conditions.append("created_at = \(bind(created))::timestamptz") }
        }
        if let miniAppID = search.miniAppID { conditions.append("mini_app_id = \(bind(miniAppID))::text") }
        if let since = search.since { conditions.append("created_at >= \(bind(since))::timestamptz") }
        if let until = search.until { conditions.append("created_at < \(bind(until))::timestamptz") }
        let filter = conditions.isEmpty ? "" : "\n WHERE " + conditions.joined(separator: " AND ")
        let sql = """
            SELECT p.id, p.created_at, p.mini_app_id, p.title, p.lane, p.recipients, p.deliveries, p.suppressed,
                   p.suppressed_deliveries, p.sent, p.failed, \(PushStore.heldSQL("p.id")) AS held
              FROM push_requests p\(filter)
             ORDER BY id DESC
             LIMIT \(bind(max(1, min(search.limit, 500))))
            """
        return (sql, parameters)
    }

    /// $1 request id, $2 its creation time, $3 limit. Failures by delivery_history_request (partial, replayable
    /// outcomes); the rest by the BRIN on finished_at within the request's first hour.
    public static let requestDeliveriesSQL = """
        SELECT * FROM (
            SELECT h.id, h.service, h.device_id, h.outcome, h.last_error, h.attempts,
                   coalesce(cardinality(h.members), 1)::int8, h.finished_at, h.replayed_at IS NOT NULL
              FROM delivery_history h
             WHERE h.request_id = $1 AND h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL
            UNION ALL
            SELECT h.id, h.service, h.device_id, h.outcome, h.last_error, h.attempts,
                   coalesce(cardinality(h.members), 1)::int8, h.finished_at, false
              FROM delivery_history h
             WHERE h.request_id = $1 AND h.finished_at >= $2::timestamptz
               AND h.finished_at < $2::timestamptz + interval '\(requestWindow)'
               AND NOT (h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL)
        ) d
         ORDER BY d.finished_at, d.id
         LIMIT $3
        """
}

/// A live partner's use of its limits and its webhook's health.
public struct PartnerUsage: Sendable, Equatable {
    public let partnerID: UUID
    public let lastMinute: Int
    public let lastDay: Int
    public let webhookFailedDay: Int
    public let webhookLastError: String?
}

extension ConsoleStore {
    /// Every live partner's use, keyed by partner id.
    public func partnerUsage() throws -> [UUID: PartnerUsage] {
        let rows = try pool.withConnection { try $0.query(Self.partnerUsageSQL).rows }
        var usage: [UUID: PartnerUsage] = [:]
        for row in rows {
            let id = try row.uuid(0)
            usage[id] = PartnerUsage(partnerID: id, lastMinute: try row.int(1), lastDay: try row.int(2),
                                     webhookFailedDay: try row.int(3), webhookLastError: row.optionalString(4))
        }
        return usage
    }

    /// Per live partner: the rate windows' sums (sql/functions/rate_counts.sql, as the intake reads them)
    /// and its webhook events failed in the last day (webhook_events_failed (partner_id, finished_at)).
    public static let partnerUsageSQL = """
        SELECT p.id, c.minute_count::int8, c.day_count::int8,
               (SELECT count(*) FROM webhook_events w
                 WHERE w.partner_id = p.id AND w.state = 'failed' AND w.finished_at > now() - interval '1 day')::int8,
               (SELECT w.last_error FROM webhook_events w
                 WHERE w.partner_id = p.id AND w.state = 'failed' AND w.finished_at > now() - interval '1 day'
                 ORDER BY w.finished_at DESC LIMIT 1)
          FROM partners p
         CROSS JOIN LATERAL herald_rate_counts(p.id, floor(extract(epoch FROM now()))::bigint) c
         WHERE p.revoked_at IS NULL
        """
}

/// Live Activities active now of one mini-app, and their device targets holding an event back (an iPhone
/// whose update token has not been reported yet).
public struct ActivityCounts: Sendable, Equatable {
    public let miniAppID: String
    public let active: Int
    public let held: Int
}

/// A webhook event that failed for good (its 24-hour window ran out, or a 4xx other than 408/429).
public struct FailedWebhookEvent: Sendable, Equatable {
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
            try connection.query(Self.activityCountsSQL).rows.map {
                ActivityCounts(miniAppID: try $0.string(0), active: try $0.int(1), held: try $0.int(2))
            }
        }
    }

    public func failedWebhooks(since: Date, limit: Int = 200) throws -> [FailedWebhookEvent] {
        try pool.withConnection { connection in
            try connection.query(Self.failedWebhooksSQL, [since, limit]).rows.map {
                FailedWebhookEvent(id: try $0.uuid(0), miniAppID: try $0.string(1), type: try $0.string(2),
                                   subjectID: try $0.uuid(3), attempts: try $0.int(4), lastStatus: try $0.optionalInt(5),
                                   lastError: $0.optionalString(6), finishedAt: try $0.date(7))
            }
        }
    }

    /// Active activities only (at most the TTL's 8 hours of them), by live_activities_due's predicate; their
    /// targets by key.
    public static let activityCountsSQL = """
        SELECT a.mini_app_id, count(DISTINCT a.id)::int8,
               count(t.activity_id) FILTER (WHERE t.held_event IS NOT NULL)::int8
          FROM live_activities a LEFT JOIN live_activity_targets t ON t.activity_id = a.id
         WHERE a.status = 'active'
         GROUP BY 1
         ORDER BY 1
        """

    /// $1 since, $2 limit: webhook_events_finished (finished_at) WHERE state IN ('delivered', 'failed').
    public static let failedWebhooksSQL = """
        SELECT e.id, p.mini_app_id, e.type, e.subject_id, e.attempts, e.last_status, e.last_error, e.finished_at
          FROM webhook_events e JOIN partners p ON p.id = e.partner_id
         WHERE e.state IN ('delivered', 'failed') AND e.state = 'failed' AND e.finished_at >= $1
         ORDER BY e.finished_at DESC
         LIMIT $2
        """
}
