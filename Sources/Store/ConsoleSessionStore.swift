import Foundation
import Postgres

/// A console sign-in as the store sees it: the SHA-256 of the cookie's token, never the token.
public struct ConsoleSession: Sendable, Equatable {
    public let tokenHash: String
    public let createdAt: Date
    public let expiresAt: Date
}

/// The console's sessions (sql/035_console.sql): created at sign-in, looked up on every console call,
/// revoked at sign-out; expired and revoked rows are deleted by the intake's janitor (`MaintenanceStore`).
public struct ConsoleSessionStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// A new session living `seconds` from now, signed in by `actor` (the audit trail's console.signed_in).
    public func create(tokenHash: String, seconds: Int, client: String?, by actor: AdminActor) throws
        -> ConsoleSession
    {
        try pool.withTransaction { connection in
            try actor.apply(on: connection)
            let row = try connection.query(Self.createSQL, [tokenHash, seconds, client]).first!
            return ConsoleSession(tokenHash: tokenHash, createdAt: try row.date(0), expiresAt: try row.date(1))
        }
    }

    /// The live session with this hash: nil when unknown, expired or revoked.
    public func find(tokenHash: String) throws -> ConsoleSession? {
        try pool.withConnection { connection in
            try connection.query(Self.findSQL, [tokenHash]).first.map {
                ConsoleSession(tokenHash: tokenHash, createdAt: try $0.date(0), expiresAt: try $0.date(1))
            }
        }
    }

    /// Ends the session at once (sign-out, audited as made by `actor`); true when a live one was ended.
    @discardableResult
    public func revoke(tokenHash: String, by actor: AdminActor) throws -> Bool {
        try pool.withTransaction { connection in
            try actor.apply(on: connection)
            return try connection.query(Self.revokeSQL, [tokenHash]).affectedRows > 0
        }
    }

    static let createSQL = """
        INSERT INTO console_sessions (token_hash, expires_at, client)
        VALUES ($1, now() + make_interval(secs => $2), $3)
        RETURNING created_at, expires_at
        """

    /// By primary key.
    public static let findSQL = """
        SELECT created_at, expires_at FROM console_sessions
         WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
        """

    static let revokeSQL = """
        UPDATE console_sessions SET revoked_at = now()
         WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
        """
}
