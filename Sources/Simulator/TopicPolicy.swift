/// Which `apns-topic`s the simulated team may push to (`herald-sim --apns-topics a,b`), and which bundle id a
/// topic addresses.
///
/// Apple gives some push types a topic of their own: the bundle id with a suffix (`.voip`, `.voip-ptt`,
/// `.complication`, `.pushkit.fileprovider`, `.location-query`, and `.push-type.<type>` for Live Activities,
/// widgets and the push types after them). A listed bundle allows those topics too; any other topic is
/// 400 TopicDisallowed. Without a list every topic is allowed, as before.
struct TopicPolicy: Sendable {
    /// The team's bundle ids; nil allows every topic.
    let bundles: [String]?

    /// The suffixes Apple documents for push types with their own topic, besides `.push-type.<type>`.
    static let suffixes = [".voip", ".voip-ptt", ".complication", ".pushkit.fileprovider", ".location-query"]
    static var pushTypeMarker: String { ".push-type." }

    init(bundles: [String]? = nil) {
        self.bundles = bundles
    }

    /// True when some topics are refused.
    var restricts: Bool { bundles != nil }

    /// The bundle id `topic` addresses, or nil when the team may not push to it. Without a list: the topic with
    /// a push-type suffix removed (what a device token is bound to).
    func bundle(of topic: String) -> Substring? {
        guard let bundles else { return Self.stripSuffix(topic) }
        if bundles.contains(where: { $0 == topic }) { return topic[...] }
        for bundle in bundles where topic.utf8.count > bundle.utf8.count + 1 && topic.hasPrefix(bundle) {
            let rest = topic.dropFirst(bundle.count)
            if rest.first == "." && Self.isPushTypeSuffix(rest) { return topic.prefix(bundle.count) }
        }
        return nil
    }

    /// `.voip`, `.push-type.liveactivity`, ...: a suffix Apple appends to a bundle id for a push type.
    static func isPushTypeSuffix(_ suffix: Substring) -> Bool {
        if suffixes.contains(where: { $0 == suffix }) { return true }
        return suffix.hasPrefix(pushTypeMarker) && suffix.utf8.count > pushTypeMarker.utf8.count
            && !suffix.dropFirst(pushTypeMarker.utf8.count).contains(".")
    }

    private static func stripSuffix(_ topic: String) -> Substring {
        for suffix in suffixes where topic.utf8.count > suffix.utf8.count && topic.hasSuffix(suffix) {
            return topic.dropLast(suffix.count)
        }
        // `.push-type.<type>`: the type is the last dot-separated part, the marker just before it.
        guard let lastDot = topic.lastIndex(of: "."), topic.index(after: lastDot) < topic.endIndex else {
            return topic[...]
        }
        let head = topic[..<lastDot]
        let marker = pushTypeMarker.dropLast()
        guard head.count > marker.count, head.hasSuffix(marker) else { return topic[...] }
        return head.dropLast(marker.count)
    }

    /// What is wrong with a list of bundle ids, or nil: at least one, none empty, only the characters bundle ids
    /// have (letters, digits, '.', '-'; '_' is tolerated), no repeats.
    static func problem(with bundles: [String]) -> String? {
        guard !bundles.isEmpty else { return "at least one bundle id is needed" }
        for bundle in bundles {
            guard !bundle.isEmpty else { return "bundle ids must not be empty" }
            let valid = bundle.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard valid else { return "\"\(bundle)\" is not a bundle id (letters, digits, '.', '-', '_')" }
        }
        guard Set(bundles).count == bundles.count else { return "a bundle id is listed twice" }
        return nil
    }
}
