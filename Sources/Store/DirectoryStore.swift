import Foundation
import HeraldCore
import Postgres

/// The host's user directory: users, identifiers, devices, sessions, opt-outs.
public struct DirectoryStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    public static let userNotFound = HeraldError(status: 404, code: "user_not_found", message: "No such user.")

    /// Creates or replaces a user's tenant and identifier sets (already normalised). Returns whether the user was
    /// created and the locale it has now (`locale` keeps the stored one, sets or clears it). Throws 409
    /// `identifier_taken` when another user of the tenant holds one of the identifiers, 422 `unknown_time_zone` for a time zone Postgres does not know (nothing
    /// written). `guards` replace the user's (none: cleared). One function (`herald_put_user`,
    /// sql/functions/put_user.sql), which `heraldctl backfill users` calls as well.
    public func putUser(
        id: String, tenantID: String, emails: [String], wallets: [String],
        guards: UserGuards = UserGuards(), locale: LocaleUpdate = .keep
    ) throws -> (created: Bool, locale: String?) {
        do {
            let row = try pool.withConnection { connection in
                try connection.row(
                    PutUser(
                        id: id, tenantID: tenantID, emails: emails, wallets: wallets,
                        guards: guards, locale: locale))!
            }
            return (row.created, row.locale)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw Self.identifierTaken
        } catch let error as PostgresError where error.sqlState == "22023" {
            throw UserGuards.unknownTimeZone()
        }
    }

    public static let identifierTaken = HeraldError(
        status: 409, code: "identifier_taken",
        message: "Another user of this tenant already has one of these identifiers.")

    /// Creates or updates a device, taking each of its tokens from any other device row that
    /// holds it (any user, any tenant: the phone changed accounts), in one transaction and safe
    /// under concurrent registrations (`herald_put_device`, sql/functions/put_device.sql). A token that
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
                    let row = try connection.row(PutDevice(userID: userID, deviceID: deviceID, device: device))!
                    return (row.created, row.taken)
                }
            }
        } catch let error as PostgresError where error.sqlState == "23503" {
            throw Self.userNotFound
        }
    }

    /// Returns false when there was no such device.
    public func deleteDevice(userID: String, deviceID: String) throws -> Bool {
        try pool.withConnection { connection in
            try connection.run(Queries.Directory.DeleteDevice(userID: userID, deviceID: deviceID)) > 0
        }
    }

    /// Records that the user used the mini-app now; returns the time recorded.
    public func touchSession(userID: String, miniAppID: String) throws -> Date {
        do {
            return try pool.withConnection { connection in
                try connection.row(Queries.Directory.TouchSession(userID: userID, miniAppID: miniAppID))!.lastSeenAt
            }
        } catch let error as PostgresError where error.sqlState == "23503" {
            throw Self.userNotFound
        }
    }

    public func optOut(userID: String, miniAppID: String) throws {
        do {
            try pool.withConnection { try $0.run(Queries.Directory.OptOut(userID: userID, miniAppID: miniAppID)) }
        } catch let error as PostgresError where error.sqlState == "23503" {
            throw Self.userNotFound
        }
    }

    public func optIn(userID: String, miniAppID: String) throws {
        try pool.withConnection { try $0.run(Queries.Directory.OptIn(userID: userID, miniAppID: miniAppID)) }
    }

    /// The user's locale (a canonical BCP 47 tag); nil when the user has none or does not exist.
    public func locale(userID: String) throws -> String? {
        try pool.withConnection { connection in
            try connection.row(Queries.Directory.UserLocale(userID: userID))?.locale
        }
    }

    public func userExists(_ userID: String) throws -> Bool {
        try pool.withConnection { connection in
            try connection.row(Queries.Directory.UserExists(userID: userID)) != nil
        }
    }

    /// Every mini-app that pushed to the user or that the user opted out of, with the opt-out
    /// state and the active partner's name and icon.
    public func senders(userID: String) throws -> [SenderEntry] {
        try pool.withConnection { connection in
            try connection.rows(Queries.Directory.Senders(userID: userID)).map(\.entry)
        }
    }
}

extension DirectoryStore {
    /// A row of `senders` (Queries/directory.sql).
    struct Sender: QueryRow, Decodable {
        let miniAppID: String
        let displayName: String?
        let hasIcon: Bool
        let firstSentAt: Date?
        let optedOut: Bool

        var entry: SenderEntry {
            SenderEntry(
                miniAppID: miniAppID, displayName: displayName, hasIcon: hasIcon, firstSentAt: firstSentAt,
                optedOut: optedOut)
        }
    }

    struct PutUser: NamedQuery {
        struct Row: QueryRow, Decodable {
            let created: Bool
            let locale: String?
        }

        static let sql = Queries.Directory.putUser
        let id: String
        let tenantID: String
        let emails: [String]
        let wallets: [String]
        let guards: UserGuards
        let locale: LocaleUpdate
        var bindings: [(any PostgresEncodable)?] {
            let quiet = guards.quietHours
            var tag: String?, set = false
            if case .set(let value) = locale { (tag, set) = (value?.text, true) }
            return [
                id, tenantID, emails, wallets, guards.timeZone, quiet.map { QuietHours.text($0.start) },
                quiet.map { QuietHours.text($0.end) }, tag, set,
            ]
        }
    }

    struct PutDevice: NamedQuery {
        struct Row: QueryRow, Decodable {
            let created: Bool
            let taken: Int
        }

        static let sql = Queries.Directory.putDevice
        let userID: String
        let deviceID: String
        let device: DeviceRegistration
        var bindings: [(any PostgresEncodable)?] {
            [
                userID, deviceID, device.platform, device.environment, device.bundleID, device.apnsToken,
                device.apnsPushToStartToken, device.fcmToken, device.templateTokensParameter,
            ]
        }
    }

    /// A user's locale (`userLocale`).
    struct UserLocale: QueryRow, Decodable {
        let locale: String?
    }

    /// When the user was last seen in the mini-app (`touchSession`).
    struct SessionSeen: QueryRow, Decodable {
        let lastSeenAt: Date
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
