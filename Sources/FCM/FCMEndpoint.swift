/// An absolute `http(s)` URL split into the origin an `HTTP2Client` connects to and the path a
/// request carries (`https://oauth2.googleapis.com/token` → origin + `/token`).
struct FCMEndpoint: Sendable, Equatable {
    /// `scheme://host[:port]`.
    let origin: String
    /// Starts with `/`; includes any query.
    let path: String

    init?(url: String) {
        let schemeEnd: String.Index
        if url.hasPrefix("https://") {
            schemeEnd = url.index(url.startIndex, offsetBy: 8)
        } else if url.hasPrefix("http://") {
            schemeEnd = url.index(url.startIndex, offsetBy: 7)
        } else {
            return nil
        }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        let rest = url[schemeEnd...]
        let pathStart = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<pathStart]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        origin = String(url[..<pathStart])
        let path = rest[pathStart...]
        self.path = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path))
    }
}
