/// What a server error's SQLSTATE says about retrying the statement that raised it, decided once here for the
/// intake's answers (503 `database_unavailable` or `database_pooler`, or 500, `StoreErrors`), the pools' choice to
/// drop a connection and the worker's choice between backing off and recording a delivery as failed
/// (`Worker/Completer.swift`).
///
/// - `unavailable`: no writable primary on this connection: class 08 (connection exception), 57P01
///   admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 25006 read_only_sql_transaction (a
///   standby, or a primary that was demoted).
/// - `schemaChanged`: an object the statement names is not as this release expects, which in shipped code
///   means a migration ran under it (docs/architecture.md, *Schema changes across releases*): 42883
///   undefined_function, 42P01 undefined_table, 42703 undefined_column, 42704 undefined_object, and 0A000
///   feature_not_supported, which is how a prepared statement reports "cached plan must not change result
///   type". Retried, it succeeds once the process is replaced by the release the schema belongs to (or on a
///   new connection, for the cached plan); the tests keep these codes from coming from a release's own SQL.
/// - `preparedStatementLost`: the server did not hold the named statement this connection prepared (26000
///   invalid_sql_statement_name), or held another under its name (42P05 duplicate_prepared_statement): a
///   transaction pooler the connection did not find at startup (PostgresConnection.poolerDetected). Retried
///   on a new connection, which finds the pooler and runs its statements unnamed.
/// - `contention`: the statement lost a race: 40001 serialization_failure, 40P01 deadlock_detected, 55P03
///   lock_not_available.
/// - `resources`: the server ran out of something: class 53 (insufficient resources), class 58 (system error).
/// - `statement`: anything else (a constraint, bad data, a raised exception, a statement timeout) is about
///   the statement's input: the same statement fails again.
public enum SQLStateClass: Sendable, Equatable {
    case unavailable
    case schemaChanged
    case preparedStatementLost
    case contention
    case resources
    case statement

    static let schemaChangedStates: Set<String> = ["42883", "42P01", "42703", "42704", "0A000"]
    static let preparedStatementLostStates: Set<String> = ["26000", "42P05"]
    static let contentionStates: Set<String> = ["40001", "40P01", "55P03"]
    static let unavailableStates: Set<String> = ["57P01", "57P02", "57P03", "25006"]

    public init(sqlState: String) {
        if sqlState.hasPrefix("08") || Self.unavailableStates.contains(sqlState) {
            self = .unavailable
        } else if Self.schemaChangedStates.contains(sqlState) {
            self = .schemaChanged
        } else if Self.preparedStatementLostStates.contains(sqlState) {
            self = .preparedStatementLost
        } else if Self.contentionStates.contains(sqlState) {
            self = .contention
        } else if sqlState.hasPrefix("53") || sqlState.hasPrefix("58") {
            self = .resources
        } else {
            self = .statement
        }
    }

    /// A retry of the same statement can succeed.
    public var isTransient: Bool { self != .statement }
}
