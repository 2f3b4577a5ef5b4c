import HeraldCore

/// Builds the body of `POST /v1/projects/{id}/messages:send` from a stored message. Pure.
///
/// The stored message is a JSON object without a target (`{"android":{"priority":"HIGH"},
/// "data":{...}}`, see `HeraldCore.PushPayload`). The body is `{"message":{...stored members,
/// "token":<token>}}` with `android.ttl` set to `"<n>s"` when a TTL is given and `android.collapse_key` when a
/// collapse key is. `data` and every other member keep their values and order.
public enum FCMMessageBuilder {
    /// FCM's largest TTL: 4 weeks.
    public static let maximumTTLSeconds = 28 * 86_400

    public struct Failure: Error, Sendable, Equatable {
        /// `invalid_message`: the stored message is not a JSON object.
        public let reason: String
    }

    public static func body(for message: FCMMessage) throws(Failure) -> [UInt8] {
        if let spliced = splice(message) { return spliced }
        return try rebuild(message)
    }

    /// The form the intake stores, which the fast path recognises.
    static let storedPrefix = Array(#"{"android":{"priority":"HIGH"}"#.utf8)
    private static let targetKeys = [#""token":"#, #""topic":"#, #""condition":"#].map { Array($0.utf8) }

    /// The same body as `rebuild`, made by splicing bytes instead of parsing and re-writing the
    /// message (the worker's busiest step for FCM): only for the intake's own stored form, and only
    /// when no member could be a target key (an unescaped `"token":` can only be a key).
    static func splice(_ message: FCMMessage) -> [UInt8]? {
        let stored = message.message
        guard stored.count > storedPrefix.count, stored.starts(with: storedPrefix), stored.last == UInt8(ascii: "}"),
            stored[storedPrefix.count] == UInt8(ascii: ",") || stored.count == storedPrefix.count + 1
        else { return nil }
        for key in targetKeys where contains(stored, key) { return nil }
        var body = Array(#"{"message":{"android":{"priority":"HIGH""#.utf8)
        body.reserveCapacity(stored.count + message.token.utf8.count + 64)
        if let seconds = message.ttlSeconds {
            body.append(contentsOf: #","ttl":""#.utf8)
            body.append(contentsOf: String(min(max(seconds, 0), maximumTTLSeconds)).utf8)
            body.append(contentsOf: #"s""#.utf8)
        }
        if let collapseKey = message.collapseKey {
            body.append(contentsOf: #","collapse_key":"#.utf8)
            JSONWriter.writeString(collapseKey, into: &body)
        }
        body.append(UInt8(ascii: "}"))
        // The stored members after "android", without the closing brace.
        body.append(contentsOf: stored[storedPrefix.count..<(stored.count - 1)])
        body.append(contentsOf: #","token":"#.utf8)
        body.append(contentsOf: JSONWriter.bytes(.string(message.token)))
        body.append(contentsOf: "}}".utf8)
        return body
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return true
            }
            index += 1
        }
        return false
    }

    /// The general path: parse the stored message, set the target, the TTL and the collapse key, write it again.
    static func rebuild(_ message: FCMMessage) throws(Failure) -> [UInt8] {
        guard let stored = try? JSONParser.parse(message.message), var members = stored.objectMembers else {
            throw Failure(reason: "invalid_message")
        }
        // Exactly one target is allowed: the delivery's token replaces whatever the stored form had.
        members.removeAll { $0.key == "token" || $0.key == "topic" || $0.key == "condition" }
        let androidIndex = members.firstIndex { $0.key == "android" }
        var android: [(key: String, value: JSONValue)] = []
        if let androidIndex {
            guard let stored = members[androidIndex].value.objectMembers else {
                throw Failure(reason: "invalid_message")
            }
            android = stored
        }
        func set(_ key: String, _ value: JSONValue) {
            if let index = android.firstIndex(where: { $0.key == key }) {
                android[index].value = value
            } else {
                android.append((key: key, value: value))
            }
        }
        if let seconds = message.ttlSeconds { set("ttl", .string("\(min(max(seconds, 0), maximumTTLSeconds))s")) }
        if let collapseKey = message.collapseKey { set("collapse_key", .string(collapseKey)) }
        if let androidIndex {
            members[androidIndex].value = .object(android)
        } else if !android.isEmpty {
            members.append((key: "android", value: .object(android)))
        }
        members.append((key: "token", value: .string(message.token)))
        return JSONWriter.bytes(.object([("message", .object(members))]))
    }
}
