import Foundation
import Postgres

/// A console sign-in as the store sees it: the SHA-256 of the cookie's token, never the token.
public struct ConsoleSession: Sendable, Equatable, Decodable {
    public let tokenHash: String
    public let createdAt: Date
    public let expiresAt: Date
    /// The last use the store recorded (written at most once a minute, `touch`).
    public let lastUsedAt: Date
}

/// A console sign-in attempt from one client address, before its token is checked.
public struct ConsoleSignInAttempt: Sendable, Equatable, Decodable {
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
            return try connection.row(
                Queries.ConsoleSessions.Create(
                    tokenHash: tokenHash, seconds: seconds, client: client, adminTokenMAC: adminTokenMAC))!
        }
    }

    /// The live session with this hash: nil when unknown, expired, revoked, unused for `idleSeconds`, or opened
    /// with an admin token whose MAC is none of `adminTokenMACs` (the tokens the intake accepts now).
    public func find(tokenHash: String, adminTokenMACs: [String], idleSeconds: Int) throws -> ConsoleSession? {
        precondition((1...2).contains(adminTokenMACs.count), "the current admin token and at most the previous one")
        let find = Queries.ConsoleSessions.Find(
            tokenHash: tokenHash, idleSeconds: idleSeconds, adminTokenMAC: adminTokenMACs[0],
            previousAdminTokenMAC: adminTokenMACs.count > 1 ? adminTokenMACs[1] : nil)
        return try pool.withConnection { try $0.row(find) }
    }

    /// Records a use of the session now. Callers touch at most once a minute (`touchInterval`): every UPDATE
    /// writes a new row version, and one per console call (a page polls several endpoints every 5 seconds)
    /// would be most of the table's writes for a minute of idle-time precision.
    public func touch(tokenHash: String) throws {
        let touch = Queries.ConsoleSessions.Touch(tokenHash: tokenHash, intervalSeconds: Int(Self.touchInterval))
        try pool.withConnection { try $0.run(touch) }
    }

    /// How old a session's recorded use may get before a use writes it again.
    public static let touchInterval: TimeInterval = 60

    /// Ends the session at once (sign-out, audited as made by `actor`); true when a live one was ended.
    @discardableResult
    public func revoke(tokenHash: String, by actor: AdminActor) throws -> Bool {
        try pool.withTransaction { connection in
            try actor.apply(on: connection)
            return try connection.run(Queries.ConsoleSessions.Revoke(tokenHash: tokenHash)) > 0
        }
    }

    /// Counts a sign-in attempt from `client` as a failure, unless the address already failed `limit` times in its
    /// window of `windowSeconds` (functions/console_sign_in_attempt.sql). A sign-in that succeeds calls
    /// `signInSucceeded` to give the count back.
    public func attemptSignIn(client: String, limit: Int, windowSeconds: Int) throws -> ConsoleSignInAttempt {
        try pool.withConnection { connection in
            try connection.row(
                Queries.ConsoleSessions.AttemptSignIn(client: client, limit: limit, windowSeconds: windowSeconds))!
        }
    }

    /// Gives back the failure `attemptSignIn` counted for an attempt that signed in.
    public func signInSucceeded(client: String) throws {
        try pool.withConnection { try $0.run(Queries.ConsoleSessions.SignInSucceeded(client: client)) }
    }
}

extension ConsoleSession: QueryRow {}
extension ConsoleSignInAttempt: QueryRow {}
