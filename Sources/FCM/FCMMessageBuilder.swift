import HeraldCore

/// Builds the body of `POST /v1/projects/{id}/messages:send` from a stored message. Pure.
///
/// The stored message is a JSON object without a target (`{"android":{"priority":"HIGH"},
/// "data":{...}}`, see `HeraldCore.PushPayload`). The body is `{"message":{...stored members,
/// "token":<token>}}` with `android.ttl` set to `"<n>s"` when a TTL is given. `data` and every
/// other member keep their values and order.
public enum FCMMessageBuilder {
    /// FCM's largest TTL: 4 weeks.
    public static let maximumTTLSeconds = 28 * 86_400

    public struct Failure: Error, Sendable, Equatable {
        /// `invalid_message`: the stored message is not a JSON object.
        public let reason: String

        public init(reason: String) {
            self.reason = reason
        }
    }

    public static func body(for message: FCMMessage) throws(Failure) -> [UInt8] {
        guard let stored = try? JSONParser.parse(message.message), var members = stored.objectMembers else {
            throw Failure(reason: "invalid_message")
        }
        // Exactly one target is allowed: the delivery's token replaces whatever the stored form had.
        members.removeAll { $0.key == "token" || $0.key == "topic" || $0.key == "condition" }
        if let seconds = message.ttlSeconds {
            let ttl: JSONValue = .string("\(min(max(seconds, 0), maximumTTLSeconds))s")
            if let index = members.firstIndex(where: { $0.key == "android" }) {
                guard var android = members[index].value.objectMembers else { throw Failure(reason: "invalid_message") }
                if let ttlIndex = android.firstIndex(where: { $0.key == "ttl" }) {
                    android[ttlIndex].value = ttl
                } else {
                    android.append((key: "ttl", value: ttl))
                }
                members[index].value = .object(android)
            } else {
                members.append((key: "android", value: .object([("ttl", ttl)])))
            }
        }
        members.append((key: "token", value: .string(message.token)))
        return JSONWriter.bytes(.object([("message", .object(members))]))
    }
}
