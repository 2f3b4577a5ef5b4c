/// A partner's deep links must stay inside its own namespace: `<scheme>://miniapp/<miniAppId>`
/// or something below it. The check is on the raw string, before any decoding, so encoded
/// traversal (`%2e%2e`) and `..` segments are refused outright.
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
        let lowered = path.lowercased()
        if lowered.contains("%2e") || lowered.contains("%2f") || lowered.contains("%5c") { throw outside }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) where segment == ".." || segment == "." {
            throw outside
        }
    }
}
