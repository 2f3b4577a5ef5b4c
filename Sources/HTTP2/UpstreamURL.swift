/// The parts of `HTTP2ClientConfiguration.url` the client needs.
struct UpstreamURL: Sendable {
    let isTLS: Bool
    /// Host name or IP literal, without IPv6 brackets.
    let host: String
    let port: Int
    /// `:authority`: host, and the port unless it is the scheme's default.
    let authority: String
    /// `:scheme`.
    var scheme: String { isTLS ? "https" : "http" }

    /// Accepts `https://host[:port][/...]` and `http://host[:port][/...]`; a path is ignored (requests carry theirs).
    init(_ text: String) throws(HTTP2Error) {
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
