import HeraldCore
import Postgres

/// Maps database failures to the API's errors in one place. 503 `database_unavailable` (with
/// Retry-After) for everything a retry of the same request can cure (`PostgresError.isTransient`,
/// classified by `SQLStateClass`): the database unreachable, a connection lost mid-statement or
/// mid-COMMIT (the client's retry with its Idempotency-Key makes the write exactly once), a server
/// shutting down, starting up or read-only during a failover, a schema migrated under this release
/// (a function or table it calls replaced, until the process is replaced too), a serialization
/// failure or deadlock. Anything else unexpected is 500 (with the SQLSTATE for the log, never the
/// server's message).
public enum StoreErrors {
    public static func heraldError(for error: any Error) -> HeraldError {
        if let herald = error as? HeraldError { return herald }
        guard let postgres = error as? PostgresError, postgres.isTransient else { return .internalError }
        return postgres.isPreparedStatementMismatch ? .databasePooler : .databaseUnavailable
    }
}
