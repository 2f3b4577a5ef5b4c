import CLibPQ
import Foundation

/// Decodes a `Decodable` row type from a row by column name, so a row type states only its fields. A coding key
/// reads the column whose name equals it ignoring case and underscores (`partnerID` reads `partner_id`). Values are
/// read as the typed accessors of `PostgresRow` read them: UUID, String, Int, Int32, Int64, Bool, Date, Double,
/// Data (bytea), [UInt8] (a bytea's bytes, or a text value's UTF-8 bytes for text sent on as it is),
/// one-dimensional arrays of these, optionals (SQL NULL is nil) and enums through their raw value.
/// A missing column throws, for an optional field too (a misspelt column must not read as NULL); a missing or
/// mistyped column throws `decodingFailed` naming the column and the row type.
public struct PostgresRowDecoder: Sendable {
    public init() {}

    public func decode<Row: Decodable>(_ type: Row.Type, from row: PostgresRow) throws -> Row {
        do {
            return try Row(from: ColumnsDecoder(row: row))
        } catch let error as PostgresError where error.code == .decodingFailed {
            throw PostgresError(code: .decodingFailed, serverMessage: "\(Row.self): \(error.serverMessage)")
        }
    }
}

extension QueryRow where Self: Decodable {
    public init(row: PostgresRow) throws { self = try PostgresRowDecoder().decode(Self.self, from: row) }
}

extension PostgresResultStorage {
    /// The position of the column whose name equals `key` ignoring case and underscores, compared on libpq's
    /// bytes (no String per column).
    func column(matching key: String) -> Int? {
        var key = key
        return key.withUTF8 { wanted in
            (0..<columnCount).first { index in
                var name = PQfname(result, Int32(index))!
                var position = 0
                while true {
                    while name.pointee == CChar(UInt8(ascii: "_")) { name += 1 }
                    while position < wanted.count && wanted[position] == UInt8(ascii: "_") { position += 1 }
                    let byte = UInt8(bitPattern: name.pointee)
                    if byte == 0 || position == wanted.count { return byte == 0 && position == wanted.count }
                    guard Self.lowercased(byte) == Self.lowercased(wanted[position]) else { return false }
                    name += 1
                    position += 1
                }
            }
        }
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}

/// The row as a keyed container: one column per coding key.
private struct ColumnsDecoder: Decoder {
    let row: PostgresRow
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw PostgresError(code: .decodingFailed, serverMessage: "a row decodes into a type with named fields")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw PostgresError(code: .decodingFailed, serverMessage: "a row decodes into a type with named fields")
    }
}

private struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: PostgresRow
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    /// Every key is present: the default `decodeIfPresent` asks `decodeNil` next, which throws for a missing
    /// column, so an optional field never reads a misspelt column as nil.
    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool { row.isNull(try column(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let index = try column(key)
        let value = ColumnValue(bytes: row.cell(index), column: row.columnName(index), isBytea: row.isBytea(index))
        return try value.decode(T.self)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw PostgresError(code: .decodingFailed, serverMessage: "column \(key.stringValue): no nested fields")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ColumnValue(bytes: row.cell(try column(key)), column: key.stringValue).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { ColumnsDecoder(row: row) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ColumnsDecoder(row: row) }

    private func column(_ key: Key) throws -> Int {
        guard let index = row.storage.column(matching: key.stringValue) else {
            throw PostgresError(
                code: .decodingFailed, serverMessage: "the statement returns no column \(key.stringValue)")
        }
        return index
    }
}

extension PostgresRow {
    func columnName(_ index: Int) -> String { String(cString: PQfname(storage.result, Int32(index))) }

    /// The column is a `bytea` (type oid 17, pg_type.dat): its values come in hex form.
    func isBytea(_ index: Int) -> Bool { PQftype(storage.result, Int32(index)) == 17 }
}

/// One value in Postgres' text format (a column's, or an array element's), nil for SQL NULL: a single value, or an
/// array's elements.
private struct ColumnValue: Decoder, SingleValueDecodingContainer {
    let bytes: UnsafeBufferPointer<UInt8>?
    /// Named in errors.
    let column: String
    var isBytea = false
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw failure("a value with named fields")
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let bytes, let elements = PostgresArrayLiteral.elements(bytes) else { throw failure("an array") }
        return ArrayElements(elements: elements, column: column)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { bytes == nil }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == String.self { return try text() as! T }
        if T.self == Int.self { return try integer() as! T }
        if T.self == Int64.self { return Int64(try integer()) as! T }
        if T.self == Int32.self {
            guard let number = Int32(exactly: try integer()) else { throw failure("a 32-bit integer") }
            return number as! T
        }
        if T.self == Bool.self { return try boolean() as! T }
        if T.self == Double.self { return try double() as! T }
        if T.self == UUID.self {
            guard let bytes, let id = PostgresUUID.parse(bytes: bytes) else { throw failure("uuid") }
            return id as! T
        }
        if T.self == Date.self {
            guard let bytes, let date = PostgresTimestamp.parse(bytes: bytes) else { throw failure("timestamptz") }
            return date as! T
        }
        if T.self == [UInt8].self {
            guard let bytes else { throw failure("NULL") }
            return (isBytea ? try bytea() : Array(bytes)) as! T
        }
        if T.self == Data.self { return Data(try bytea()) as! T }
        // Optionals, arrays and raw-value enums decode through the cases above; a raw value no case has is
        // the column's mistake.
        do {
            return try T(from: self)
        } catch is DecodingError {
            throw failure("\(T.self)")
        }
    }

    private func bytea() throws -> [UInt8] {
        guard let bytes, let data = PostgresBytea.decode(bytes) else { throw failure("bytea in hex form") }
        return data
    }

    private func text() throws -> String {
        guard let bytes else { throw failure("NULL") }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func integer() throws -> Int {
        guard let bytes, let number = PostgresRow.integer(bytes) else { throw failure("integer") }
        return number
    }

    private func boolean() throws -> Bool {
        guard let bytes, bytes.count == 1, bytes[0] == UInt8(ascii: "t") || bytes[0] == UInt8(ascii: "f") else {
            throw failure("boolean")
        }
        return bytes[0] == UInt8(ascii: "t")
    }

    private func double() throws -> Double {
        // Double's own parser knows Postgres' Infinity and NaN spellings.
        guard let bytes, let value = Double(String(decoding: bytes, as: UTF8.self)) else { throw failure("double") }
        return value
    }

    func failure(_ expected: String) -> PostgresError {
        PostgresError(code: .decodingFailed, serverMessage: "column \(column): expected \(expected)")
    }
}

/// An array column's elements, each a value of its own.
private struct ArrayElements: UnkeyedDecodingContainer {
    let elements: [[UInt8]?]
    let column: String
    var codingPath: [any CodingKey] { [] }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }
    var currentIndex = 0

    init(elements: [[UInt8]?], column: String) {
        self.elements = elements
        self.column = column
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == nil else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else { throw ColumnValue(bytes: nil, column: column).failure("another array element") }
        defer { currentIndex += 1 }
        let column = "\(column)[\(currentIndex + 1)]"
        guard let element = elements[currentIndex] else {
            return try ColumnValue(bytes: nil, column: column).decode(T.self)
        }
        return try element.withUnsafeBufferPointer { try ColumnValue(bytes: $0, column: column).decode(T.self) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw ColumnValue(bytes: nil, column: column).failure("an array of values")
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ColumnValue(bytes: nil, column: column).failure("a one-dimensional array")
    }

    mutating func superDecoder() throws -> any Decoder { ColumnValue(bytes: nil, column: column) }
}
