/// The one parser of upstream URLs (APNs and FCM origins, the OAuth2 token URI, the client's
/// `HTTP2ClientConfiguration.url`): `https://host[:port][/path]` or `http://host[:port][/path]`.
public struct UpstreamURL: Sendable, Equatable {
    public let isTLS: Bool
    /// Host name or IP literal, without IPv6 brackets.
    public let host: String
    public let port: Int
    /// `:authority`: host, and the port unless it is the scheme's default.
    public let authority: String
    /// The request target: starts with `/`, includes any query (`/` when the URL has no path).
    public let path: String
    /// `:scheme`.
    public var scheme: String { isTLS ? "https" : "http" }
    /// `scheme://authority`: what an `HTTP2Client` connects to.
    public var origin: String { "\(scheme)://\(authority)" }
    /// True when the URL names only an origin (no path beyond `/`, no query).
    public var isOrigin: Bool { path == "/" }

    /// Accepts `https://host[:port][/...]` and `http://host[:port][/...]`, printable ASCII only.
    public init(_ text: String) throws(HTTP2Error) {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTP2Error(.invalidConfiguration, "the URL must be printable ASCII without spaces")
        }
        let isTLS: Bool
        let rest: Substring
        if text.hasPrefix("https://") {
            isTLS = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            isTLS = false
            rest = text.dropFirst(7)
        } else {
            throw HTTP2Error(.invalidConfiguration, "the URL must start with https:// or http://")
        }
        let hostPort = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let target = rest[hostPort.endIndex...].prefix { $0 != "#" }
        path = target.isEmpty ? "/" : (target.hasPrefix("?") ? "/" + target : String(target))
        guard !hostPort.isEmpty, !hostPort.contains("@") else {
            throw HTTP2Error(.invalidConfiguration, "the URL has no usable host")
        }
        var host: Substring
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else {
                throw HTTP2Error(.invalidConfiguration, "the URL has an unterminated IPv6 literal")
            }
            host = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw HTTP2Error(.invalidConfiguration, "the URL has text after the IPv6 literal")
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            portText = hostPort[hostPort.index(after: colon)...]
        } else {
            host = hostPort
        }
        let defaultPort = isTLS ? 443 : 80
        var port = defaultPort
        if let portText {
            guard let value = Int(portText), value > 0, value < 65536 else {
                throw HTTP2Error(.invalidConfiguration, "the URL has an invalid port")
            }
            port = value
        }
        guard !host.isEmpty else {
            throw HTTP2Error(.invalidConfiguration, "the URL has no host")
        }
        self.isTLS = isTLS
        self.host = String(host)
        self.port = port
        let shownHost = host.contains(":") ? "[\(host)]" : String(host)
        authority = port == defaultPort ? shownHost : "\(shownHost):\(port)"
    }
}
