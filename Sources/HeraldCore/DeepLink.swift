/// A partner's deep links must stay inside its own namespace: `<scheme>://miniapp/<miniAppId>`
/// or something below it. The check is on the raw string, and on every decoding of its path, so
/// encoded traversal (`%2e%2e`, `%252e%252e`) and `..` segments are refused outright.
public enum DeepLink {
    public static let maxLength = 2048

    public static func validate(_ link: String, scheme: String, miniAppID: String) throws(HeraldError) {
        guard link.unicodeScalars.count <= maxLength else {
            throw .invalidField("deepLink", "deepLink must be at most \(maxLength) characters.")
        }
        if TextRules.containsForbiddenOrWhitespace(link) || link.unicodeScalars.contains("\\") {
            throw .invalidField("deepLink", "deepLink must not contain whitespace, control characters or backslashes.")
        }
        let root = "\(scheme)://miniapp/\(miniAppID)"
        let outside = HeraldError(
            status: 403, code: "deep_link_forbidden",
            message: "deepLink must stay inside \(root).", field: "deepLink")
        // Compared as bytes: String comparison would treat canonically equivalent text as equal.
        guard link.utf8.starts(with: root.utf8) else { throw outside }
        let rest = Substring(link.utf8.dropFirst(root.utf8.count))
        if let next = rest.first, next != "/", next != "?", next != "#" { throw outside }
        let path = rest.prefix { $0 != "?" && $0 != "#" }
        if hidesTraversal(Array(path.utf8)) { throw outside }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false)
        where segment == ".." || segment == "." {
            throw outside
        }
    }

    /// True when a percent-encoded `.`, `/` or `\` (`%2e`, `%2f`, `%5c`, any case) appears at any depth of
    /// encoding. A router that decodes twice turns `%252e` into `%2e` and then into `.`, and `%25%32%65` the
    /// same way, so refusing `%2e` only as sent is not enough. Each round looks for the three escapes, then
    /// decodes every `%XX` once; the next round judges the result. A `.` can only come from a literal `.`
    /// (segments are checked on the raw path) or from `%2e` one round before, so no hidden one survives. Every
    /// round that decodes shortens the path, so the rounds end.
    static func hidesTraversal(_ path: [UInt8]) -> Bool {
        var current = path
        while true {
            var decoded: [UInt8] = []
            decoded.reserveCapacity(current.count)
            var index = 0
            var escapes = 0
            while index < current.count {
                if current[index] == UInt8(ascii: "%"), index + 2 < current.count,
                    let high = HexDigit.value(current[index + 1]), let low = HexDigit.value(current[index + 2])
                {
                    let byte = high << 4 | low
                    if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") {
                        return true
                    }
                    decoded.append(byte)
                    escapes += 1
                    index += 3
                } else {
                    decoded.append(current[index])
                    index += 1
                }
            }
            if escapes == 0 { return false }
            current = decoded
        }
    }

}
