import HTTPServer
import ServiceSupport

/// The proxies allowed to say who the client is (`HERALD_TRUSTED_PROXIES`), and so the client address of a request:
/// the one the audit trail, the console's sign-in limit and log lines name.
///
/// `X-Forwarded-For` is a list each proxy appends its peer to, so only its right end is written by proxies we run;
/// anything further left is whatever the client sent. The client is therefore the peer, unless the peer is a
/// trusted proxy: then the right-most address of the list that is not a trusted proxy (the peer of the outermost
/// proxy we run). A list that holds only trusted proxies names its left-most one; an entry that is not an address
/// ends the walk at the last address before it, since nothing left of it can be believed.
struct TrustedProxies: Sendable {
    let networks: [IPNetwork]

    /// `HERALD_TRUSTED_PROXIES`: addresses or CIDR blocks separated by commas; empty trusts no one.
    static func parse(_ text: String) -> [IPNetwork]? {
        var networks: [IPNetwork] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let network = IPNetwork(part) else { return nil }
            networks.append(network)
        }
        return networks
    }

    func trusts(_ address: IPAddress) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// The client address of `request` as text (the audit trail's `client`, log lines, the sign-in limit's key).
    func client(of request: HTTPRequest) -> String? {
        client(peer: request.peer, forwardedFor: request.header("x-forwarded-for"))?.description
    }

    /// The request's client address; nil when the server does not know its peer.
    func client(peer: IPAddress?, forwardedFor: String?) -> IPAddress? {
        guard var client = peer?.unmapped else { return nil }
        guard trusts(client), let forwardedFor else { return client }
        for entry in forwardedFor.split(separator: ",").reversed() {
            guard let address = IPAddress(entry)?.unmapped else { break }
            client = address
            if !trusts(address) { break }
        }
        return client
    }
}

extension IntakeConfiguration {
    /// `HERALD_TRUSTED_PROXIES`, or the default (no one) when unset.
    static func trustedProxies(_ reader: EnvironmentReader, default fallback: [IPNetwork])
        throws(ConfigurationError) -> [IPNetwork]
    {
        guard let text = reader.optional(Settings.trustedProxies) else { return fallback }
        guard let networks = TrustedProxies.parse(text) else {
            throw ConfigurationError(
                variable: Settings.trustedProxies.name,
                problem: "must be IP addresses or CIDR blocks separated by commas")
        }
        return networks
    }
}
