import Foundation

/// The rows a statement returned, copied out of libpq so they can cross threads.
public struct PostgresResult: Sendable {
    public let columns: [String]
    public let rows: [PostgresRow]
    /// The number from the command tag (`INSERT 0 3` -> 3), or 0.
    public let affectedRows: Int

    public var first: PostgresRow? { rows.first }
}

/// One row, values in Postgres' text format. Accessors throw `decodingFailed` for a value of the
/// wrong shape; `nil` means SQL NULL.
public struct PostgresRow: Sendable {
    public let values: [String?]

    public init(values: [String?]) { self.values = values }

    public subscript(index: Int) -> String? { values[index] }

    public func string(_ index: Int) throws -> String {
        guard let value = values[index] else { throw decodingError(index, "NULL") }
        return value
    }

    public func optionalString(_ index: Int) -> String? { values[index] }

    public func int(_ index: Int) throws -> Int {
        guard let text = values[index], let value = Int(text) else { throw decodingError(index, "integer") }
        return value
    }

    public func optionalInt(_ index: Int) throws -> Int? {
        guard values[index] != nil else { return nil }
        return try int(index)
    }

    public func double(_ index: Int) throws -> Double {
        guard let text = values[index], let value = Double(text) else { throw decodingError(index, "double") }
        return value
    }

    public func bool(_ index: Int) throws -> Bool {
        switch values[index] {
        case "t": return true
        case "f": return false
        default: throw decodingError(index, "boolean")
        }
    }

    public func uuid(_ index: Int) throws -> UUID {
        guard let text = values[index], let value = PostgresUUID.parse(text) else { throw decodingError(index, "uuid") }
        return value
    }

    public func date(_ index: Int) throws -> Date {
        guard let text = values[index], let value = PostgresTimestamp.parse(text) else {
            throw decodingError(index, "timestamptz")
        }
        return value
    }

    public func optionalDate(_ index: Int) throws -> Date? {
        guard values[index] != nil else { return nil }
        return try date(index)
    }

    private func decodingError(_ index: Int, _ expected: String) -> PostgresError {
        PostgresError(code: .decodingFailed, serverMessage: "column \(index): expected \(expected)")
    }
}
