import Foundation

/// One statement kept as SQL in a `.sql` file under `-- name:` (Sources/Store/Queries), embedded into the build
/// by the EmbedQueries plugin: `name` is `file.query`, as messages and the EXPLAIN tests address it.
public struct NamedSQL: Sendable, Hashable {
    public let name: String
    public let text: String
    /// False (`-- unprepared`): run unnamed, so each call is planned for its values (a text whose optional
    /// conditions the planner folds away when their parameter is NULL, each combination on its own index).
    public let isPrepared: Bool

    public init(name: String, text: String, isPrepared: Bool = true) {
        self.name = name
        self.text = text
        self.isPrepared = isPrepared
    }

    /// This statement with its placeholder `{{placeholder}}` (`-- identifiers:`) replaced by `identifier`, quoted as
    /// an SQL identifier: for a name no bind parameter can stand for (LISTEN's channel). The one quoting of a name.
    public func filling(_ placeholder: String, identifier: String) -> NamedSQL {
        let token = "{{" + placeholder + "}}"
        precondition(text.contains(token), "\(name) has no placeholder \(token)")
        let quoted = "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        return NamedSQL(name: name, text: text.replacingOccurrences(of: token, with: quoted), isPrepared: isPrepared)
    }
}

/// A row of a named query's result, read by column name (a reordered SELECT cannot shift a value; a missing or
/// mistyped column throws `decodingFailed` naming it).
public protocol QueryRow: Sendable {
    init(row: PostgresRow) throws
    /// Every row of `result`. The default reads each row by name; a type read in bulk on a hot path resolves
    /// the column positions once per result instead (`PostgresResult.column`).
    static func rows(of result: PostgresResult) throws -> [Self]
}

extension QueryRow {
    public static func rows(of result: PostgresResult) throws -> [Self] { try result.rows.map(Self.init(row:)) }
}

/// The row type of a statement that returns none (or whose rows are not read).
public struct NoRow: QueryRow {
    public init(row: PostgresRow) throws {}
}

/// A named statement with its parameters, typed: the wrapper a store builds and a connection runs (postgres-nio's
/// `PostgresQuery` with the text kept in a `.sql` file). Run as a prepared statement on connections that prepare.
public protocol NamedQuery: Sendable {
    associatedtype Row: QueryRow = NoRow
    static var sql: NamedSQL { get }
    /// The parameters `$1...$n`, in order (nil binds SQL NULL).
    var bindings: [(any PostgresEncodable)?] { get }
}

extension NamedQuery {
    public var bindings: [(any PostgresEncodable)?] { [] }
}

extension PostgresConnection {
    /// Runs `query` and decodes every row.
    public func rows<Query: NamedQuery>(_ query: Query) throws -> [Query.Row] {
        try Query.Row.rows(of: result(query))
    }

    /// Runs `query` and decodes its first row (nil when it returned none).
    public func row<Query: NamedQuery>(_ query: Query) throws -> Query.Row? {
        guard let first = try result(query).first else { return nil }
        return try Query.Row(row: first)
    }

    /// Runs `query` and returns the number of rows its command tag reports (the rows it wrote).
    @discardableResult
    public func run<Query: NamedQuery>(_ query: Query) throws -> Int {
        try result(query).affectedRows
    }

    /// Runs `query` and returns its result undecoded (for a reader that needs the result itself).
    public func result<Query: NamedQuery>(_ query: Query) throws -> PostgresResult {
        try self.query(Query.sql.text, query.bindings, prepared: Query.sql.isPrepared)
    }

    /// Runs `sql`, a `COPY ... FROM STDIN`, with `rows`; returns the rows copied.
    @discardableResult
    public func copy(_ sql: NamedSQL, rows: PostgresCopyRows) throws -> Int {
        try copy(sql.text, rows: rows)
    }

    /// Runs `sql` (a statement without parameters: DDL, LISTEN) and returns its result.
    @discardableResult
    public func execute(_ sql: NamedSQL) throws -> PostgresResult {
        try execute(sql.text)
    }

    /// Runs `queries` in one round trip (`pipeline`): one implicit transaction. An unprepared query runs unnamed,
    /// as `result` runs it.
    public func pipeline(queries: [any NamedQuery]) throws -> [PostgresResult] {
        try pipeline(queries.map { (type(of: $0).sql.text, $0.bindings, type(of: $0).sql.isPrepared) })
    }
}
