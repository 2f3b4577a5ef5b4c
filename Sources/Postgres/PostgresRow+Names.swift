import CLibPQ
import Foundation

/// Values read by the column's name in the statement's output, so a reordered SELECT cannot shift them. Each read
/// finds the column (libpq's PQfnumber, a scan of the few output names); a loop over many rows of one statement
/// resolves the positions once (`PostgresResult.column`).
extension PostgresRow {
    /// The position of output column `name`; throws `decodingFailed` naming it when the statement has none.
    public func column(_ name: String) throws -> Int { try storage.column(name) }

    public func string(_ name: String) throws -> String { try string(column(name)) }
    public func bytes(_ name: String) throws -> [UInt8] { try bytes(column(name)) }
    public func optionalString(_ name: String) throws -> String? { optionalString(try column(name)) }
    public func int(_ name: String) throws -> Int { try int(column(name)) }
    public func optionalInt(_ name: String) throws -> Int? { try optionalInt(column(name)) }
    public func double(_ name: String) throws -> Double { try double(column(name)) }
    public func optionalDouble(_ name: String) throws -> Double? {
        let index = try column(name)
        return isNull(index) ? nil : try double(index)
    }
    public func bool(_ name: String) throws -> Bool { try bool(column(name)) }
    public func optionalBool(_ name: String) throws -> Bool? {
        let index = try column(name)
        return isNull(index) ? nil : try bool(index)
    }
    public func isNull(_ name: String) throws -> Bool { isNull(try column(name)) }
    public func bytea(_ name: String) throws -> [UInt8] { try bytea(column(name)) }
    public func uuid(_ name: String) throws -> UUID { try uuid(column(name)) }
    public func optionalUUID(_ name: String) throws -> UUID? { try optionalUUID(column(name)) }
    public func date(_ name: String) throws -> Date { try date(column(name)) }
    public func optionalDate(_ name: String) throws -> Date? { try optionalDate(column(name)) }
}

extension PostgresResult {
    /// The position of output column `name`, for reading many rows by it; throws `decodingFailed` naming it.
    public func column(_ name: String) throws -> Int {
        guard let storage else { throw PostgresError(code: .decodingFailed, serverMessage: "no column \(name)") }
        return try storage.column(name)
    }
}

extension PostgresResultStorage {
    func column(_ name: String) throws -> Int {
        // Quoted: matched exactly, as the statement spells it, not case-folded.
        let index = Int(PQfnumber(result, "\"" + name + "\""))
        guard index >= 0 else {
            throw PostgresError(code: .decodingFailed, serverMessage: "the statement returns no column \(name)")
        }
        return index
    }
}
