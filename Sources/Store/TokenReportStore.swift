import Foundation
import Postgres

/// Token invalidations over a window, by upstream, token kind and reason (`heraldctl tokens`): a
/// storm of one reason on one upstream shows at a glance.
public struct TokenReport: Sendable, Equatable {
    public struct Line: Sendable, Equatable, Decodable {
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
        let rows = try pool.withConnection { try $0.rows(Queries.TokenReports.Report(since: since, until: until)) }
        var lines: [TokenReport.Line] = []
        var skipped = Dictionary(uniqueKeysWithValues: Self.skipReasons.map { ($0, 0) })
        for row in rows {
            if Self.skipReasons.contains(row.reason) {
                skipped[row.reason, default: 0] += row.count
                continue
            }
            lines.append(row)
        }
        return TokenReport(since: since, until: until, lines: lines, skipped: skipped)
    }
}

extension TokenReport.Line: QueryRow {}
