import HeraldCore

/// Typed reads of a JSON object's fields with the API's errors: unknown fields are refused so a
/// misspelt option is an error, not a silent default.
struct JSONFields {
    let members: [(key: String, value: JSONValue)]

    init(_ json: JSONValue, allowed: Set<String>) throws(HeraldError) {
        guard let members = json.objectMembers else { throw .invalidField("", "The body must be a JSON object.") }
        for member in members where !allowed.contains(member.key) { throw .unknownField(member.key) }
        self.members = members
    }

    func value(_ name: String) -> JSONValue? {
        guard let value = members.first(where: { $0.key == name })?.value, value != .null else { return nil }
        return value
    }

    func has(_ name: String) -> Bool { members.contains { $0.key == name } }

    func string(_ name: String) throws(HeraldError) -> String? {
        guard let value = value(name) else { return nil }
        guard let text = value.stringValue else { throw .invalidField(name, "\(name) must be a string.") }
        return text
    }

    func requiredString(_ name: String) throws(HeraldError) -> String {
        guard let text = try string(name) else { throw .missingField(name) }
        return text
    }

    func integer(_ name: String, range: ClosedRange<Int>) throws(HeraldError) -> Int? {
        guard let value = value(name) else { return nil }
        guard let number = value.numberValue, number == number.rounded(), number >= Double(range.lowerBound),
              number <= Double(range.upperBound)
        else {
            throw .invalidField(name, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return Int(number)
    }

    func stringArray(_ name: String, maxCount: Int) throws(HeraldError) -> [String] {
        guard let value = value(name) else { return [] }
        guard let items = value.arrayValue, items.count <= maxCount else {
            throw .invalidField(name, "\(name) must be an array of at most \(maxCount) strings.")
        }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else { throw .invalidField("\(name)[\(index)]", "\(name)[\(index)] must be a string.") }
            result.append(text)
        }
        return result
    }
}
