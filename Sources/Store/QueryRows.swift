import Postgres

// Rows of one column that several stores' queries return, one type each.

/// A sweep's answer: how many rows it changed (`count`).
struct SweepCountRow: QueryRow {
    let count: Int
    init(row: PostgresRow) throws { count = try row.int("count") }
}

/// A write function's answer, as text (`result`).
struct WriteResultRow: QueryRow {
    let result: String
    init(row: PostgresRow) throws { result = try row.string("result") }
}
