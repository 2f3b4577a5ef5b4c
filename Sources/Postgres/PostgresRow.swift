import CLibPQ
import Foundation

/// The libpq result a statement's rows are read from. Kept rather than copied: a copy made one
/// String per column of every row (most of a claim's allocations), while the accessors below decode
/// ids, numbers and times straight from libpq's bytes and make Strings only for text columns.
/// A PGresult is read-only once made and does not depend on its connection, so it may be read from
/// any thread and outlive the connection (libpq's documentation says so); it is freed with the last
/// row that refers to it.
final class PostgresResultStorage: @unchecked Sendable {
    let result: OpaquePointer
    let rowCount: Int
    let columnCount: Int

    init(_ result: OpaquePointer) {
        self.result = result
        rowCount = Int(PQntuples(result))
        columnCount = Int(PQnfields(result))
    }

    deinit { PQclear(result) }
}

/// The rows a statement returned.
public struct PostgresResult: Sendable {
    /// Nil for a statement that returns no columns (INSERT without RETURNING, BEGIN, ...).
    let storage: PostgresResultStorage?
    /// The rows, each a reference into `storage` (one array per result, nothing per value).
    public let rows: [PostgresRow]
    /// The number from the command tag (`INSERT 0 3` -> 3), or 0.
    public let affectedRows: Int

    init(storage: PostgresResultStorage?, affectedRows: Int) {
        self.storage = storage
        self.affectedRows = affectedRows
        guard let storage, storage.rowCount > 0 else {
            rows = []
            return
        }
        rows = (0..<storage.rowCount).map { PostgresRow(storage: storage, row: Int32($0)) }
    }

    public var columns: [String] {
        guard let storage else { return [] }
        return (0..<storage.columnCount).map { String(cString: PQfname(storage.result, Int32($0))) }
    }

    public var first: PostgresRow? { rows.first }
}

/// One row, values in Postgres' text format. Accessors throw `decodingFailed` for a value of the
/// wrong shape; `nil` means SQL NULL. Only `string`, `optionalString`, the subscript and `double`
/// make a String; the others read the value's bytes.
public struct PostgresRow: Sendable {
    let storage: PostgresResultStorage
    let row: Int32

    /// The number of columns.
    public var count: Int { storage.columnCount }

    /// Every value as text (for diagnostics; the typed accessors are cheaper).
    public var values: [String?] { (0..<storage.columnCount).map { self[$0] } }

    public subscript(index: Int) -> String? {
        cell(index).map { String(decoding: $0, as: UTF8.self) }
    }

    public func string(_ index: Int) throws -> String {
        guard let value = cell(index) else { throw decodingError(index, "NULL") }
        return String(decoding: value, as: UTF8.self)
    }

    public func optionalString(_ index: Int) -> String? { self[index] }

    /// The value's UTF-8 bytes, for text that goes on the wire as it is (a payload): one copy, no String.
    public func bytes(_ index: Int) throws -> [UInt8] {
        guard let value = cell(index) else { throw decodingError(index, "NULL") }
        return Array(value)
    }

    /// True when the value is SQL NULL.
    public func isNull(_ index: Int) -> Bool { cell(index) == nil }

    public func int(_ index: Int) throws -> Int {
        guard let value = cell(index), let number = Self.integer(value) else { throw decodingError(index, "integer") }
        return number
    }

    public func optionalInt(_ index: Int) throws -> Int? {
        guard cell(index) != nil else { return nil }
        return try int(index)
    }

    public func double(_ index: Int) throws -> Double {
        // Rare (statistics); Double's own parser knows Postgres' Infinity and NaN spellings.
        guard let text = self[index], let value = Double(text) else { throw decodingError(index, "double") }
        return value
    }

    public func bool(_ index: Int) throws -> Bool {
        guard let value = cell(index), value.count == 1 else { throw decodingError(index, "boolean") }
        switch value[0] {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: throw decodingError(index, "boolean")
        }
    }

    public func uuid(_ index: Int) throws -> UUID {
        guard let value = cell(index), let id = PostgresUUID.parse(bytes: value) else {
            throw decodingError(index, "uuid")
        }
        return id
    }

    public func optionalUUID(_ index: Int) throws -> UUID? {
        guard cell(index) != nil else { return nil }
        return try uuid(index)
    }

    public func date(_ index: Int) throws -> Date {
        guard let value = cell(index), let date = PostgresTimestamp.parse(bytes: value) else {
            throw decodingError(index, "timestamptz")
        }
        return date
    }

    public func optionalDate(_ index: Int) throws -> Date? {
        guard cell(index) != nil else { return nil }
        return try date(index)
    }

    /// The value's bytes in libpq's buffer (valid while `storage` lives), nil for SQL NULL.
    func cell(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        precondition(index >= 0 && index < storage.columnCount, "column index out of range")
        let column = Int32(index)
        guard PQgetisnull(storage.result, row, column) == 0, let value = PQgetvalue(storage.result, row, column) else {
            return nil
        }
        let length = Int(PQgetlength(storage.result, row, column))
        return UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length)
    }

    /// Decimal digits with an optional sign, as `Int(String)` reads them; nil when empty, not
    /// digits, or past Int's range. Accumulated negative so that Int.min parses.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var index = 0
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            index = 1
        }
        guard index < bytes.count else { return nil }
        var value = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times.subtractingReportingOverflow(Int(digit))
            guard !overflow, !overflow2 else { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        let (positive, overflow) = (0).subtractingReportingOverflow(value)
        return overflow ? nil : positive
    }

    func decodingError(_ index: Int, _ expected: String) -> PostgresError {
        let name = String(cString: PQfname(storage.result, Int32(index)))
        return PostgresError(code: .decodingFailed, serverMessage: "column \(index) (\(name)): expected \(expected)")
    }
}
