import Foundation

/// Typed reads of a JSON object's fields with the API's errors: unknown fields are refused so a
/// misspelt option is an error, not a silent default. The one field reader of the intake's
/// handlers and of the Live Activity validators.
///
/// Nested objects carry their `path` (`state`, `recipient`), so every error names the field as
/// the partner wrote it (`state.currentStage`, `state.stages[2]`). A member whose value is
/// `null` reads as absent; `isNull` tells the two apart where null means "clear".
public struct JSONFields: Sendable {
    public let members: [(key: String, value: JSONValue)]
    /// The path of this object in the body: "" for the body itself.
    public let path: String

    public init(_ json: JSONValue, allowed: Set<String>, path: String = "") throws(HeraldError) {
        guard let members = json.objectMembers else {
            throw .invalidField(path, path.isEmpty ? "The body must be a JSON object." : "\(path) must be an object.")
        }
        self.members = members
        self.path = path
        for member in members where !allowed.contains(member.key) { throw .unknownField(field(member.key)) }
    }

    /// The error path of the member `name`.
    public func field(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    public func value(_ name: String) -> JSONValue? {
        guard let value = members.first(where: { $0.key == name })?.value, value != .null else { return nil }
        return value
    }

    public func has(_ name: String) -> Bool { members.contains { $0.key == name } }

    /// True when the member is present with the value `null`.
    public func isNull(_ name: String) -> Bool { members.contains { $0.key == name && $0.value == .null } }

    public func string(_ name: String) throws(HeraldError) -> String? {
        guard let value = value(name) else { return nil }
        guard let text = value.stringValue else { throw .invalidField(field(name), "\(field(name)) must be a string.") }
        return text
    }

    public func requiredString(_ name: String) throws(HeraldError) -> String {
        guard let text = try string(name) else { throw .missingField(field(name)) }
        return text
    }

    public func integer(_ name: String, range: ClosedRange<Int>) throws(HeraldError) -> Int? {
        guard let value = value(name) else { return nil }
        guard let number = value.numberValue, number == number.rounded(), number >= Double(range.lowerBound),
            number <= Double(range.upperBound)
        else {
            throw .invalidField(
                field(name), "\(field(name)) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return Int(number)
    }

    /// A JSON number (the parser never yields NaN or infinities).
    public func number(_ name: String) throws(HeraldError) -> Double? {
        guard let value = value(name) else { return nil }
        guard let number = value.numberValue else {
            throw .invalidField(field(name), "\(field(name)) must be a number.")
        }
        return number
    }

    public func number(_ name: String, range: ClosedRange<Double>) throws(HeraldError) -> Double? {
        guard let number = try number(name) else { return nil }
        guard range.contains(number) else {
            throw .invalidField(
                field(name), "\(field(name)) must be a number from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }

    public func bool(_ name: String) throws(HeraldError) -> Bool? {
        guard let value = value(name) else { return nil }
        guard case .bool(let flag) = value else {
            throw .invalidField(field(name), "\(field(name)) must be true or false.")
        }
        return flag
    }

    /// An ISO-8601 timestamp with a time zone (`ISO8601.parse`).
    public func date(_ name: String) throws(HeraldError) -> Date? {
        guard let text = try string(name) else { return nil }
        guard let date = ISO8601.parse(text) else {
            throw .invalidField(field(name), "\(field(name)) must be an ISO-8601 timestamp with a time zone.")
        }
        return date
    }

    /// A nested object, read with its own allowed members and this member's path.
    public func object(_ name: String, allowed: Set<String>) throws(HeraldError) -> JSONFields? {
        guard let value = value(name) else { return nil }
        return try JSONFields(value, allowed: allowed, path: field(name))
    }

    public func requiredObject(_ name: String, allowed: Set<String>) throws(HeraldError) -> JSONFields {
        guard let fields = try object(name, allowed: allowed) else { throw .missingField(field(name)) }
        return fields
    }

    public func stringArray(_ name: String, maxCount: Int) throws(HeraldError) -> [String] {
        guard let value = value(name) else { return [] }
        guard let items = value.arrayValue, items.count <= maxCount else {
            throw .invalidField(field(name), "\(field(name)) must be an array of at most \(maxCount) strings.")
        }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else {
                throw .invalidField("\(field(name))[\(index)]", "\(field(name))[\(index)] must be a string.")
            }
            result.append(text)
        }
        return result
    }
}
