import Foundation

/// Rules for the partner fields an admin sets.
public enum PartnerRules {
    public static let rateLimitPerMinuteRange = 1...1_000_000
    public static let rateLimitPerDayRange = 1...100_000_000
    /// How long a rotated key or webhook secret may keep working (`previousKeyValidSeconds`,
    /// `previousSecretValidSeconds`): at most 7 days; 0 ends it at once.
    public static let rotationOverlapSecondsRange = 0...604_800

    /// 1-64 characters (Unicode scalars, as JSON Schema counts), no control, separator or
    /// bidirectional formatting characters (TextRules), no brackets (the `[name]` prefix must not
    /// be forgeable) and no whitespace at either end.
    public static func displayName(_ text: String) throws(HeraldError) -> String {
        let scalars = text.unicodeScalars
        guard (1...64).contains(scalars.count),
            !TextRules.containsForbidden(text), !scalars.contains("["), !scalars.contains("]"),
            let first = scalars.first, let last = scalars.last,
            !first.properties.isWhitespace, !last.properties.isWhitespace
        else {
            throw .invalidField(
                "displayName",
                "displayName must be 1-64 characters without brackets, control characters or surrounding spaces.")
        }
        return text
    }

    /// `aps.sound`: a plain file name that iOS looks up in the host app's bundle or
    /// `Library/Sounds` (`default` is the system sound). 1-64 characters (Unicode scalars), no `/` or
    /// `\`, none of the refused characters (TextRules), no whitespace at either end, and not starting
    /// with `.` (no `.`, `..` or hidden file). docs/openapi.yaml's `SoundName` states the same rule.
    public static func soundName(_ text: String) throws(HeraldError) -> String {
        let scalars = text.unicodeScalars
        guard (1...64).contains(scalars.count),
            !TextRules.containsForbidden(text), !scalars.contains("/"), !scalars.contains("\\"),
            let first = scalars.first, let last = scalars.last, first != ".",
            !first.properties.isWhitespace, !last.properties.isWhitespace
        else {
            throw .invalidField(
                "sound",
                "sound must be null (silent) or a file name of 1-64 characters without '/', '\\', control characters, "
                    + "surrounding spaces or a leading '.'.")
        }
        return text
    }

    /// The `sound` member of an admin body: JSON null is silent, a string a sound file name.
    public static func sound(_ value: JSONValue) throws(HeraldError) -> NotificationSound {
        if value == .null { return .silent }
        guard let text = value.stringValue else {
            throw .invalidField("sound", "sound must be a sound file name (a string) or null (silent).")
        }
        return .named(try soundName(text))
    }

    /// The host's PNG of the icon: `https://`, a host name or IPv4 address (letters, digits, `.`,
    /// `-`), an optional port, then optionally a path, query or fragment of printable ASCII
    /// without `\`; at most 2,048 characters. Checked by hand rather than by Foundation's URL
    /// parser, so the rule is exactly the one docs/openapi.yaml states.
    public static func iconURL(_ text: String) throws(HeraldError) -> String {
        try httpsURL(text, field: "iconUrl")
    }

    /// Where a partner's delivery webhooks go: the same rule as `iconURL`. Which addresses it may
    /// reach is decided when it is sent (HTTPFetch's address policy, on the resolved address).
    public static func webhookURL(_ text: String) throws(HeraldError) -> String {
        try httpsURL(text, field: "webhookUrl")
    }

    static func httpsURL(_ text: String, field: String) throws(HeraldError) -> String {
        guard isHTTPSURL(text) else {
            throw .invalidField(field, "\(field) must be an https URL (ASCII, no spaces) of at most 2048 characters.")
        }
        return text
    }

    static func isHTTPSURL(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let scheme = Array("https://".utf8)
        guard bytes.count <= 2048, bytes.starts(with: scheme) else { return false }
        var index = scheme.count
        let hostStart = index
        while index < bytes.count, Identifiers.isHostByte(bytes[index]) { index += 1 }
        guard index > hostStart else { return false }
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            let portStart = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            guard (1...5).contains(index - portStart) else { return false }
        }
        guard index < bytes.count else { return true }
        guard [UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(bytes[index]) else { return false }
        return bytes[index...].allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\\") }
    }

    public static func miniAppID(_ text: String) throws(HeraldError) -> String {
        guard Identifiers.isValidMiniAppID(text) else {
            throw .invalidField("miniAppId", "miniAppId must be 1-128 of letters, digits, '.', '_' and '-'.")
        }
        return text
    }

    public static func tenantID(_ text: String) throws(HeraldError) -> String {
        guard Identifiers.isValidExternalID(text) else {
            throw .invalidField("tenantId", "tenantId must be 1-128 of letters, digits, '.', '_', ':' and '-'.")
        }
        return text
    }
}
