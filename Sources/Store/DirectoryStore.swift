import Foundation
import HeraldCore
import Postgres

public struct SenderEntry: Sendable, Equatable {
    public let miniAppID: String
    public let displayName: String?
    /// Where the intake serves the active partner's icon (`PartnerIcon.path`), when it has one.
    public let iconPath: String?
    public let firstSentAt: Date?
    public let optedOut: Bool
}

/// The host's user directory: users, identifiers, devices, sessions, opt-outs.
public struct DirectoryStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    public static let userNotFound = HeraldError(status: 404, code: "user_not_found", message: "No such user.")

    /// Creates or replaces a user's tenant and identifier sets (already normalised). Returns true
    /// when the user was created. Throws 409 `identifier_taken` when another user of the tenant
    /// holds one of the identifiers, 422 `unknown_time_zone` for a time zone Postgres does not know (nothing
    /// written). `guards` replace the user's (none: cleared). One function (`herald_put_user`,
    /// sql/functions/put_user.sql), which `heraldctl backfill users` calls as well.
    public func putUser(id: String, tenantID: String, emails: [String], wallets: [String],
                        guards: UserGuards = UserGuards()) throws -> Bool {
        let quiet = guards.quietHours
        do {
            return try pool.withConnection { connection in
                try connection.query(Self.putUserSQL, [
                    id, tenantID, emails, wallets, guards.timeZone, quiet.map { QuietHours.text($0.start) },
                    quiet.map { QuietHours.text($0.end) },
                ]).first!.bool(0)
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw Self.identifierTaken
        } catch let error as PostgresError where error.sqlState == "22023" {
            throw UserGuards.unknownTimeZone()
        }
    }

    /// $1 user, $2 tenant, $3 emails, $4 wallets, $5 time zone, $6-$7 quiet hours' start and end: whether the user
    /// was created.
    public static let putUserSQL = "SELECT herald_put_user($1, $2, $3::text[], $4::text[], $5, $6::time, $7::time)"

    public static let identifierTaken = HeraldError(
        status: 409, code: "identifier_taken", message: "Another user of this tenant already has one of these identifiers.")

    /// Creates or updates a device, taking each of its tokens from any other device row that
    /// holds it (any user, any tenant: the phone changed accounts), in one transaction and safe
    /// under concurrent registrations (sql/007_edges.sql, `herald_put_device`). A token that
    /// changes clears its invalidation; the same token stays invalid. Returns true when created;
    /// throws 404 when the user does not exist.
    public func putDevice(userID: String, deviceID: String, _ device: DeviceRegistration) throws -> Bool {
        try putDeviceTakingTokens(userID: userID, deviceID: deviceID, device).created
    }

    /// `putDevice`, also saying how many tokens were taken from other device rows.
    public func putDeviceTakingTokens(userID: String, deviceID: String, _ device: DeviceRegistration) throws
        -> (created: Bool, taken: Int)
    {
        // Two phones swapping tokens at the same moment can lock each other's rows in opposite
        // orders; Postgres aborts one, and the retry sees the other's commit.
        do {
            return try retryingDeadlocks(retries: 2) {
                try pool.withConnection { connection in
                    let row = try connection.query(
                        "SELECT created, taken FROM herald_put_device($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)",
                        [userID, deviceID, device.platform, device.environment, device.bundleID, device.apnsToken,
                         device.apnsPushToStartToken, device.fcmToken, device.templateTokensParameter]).first!
                    return (try row.bool(0), try row.int(1))
                }
            }
        } catch let error as PostgresError where error.sqlState == "23503" {
            throw Self.userNotFound
        }
    }

    /// Returns false when there was no such device.
    public func deleteDevice(userID: String, deviceID: String) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query("DELETE FROM devices WHERE user_id = $1 AND device_id = $2", [userID, deviceID])
                .affectedRows > 0
        }
    }

    /// Records that the user used the mini-app now; returns the time recorded.
    public func touchSession(userID: String, miniAppID: String) throws -> Date {
        do {
            return try pool.withConnection { connection in
                try connection.query("""
                    INSERT INTO mini_app_sessions (user_id, mini_app_id, last_seen_at) VALUES ($1, $2, now())
                    ON CONFLICT (user_id, mini_app_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at
                    RETURNING last_seen_at
                    """, [userID, miniAppID]).first!.date(0)
            }
        } catch let error as PostgresError where error.sqlState == "23503" {
            throw Self.userNotFound
        }
    }

    public func optOut(userID: String, miniAppID: String) throws {
        do {
            _ = try pool.withConnection { connection in
                try connection.query(
                    "INSERT INTO opt_outs (user_id, mini_app_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                    [userID, miniAppID])
            }
        } catch let error as PostgresError where error.sqlState == "23503" {
            throw Self.userNotFound
        }
    }

    public func optIn(userID: String, miniAppID: String) throws {
        _ = try pool.withConnection { connection in
            try connection.query("DELETE FROM opt_outs WHERE user_id = $1 AND mini_app_id = $2", [userID, miniAppID])
        }
    }

    public func userExists(_ userID: String) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query("SELECT 1 FROM users WHERE id = $1", [userID]).first != nil
        }
    }

    /// Every mini-app that pushed to the user or that the user opted out of, with the opt-out
    /// state and the active partner's name and icon.
    public func senders(userID: String) throws -> [SenderEntry] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT m.mini_app_id, p.display_name, p.icon_updated_at IS NOT NULL, s.first_sent_at,
                       o.user_id IS NOT NULL
                FROM (SELECT mini_app_id FROM user_senders WHERE user_id = $1
                      UNION SELECT mini_app_id FROM opt_outs WHERE user_id = $1) AS m
                LEFT JOIN user_senders s ON s.user_id = $1 AND s.mini_app_id = m.mini_app_id
                LEFT JOIN opt_outs o ON o.user_id = $1 AND o.mini_app_id = m.mini_app_id
                LEFT JOIN partners p ON p.mini_app_id = m.mini_app_id AND p.revoked_at IS NULL
                ORDER BY m.mini_app_id
                """, [userID]).rows.map { row in
                let miniAppID = try row.string(0)
                return SenderEntry(
                    miniAppID: miniAppID, displayName: row.optionalString(1),
                    iconPath: try row.isNull(2) || !row.bool(2)
                        ? nil : PartnerIcon.path(miniAppID: miniAppID, size: PartnerIcon.payloadSize),
                    firstSentAt: try row.optionalDate(3), optedOut: try row.bool(4))
            }
        }
    }
}

extension DeviceRegistration {
    /// The per-template push-to-start tokens as herald_put_device takes them: a JSON object, nil when none.
    var templateTokensParameter: String? {
        guard !apnsPushToStartTokens.isEmpty else { return nil }
        let members = pushToStartTemplates.map { ($0.rawValue, JSONValue.string(apnsPushToStartTokens[$0]!)) }
        return JSONWriter.string(.object(members))
    }
}
