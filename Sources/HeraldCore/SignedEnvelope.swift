/// The signature that lets the host app reject pushes that did not come from Herald.
///
/// Signed fields are every custom key the app reads, as strings: `title` and `body` (inside
/// `aps.alert` on APNs), `channel`, `miniAppId`, `deepLink`, `deliveryId`, `senderName`,
/// `imageUrl`, `isGroup` ("true"), the partner's data and, on FCM, the push's `category` (a data key there; on APNs
/// it sits in `aps`, which v1 leaves to v2). The canonical form is the RFC 8785
/// (JCS) serialisation of that string map: keys sorted by UTF-16 code units, no whitespace,
/// minimal escaping. `sig` = base64url(HMAC-SHA256(key[kid], canonical)), unpadded.
public enum SignedEnvelope {
    public static func canonicalBytes(_ fields: [(key: String, value: String)]) -> [UInt8] {
        // UTF-8 bytes sort as code points do, which is UTF-16's order too unless a key holds a character beyond
        // U+FFFF; for ASCII keys (every key Herald itself writes) the bytes are compared, without transcoding.
        let ascii = fields.allSatisfy { $0.key.utf8.allSatisfy { $0 < 0x80 } }
        let sorted =
            ascii
            ? fields.sorted { lhs, rhs in lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8) }
            : fields.sorted { lhs, rhs in lhs.key.utf16.lexicographicallyPrecedes(rhs.key.utf16) }
        // The object written member by member, as JSONWriter writes it.
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(fields.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 })
        for (position, field) in sorted.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(field.key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.writeString(field.value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// Signs canonical bytes with the active key. Implemented over OpenSSL in HeraldCrypto; a seam
/// so HeraldCore stays free of C libraries.
public protocol PayloadSigner: Sendable {
    var keyID: String { get }
    /// base64url without padding of HMAC-SHA256(activeKey, message): always 43 characters.
    func signature(for message: [UInt8]) -> String
}
