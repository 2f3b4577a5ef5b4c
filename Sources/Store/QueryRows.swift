import Postgres

// Rows of one column that several stores' queries return, one type each.

/// How many rows a sweep or a write changed (`count`).
struct CountRow: QueryRow, Decodable {
    let count: Int
}

/// A write function's answer (`result`): its text, or the enum of its raw values.
struct ResultRow<Value: Decodable & Sendable>: QueryRow, Decodable {
    let result: Value
}

/// A write function's answer as text.
typealias WriteResultRow = ResultRow<String>
