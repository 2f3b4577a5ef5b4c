/// Delivery webhooks' secret and signature. A partner verifies an event by computing HMAC-SHA256 over
/// `"<t>.<body>"` with its secret (the whole `whsec_...` string, as UTF-8) and accepting it when any `v1` equals
/// that, and rejects a `t` too far from its clock (a replayed capture). While a rotated secret's overlap lasts the
/// header carries two `v1`, the new secret's first, so a receiver holding either secret accepts the event.
public enum WebhookSignature {
    /// The header that carries the signature.
    public static let headerName = "Herald-Signature"
    /// The header that carries the event's id, the partner's dedupe key.
    public static let eventIDHeaderName = "Herald-Event-Id"

    /// A new secret: `whsec_` + 64 lowercase hex digits (256 random bits). Shown once to the admin.
    public static func generateSecret() throws(CryptoError) -> String {
        "whsec_" + Digest.hex(try SecureRandom.bytes(32))
    }

    /// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, then `,v1=` with `previousSecret` when one is
    /// still valid (Stripe's form of an overlap).
    public static func header(secret: String, previousSecret: String? = nil, timestamp: Int, body: [UInt8]) -> String {
        var header = "t=\(timestamp)"
        for secret in [secret, previousSecret].compactMap({ $0 }) {
            header += ",v1=" + Digest.hex(signature(secret: secret, timestamp: timestamp, body: body))
        }
        return header
    }

    static func signature(secret: String, timestamp: Int, body: [UInt8]) -> [UInt8] {
        Digest.hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + body)
    }

    /// True when `header` is a signature of `body` with `secret` made within `tolerance` seconds of `now`
    /// (what a receiver does; Herald's tests and the demo's receiver use it).
    public static func verify(header: String, secret: String, body: [UInt8], now: Int, tolerance: Int = 300) -> Bool {
        var timestamp: Int?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int(pair[1]) }
            if pair[0] == "v1" { signatures.append(String(pair[1])) }
        }
        guard let timestamp, abs(now - timestamp) <= tolerance else { return false }
        let expected = Array(Digest.hex(signature(secret: secret, timestamp: timestamp, body: body)).utf8)
        return signatures.contains { Digest.constantTimeEquals(Array($0.utf8), expected) }
    }
}
