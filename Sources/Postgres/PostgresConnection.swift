import CLibPQ
import Foundation

/// One libpq connection. Not thread-safe: one thread uses it at a time (the pool hands it out
/// exclusively), hence `@unchecked Sendable`. Every statement with parameters runs as a named
/// prepared statement, prepared once per connection on first use.
public final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var preparedNames: [String: String] = [:]
    /// When the connection was last returned to a pool; used to skip health checks on busy connections.
    var lastUsed = ContinuousClock.now

    /// Opens a connection. `url` is a libpq connection string or `postgres://` URI.
    public init(url: String, applicationName: String = "herald", connectTimeoutSeconds: Int = 5) throws {
        let keys = ["dbname", "connect_timeout", "application_name", "client_encoding"]
        let values = [url, String(connectTimeoutSeconds), applicationName, "UTF8"]
        let connection = withCStringArray(keys) { keyPointers in
            withCStringArray(values) { valuePointers in
                PQconnectdbParams(keyPointers, valuePointers, 1)
            }
        }
        guard let connection else { throw PostgresError(code: .connectionFailed, serverMessage: "out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(code: .connectionFailed, serverMessage: message)
        }
        handle = connection
        // Timestamps are parsed from text; a fixed zone keeps their format predictable.
        try execute("SET TimeZone TO 'UTC'; SET client_min_messages TO warning")
    }

    deinit { PQfinish(handle) }

    /// True while the socket is usable as far as libpq knows.
    public var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// True when no transaction is open (the only state in which a pooled connection may be reused).
    public var isIdle: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Checks a connection that sat idle: reads what the server sent meanwhile, then makes one
    /// empty-query round trip. A server that closed or terminated the connection (restart, idle
    /// timeout, pg_terminate_backend) makes this false.
    func validate() -> Bool {
        guard PQconsumeInput(handle) == 1, isHealthy else { return false }
        return (try? execute("")) != nil && isHealthy
    }

    /// Runs `sql` with `parameters` (nil binds SQL NULL) and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> PostgresResult {
        if parameters.isEmpty && !sql.contains("$1") {
            return try execute(sql)
        }
        let name = try preparedName(for: sql, parameterCount: parameters.count)
        let texts: [String?] = parameters.map { $0?.postgresText }
        let result = withOptionalCStringArray(texts) { pointers in
            PQexecPrepared(handle, name, Int32(texts.count), pointers, nil, nil, 0)
        }
        return try consume(result)
    }

    /// Runs one or more statements without parameters (migrations, BEGIN/COMMIT).
    @discardableResult
    public func execute(_ sql: String) throws -> PostgresResult {
        try consume(PQexec(handle, sql))
    }

    /// Runs `body` inside BEGIN/COMMIT; rolls back when it throws.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if isHealthy { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    private func preparedName(for sql: String, parameterCount: Int) throws -> String {
        if let name = preparedNames[sql] { return name }
        let name = "herald_\(preparedNames.count + 1)"
        _ = try consume(PQprepare(handle, name, sql, Int32(parameterCount), nil))
        preparedNames[sql] = name
        return name
    }

    private func consume(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else {
            throw PostgresError(code: isHealthy ? .queryFailed : .connectionLost,
                                serverMessage: String(cString: PQerrorMessage(handle)))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Self.copy(result)
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = String(cString: PQresultErrorMessage(result))
            let code: PostgresError.Code = isHealthy ? .queryFailed : .connectionLost
            throw PostgresError(code: code, sqlState: sqlState, serverMessage: message)
        }
    }

    private static func copy(_ result: OpaquePointer) -> PostgresResult {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var columns: [String] = []
        columns.reserveCapacity(columnCount)
        for column in 0..<columnCount {
            columns.append(String(cString: PQfname(result, Int32(column))))
        }
        var rows: [PostgresRow] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(PostgresRow(values: values))
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresResult(columns: columns, rows: rows, affectedRows: affected)
    }
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call.
private func withCStringArray<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    withOptionalCStringArray(strings) { body($0) }
}

private func withOptionalCStringArray<T>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let duplicates: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } }
    defer { duplicates.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = duplicates.map { $0.map { UnsafePointer($0) } }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
