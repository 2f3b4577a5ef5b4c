import CLibPQ
import Foundation

/// One libpq connection. Not thread-safe: one thread uses it at a time (the pool hands it out
/// exclusively), hence `@unchecked Sendable`. Every statement with parameters runs as a named
/// prepared statement, prepared once per connection on first use, unless the options say
/// `preparedStatements: false` (a transaction pooler in between): then each runs unnamed.
public final class PostgresConnection: @unchecked Sendable {
    let handle: OpaquePointer
    /// False: statements run unnamed (PQexecParams, PQsendQueryParams), so no server connection
    /// needs to hold anything this client prepared (PostgresConnectionOptions.preparedStatements), or
    /// a connection pooler answers for the server (`poolerDetected`).
    public private(set) var preparedStatements: Bool
    /// True when the options asked for prepared statements and a pooler answered instead of the server:
    /// the backend key the connection was handed at startup is not the server process's. A pooler in
    /// transaction mode runs a client's consecutive transactions on different server connections, where
    /// a named statement is missing or, worse, names another client's statement; so this connection runs
    /// its statements unnamed, as `HERALD_DB_PREPARED=0` asks (docs/deployment.md, "Connection poolers").
    public private(set) var poolerDetected = false
    /// What `/readyz` (intake and worker) says once a pooler was detected: the settings that say so.
    public static let poolerReadiness =
        "detected: statements run unnamed; set HERALD_DB_PREPARED=0 (and HERALD_WORKER_LISTEN=0 for workers)"
    private var preparedNames: [String: String] = [:]
    /// The text of a statement's parameters, back to back, each ended by a NUL, and where each
    /// starts (nil for SQL NULL): libpq reads the values in place (see withParameters). Kept so a
    /// busy connection reuses the capacity instead of allocating a large block per statement.
    private var parameterBytes: [UInt8] = []
    private var parameterStarts: [Int?] = []
    /// When the connection was last returned to a pool; used to skip health checks on busy connections.
    var lastUsed = ContinuousClock.now
    /// Set when a statement failed in a way that makes this connection unfit for reuse (see
    /// `PostgresError.discardsConnection`), even where libpq still reports it open: a server that sent
    /// FATAL before closing, a read-only server, a socket error libpq does not count as a broken
    /// connection (a timed-out read).
    private var discarded = false

    /// Opens a connection. `url` is a libpq connection string or `postgres://` URI.
    public convenience init(url: String, applicationName: String = "herald") throws {
        try self.init(url: url, options: PostgresConnectionOptions(applicationName: applicationName))
    }

    /// Opens a connection with explicit timeouts (see PostgresConnectionOptions).
    public init(url: String, options: PostgresConnectionOptions) throws {
        // Defaults first, then the URL (expanded in place: what it names overrides them), then what
        // Herald always sets.
        let pairs =
            options.defaultsBeforeURL + [
                ("dbname", url), ("application_name", options.applicationName),
                ("client_encoding", "UTF8"),
            ]
        let connection = withCStringArray(pairs.map(\.0)) { keyPointers in
            withCStringArray(pairs.map(\.1)) { valuePointers in
                PQconnectdbParams(keyPointers, valuePointers, 1)
            }
        }
        guard let connection else { throw PostgresError(code: .connectionFailed, serverMessage: "out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(code: .connectionFailed, serverMessage: message)
        }
        PostgresNotices.install(on: connection)
        handle = connection
        preparedStatements = options.preparedStatements
        if preparedStatements {
            let serverPID = try execute("SELECT pg_backend_pid() AS pid").first?.int("pid")
            if serverPID != Int(PQbackendPID(connection)) {
                poolerDetected = true
                preparedStatements = false
                PostgresNotices.report(
                    .init(
                        severity: "WARNING", sqlState: "01000",
                        message: "a connection pooler answers for the database (its backend key is not the server's):"
                            + " statements run unnamed; set HERALD_DB_PREPARED=0 to say so"))
            }
        }
        // Timestamps are parsed from text; a fixed zone keeps their format predictable.
        try execute(
            PostgresConnectionOptions.sessionSetup(
                statementTimeout: options.statementTimeout, prepared: preparedStatements))
    }

    /// The value libpq uses for a connection keyword (`keepalives_idle`, ...), nil when unset.
    public func connectionSetting(_ keyword: String) -> String? {
        guard let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    deinit { PQfinish(handle) }

    /// True while the socket is usable as far as libpq knows and no statement has shown the
    /// connection unfit (a pool drops it otherwise).
    public var isHealthy: Bool { !discarded && PQstatus(handle) == CONNECTION_OK }

    /// True when no transaction is open (the only state in which a pooled connection may be reused).
    public var isIdle: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Checks a connection that sat idle: reads what the server sent meanwhile, then makes one
    /// empty-query round trip. A server that closed or terminated the connection (restart, idle
    /// timeout, pg_terminate_backend) makes this false.
    func validate() -> Bool {
        guard PQconsumeInput(handle) == 1, isHealthy else { return false }
        return (try? execute("")) != nil && isHealthy
    }

    /// Runs `sql` with `parameters` (nil binds SQL NULL) and returns its rows. `prepared: false` runs it unnamed even
    /// on a connection that prepares, so it is planned for these values.
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = [], prepared: Bool = true) throws
        -> PostgresResult
    {
        if parameters.isEmpty && !sql.contains("$1") {
            return try execute(sql)
        }
        guard preparedStatements, prepared else {
            let result = withParameters(parameters) { pointers in
                PQexecParams(handle, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
            }
            return try consume(result)
        }
        let name = try preparedName(for: sql, parameterCount: parameters.count)
        let result = withParameters(parameters) { pointers in
            PQexecPrepared(handle, name, Int32(parameters.count), pointers, nil, nil, 0)
        }
        return try consume(result)
    }

    /// Runs `statements` in ONE round trip with libpq's pipeline mode. They form one implicit
    /// transaction, committed at the closing sync: if one fails, the ones after it are skipped,
    /// nothing is committed, and the first error is thrown once every result has been read.
    /// Each statement says, as `query`'s `prepared` does, whether it may run prepared: `prepared: false` runs it
    /// unnamed even on a connection that prepares, so it is planned for its values.
    public func pipeline(_ statements: [(sql: String, parameters: [(any PostgresEncodable)?], prepared: Bool)])
        throws -> [PostgresResult]
    {
        // Prepared outside the pipeline (on first use only), so the pipeline holds executions only;
        // unnamed statements are parsed inside it (one Parse/Bind/Execute each, still one round trip).
        let names: [String?] = try statements.map {
            preparedStatements && $0.prepared
                ? try preparedName(for: $0.sql, parameterCount: $0.parameters.count) : nil
        }
        guard PQenterPipelineMode(handle) == 1 else { throw clientFailure() }
        defer { PQexitPipelineMode(handle) }
        for (statement, name) in zip(statements, names) {
            // libpq copies the values into its output buffer before this returns, so the next
            // statement may reuse the parameter buffer.
            let sent = withParameters(statement.parameters) { pointers in
                if let name {
                    PQsendQueryPrepared(handle, name, Int32(statement.parameters.count), pointers, nil, nil, 0)
                } else {
                    PQsendQueryParams(
                        handle, statement.sql, Int32(statement.parameters.count), nil, pointers, nil, nil, 0)
                }
            }
            guard sent == 1 else { throw clientFailure() }
        }
        guard PQpipelineSync(handle) == 1 else { throw clientFailure() }
        var results: [PostgresResult] = []
        var firstError: (any Error)?
        for _ in statements {
            let result = PQgetResult(handle)
            do {
                results.append(try consume(result))
            } catch {
                if firstError == nil { firstError = error }
            }
            // Each statement's results end with a NULL.
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        // The sync's own result closes the pipeline.
        if let sync = PQgetResult(handle) {
            let status = PQresultStatus(sync)
            PQclear(sync)
            if status != PGRES_PIPELINE_SYNC, firstError == nil { firstError = clientFailure() }
        } else if firstError == nil {
            firstError = clientFailure()
        }
        if let firstError { throw firstError }
        return results
    }

    /// Runs one or more statements without parameters (migrations, BEGIN/COMMIT).
    @discardableResult
    public func execute(_ sql: String) throws -> PostgresResult {
        try consume(PQexec(handle, sql))
    }

    /// Runs `body` inside BEGIN/COMMIT; rolls back when it throws. A connection lost while COMMIT ran
    /// throws `commitOutcomeUnknown`: the server may have committed before the answer was lost.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body(self)
            do {
                try execute("COMMIT")
            } catch let error as PostgresError where error.discardsConnection {
                throw PostgresError(
                    code: .commitOutcomeUnknown, sqlState: error.sqlState,
                    serverMessage: error.serverMessage)
            }
            return value
        } catch {
            if isHealthy { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Calls `body` with libpq's `paramValues` for `parameters`: pointers to NUL-terminated texts
    /// (nil for SQL NULL) that live for the call. Every value is written straight into one buffer
    /// (PostgresEncodable.appendPostgresText), instead of a String per value and then a C copy of it.
    private func withParameters<T>(
        _ parameters: [(any PostgresEncodable)?],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T
    ) -> T {
        parameterBytes.removeAll(keepingCapacity: true)
        parameterStarts.removeAll(keepingCapacity: true)
        for parameter in parameters {
            guard let parameter else {
                parameterStarts.append(nil)
                continue
            }
            parameterStarts.append(parameterBytes.count)
            parameter.appendPostgresText(to: &parameterBytes)
            parameterBytes.append(0)
        }
        defer {
            // A rare huge statement (a backfill's batch) should not pin its buffer for the connection's life.
            if parameterBytes.capacity > 4 << 20 { parameterBytes = [] }
        }
        let starts = parameterStarts
        return parameterBytes.withUnsafeBufferPointer { bytes in
            withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(1, starts.count)) { pointers in
                for (index, start) in starts.enumerated() {
                    // CChar and UInt8 are the signed and unsigned views of the same byte, which Swift
                    // lets alias; libpq reads each value up to its NUL and does not keep the pointer.
                    pointers[index] = start.map {
                        UnsafeRawPointer(bytes.baseAddress! + $0).assumingMemoryBound(to: CChar.self)
                    }
                }
                return body(UnsafePointer(pointers.baseAddress!))
            }
        }
    }

    private func preparedName(for sql: String, parameterCount: Int) throws -> String {
        if let name = preparedNames[sql] { return name }
        let name = "herald_\(preparedNames.count + 1)"
        _ = try consume(PQprepare(handle, name, sql, Int32(parameterCount), nil))
        preparedNames[sql] = name
        return name
    }

    func consume(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else { throw clientFailure() }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Self.adopt(result)
        case PGRES_PIPELINE_ABORTED:
            PQclear(result)
            throw PostgresError(
                code: .queryFailed, serverMessage: "skipped: an earlier statement of the pipeline failed")
        default:
            defer { PQclear(result) }
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = String(cString: PQresultErrorMessage(result))
            // Every error the server sends carries a SQLSTATE; a failed result without one was made by
            // libpq itself ("server closed the connection unexpectedly", "could not receive data from
            // server: Connection timed out", lost synchronisation), and such a connection is not
            // trusted again, whatever PQstatus still says.
            guard let sqlState, PQstatus(handle) == CONNECTION_OK else {
                throw discarding(PostgresError(code: .connectionLost, sqlState: sqlState, serverMessage: message))
            }
            throw discarding(PostgresError(code: .queryFailed, sqlState: sqlState, serverMessage: message))
        }
    }

    /// A failure libpq reported without a server error (a send, a sync, a missing result): the
    /// connection is treated as lost.
    func clientFailure() -> PostgresError {
        discarding(PostgresError(code: .connectionLost, serverMessage: String(cString: PQerrorMessage(handle))))
    }

    /// Marks the connection unfit for reuse when `error` says so, and returns it.
    func discarding(_ error: PostgresError) -> PostgresError {
        if error.discardsConnection { discarded = true }
        return error
    }

    /// Takes ownership of a successful result: its rows are read in place (PostgresRow.swift), and a
    /// result without columns is freed at once.
    private static func adopt(_ result: OpaquePointer) -> PostgresResult {
        let affected =
            PQcmdTuples(result).map { tag in
                PostgresRow.integer(
                    UnsafeBufferPointer(
                        start: UnsafeRawPointer(tag).assumingMemoryBound(to: UInt8.self),
                        count: strlen(tag))) ?? 0
            } ?? 0
        guard PQnfields(result) > 0 else {
            PQclear(result)
            return PostgresResult(storage: nil, affectedRows: affected)
        }
        return PostgresResult(storage: PostgresResultStorage(result), affectedRows: affected)
    }
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call (the connection's
/// keywords and values).
private func withCStringArray<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let duplicates: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { duplicates.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = duplicates.map { $0.map { UnsafePointer($0) } }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
