import Foundation
import Postgres

/// Token invalidations over a window, by upstream, token kind and reason (`heraldctl tokens`): a
/// storm of one reason on one upstream shows at a glance.
public struct TokenReport: Sendable, Equatable {
    public struct Line: Sendable, Equatable {
        /// `apns` or `fcm`.
        public let upstream: String
        /// Which token: `apns` (a device's push token), `apnsPushToStart`, `liveActivity` (an activity's own
        /// token) or `fcm`.
        public let token: String
        /// The upstream's reason (`Unregistered`, `BadDeviceToken`, `UNREGISTERED`, ...).
        public let reason: String
        /// Deliveries that ended so, and the distinct devices among them.
        public let count: Int
        public let devices: Int
        public let first: Date
        public let last: Date
    }

    public let since: Date
    public let until: Date
    public let lines: [Line]
    /// Sends not made because the token was invalid already (`token_invalidated`) or missing (`no_token`).
    public let skipped: [String: Int]
}

public struct TokenReportStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The reasons a claim gives a row it does not send for want of a valid token: not new verdicts.
    public static let skipReasons = ["token_invalidated", "no_token"]

    public func report(since: Date, until: Date) throws -> TokenReport {
        let rows = try pool.withConnection { connection in
            try connection.query(Self.reportSQL, [since, until]).rows
        }
        var lines: [TokenReport.Line] = []
        var skipped = Dictionary(uniqueKeysWithValues: Self.skipReasons.map { ($0, 0) })
        for row in rows {
            let reason = try row.string(2)
            if Self.skipReasons.contains(reason) {
                skipped[reason, default: 0] += try row.int(3)
                continue
            }
            lines.append(.init(upstream: try row.string(0), token: try row.string(1), reason: reason,
                               count: try row.int(3), devices: try row.int(4), first: try row.date(5), last: try row.date(6)))
        }
        return TokenReport(since: since, until: until, lines: lines, skipped: skipped)
    }

    /// $1 since, $2 until. Only `token_invalid` rows, through their partial index (sql/027_token_health.sql).
    public static let reportSQL = """
        SELECT service,
               CASE WHEN service = 'fcm' THEN 'fcm' WHEN activity_event IS NULL THEN 'apns'
                    WHEN activity_event = 'start' THEN 'apnsPushToStart' ELSE 'liveActivity' END AS token,
               coalesce(last_error, 'unknown') AS reason,
               count(*)::int8, count(DISTINCT (user_id, device_id))::int8, min(finished_at), max(finished_at)
          FROM delivery_history
         WHERE outcome = 'token_invalid' AND finished_at >= $1 AND finished_at < $2
         GROUP BY 1, 2, 3
         ORDER BY 4 DESC, 1, 2, 3
        """
}
