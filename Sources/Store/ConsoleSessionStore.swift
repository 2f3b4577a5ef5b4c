import Foundation
import Postgres

/// A console sign-in as the store sees it: the SHA-256 of the cookie's token, never the token.
public struct ConsoleSession: Sendable, Equatable {
    public let tokenHash: String
    public let createdAt: Date
    public let expiresAt: Date
    /// The last use the store recorded (written at most once a minute, `touch`).
    public let lastUsedAt: Date
}

/// A console sign-in attempt from one client address, before its token is checked.
public struct ConsoleSignInAttempt: Sendable, Equatable {
    /// False while the address is over its failures for the window; nothing was counted then.
    public let admitted: Bool
    /// Seconds until the address's window ends, when refused.
    public let retryAfter: Int?
}

/// The console's sessions (sql/035_console.sql, 049_console_guards.sql): created at sign-in, looked up on every
/// console call, refreshed while used, revoked at sign-out; expired and revoked rows are deleted by the intake's
/// janitor (`MaintenanceStore`). Also the failed sign-ins per client address.
public struct ConsoleSessionStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// A new session living `seconds` from now, signed in by `actor` (the audit trail's console.signed_in) with the
    /// admin token whose MAC is `adminTokenMAC`.
    public func create(tokenHash: String, adminTokenMAC: String, seconds: Int, client: String?, by actor: AdminActor)
        throws -> ConsoleSession
    {
        try pool.withTransaction { connection in
            try actor.apply(on: connection)
            let row = try connection.query(Self.createSQL, [tokenHash, seconds, client, adminTokenMAC]).first!
            return ConsoleSession(tokenHash: tokenHash, createdAt: try row.date("created_at"),
                                  expiresAt: try row.date("expires_at"), lastUsedAt: try row.date("last_used_at"))
        }
    }

    /// The live session with this hash: nil when unknown, expired, revoked, unused for `idleSeconds`, or opened
    /// with an admin token whose MAC is none of `adminTokenMACs` (the tokens the intake accepts now).
    public func find(tokenHash: String, adminTokenMACs: [String], idleSeconds: Int) throws -> ConsoleSession? {
        precondition((1...2).contains(adminTokenMACs.count), "the current admin token and at most the previous one")
        let macs: [String?] = [adminTokenMACs[0], adminTokenMACs.count > 1 ? adminTokenMACs[1] : nil]
        return try pool.withConnection { connection in
            try connection.query(Self.findSQL, [tokenHash, idleSeconds, macs[0], macs[1]]).first.map {
                ConsoleSession(tokenHash: tokenHash, createdAt: try $0.date("created_at"),
                               expiresAt: try $0.date("expires_at"), lastUsedAt: try $0.date("last_used_at"))
            }
        }
    }

    /// Records a use of the session now. Callers touch at most once a minute (`touchInterval`): every UPDATE
    /// writes a new row version, and one per console call (a page polls several endpoints every 5 seconds)
    /// would be most of the table's writes for a minute of idle-time precision.
    public func touch(tokenHash: String) throws {
        try pool.withConnection { _ = try $0.query(Self.touchSQL, [tokenHash]) }
    }

    /// How old a session's recorded use may get before a use writes it again.
    public static let touchInterval: TimeInterval = 60

    /// Ends the session at once (sign-out, audited as made by `actor`); true when a live one was ended.
    @discardableResult
    public func revoke(tokenHash: String, by actor: AdminActor) throws -> Bool {
        try pool.withTransaction { connection in
            try actor.apply(on: connection)
            return try connection.query(Self.revokeSQL, [tokenHash]).affectedRows > 0
        }
    }

    /// Counts a sign-in attempt from `client` as a failure, unless the address already failed `limit` times in its
    /// window of `windowSeconds` (functions/console_sign_in_attempt.sql). A sign-in that succeeds calls
    /// `signInSucceeded` to give the count back.
    public func attemptSignIn(client: String, limit: Int, windowSeconds: Int) throws -> ConsoleSignInAttempt {
        try pool.withConnection { connection in
            let row = try connection.query(Self.attemptSignInSQL, [client, limit, windowSeconds]).first!
            return ConsoleSignInAttempt(admitted: try row.bool("admitted"), retryAfter: try row.optionalInt("retry_after"))
        }
    }

    /// Gives back the failure `attemptSignIn` counted for an attempt that signed in.
    public func signInSucceeded(client: String) throws {
        try pool.withConnection { _ = try $0.query(Self.succeededSignInSQL, [client]) }
    }

    static let createSQL = """
        INSERT INTO console_sessions (token_hash, expires_at, client, admin_token_mac)
        VALUES ($1, now() + make_interval(secs => $2), $3, $4)
        RETURNING created_at, expires_at, last_used_at
        """

    /// By primary key.
    public static let findSQL = """
        SELECT created_at, expires_at, last_used_at FROM console_sessions
         WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
           AND last_used_at > now() - make_interval(secs => $2)
           AND admin_token_mac IN ($3, $4)
        """

    /// By primary key; a no-op when another intake wrote it within the interval.
    static let touchSQL = """
        UPDATE console_sessions SET last_used_at = now()
         WHERE token_hash = $1 AND last_used_at < now() - interval '\(Int(touchInterval)) seconds'
        """

    static let revokeSQL = """
        UPDATE console_sessions SET revoked_at = now()
         WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
        """

    static let attemptSignInSQL = "SELECT admitted, retry_after FROM herald_console_sign_in_attempt($1, $2, $3)"

    /// By primary key.
    static let succeededSignInSQL = """
        UPDATE console_sign_in_failures SET failures = failures - 1 WHERE client = $1 AND failures > 0
        """
}
