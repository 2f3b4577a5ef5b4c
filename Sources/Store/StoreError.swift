import HeraldCore
import Postgres

/// Maps database failures to the API's errors in one place: unreachable -> 503, anything else
/// unexpected -> 500 (with the SQLSTATE for the log, never the server's message).
public enum StoreErrors {
    public static func heraldError(for error: any Error) -> HeraldError {
        if let herald = error as? HeraldError { return herald }
        if let postgres = error as? PostgresError, postgres.isUnavailable { return .databaseUnavailable }
        return .internalError
    }
}
