import Postgres

extension PostgresConnection {
    /// The plan of a named query with these parameters, as EXPLAIN prints it (one line a node): what the EXPLAIN
    /// tests read to prove the index a query uses.
    public func plan(_ sql: NamedSQL, _ parameters: [(any PostgresEncodable)?] = []) throws -> String {
        try query("EXPLAIN " + sql.text, parameters).rows.map { try $0.string("QUERY PLAN") }.joined(separator: "\n")
    }

    /// The plan of `query` with its own bindings.
    public func plan<Query: NamedQuery>(_ query: Query) throws -> String {
        try plan(Query.sql, query.bindings)
    }
}
