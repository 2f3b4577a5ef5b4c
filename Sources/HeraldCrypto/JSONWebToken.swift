import HeraldCore

/// A JSON Web Token in JWS compact serialization (RFC 7515 section 7.1):
/// `base64url(header) "." base64url(claims) "." base64url(signature)`.
///
/// Encoding signs with any algorithm (the caller passes the key's `sign`); decoding only splits
/// and parses, so the verifier checks `signature` against `signingInput` with the key and
/// algorithm it expects (never the one the header claims).
public struct JSONWebToken: Sendable {
    /// The JOSE header, e.g. `{"alg":"ES256","kid":"..."}`.
    public let header: JSONValue
    /// The claims set, e.g. `{"iss":"...","iat":...}`.
    public let claims: JSONValue
    /// The ASCII bytes `base64url(header) "." base64url(claims)` exactly as they appeared in the
    /// token: what the signature covers.
    public let signingInput: [UInt8]
    /// The decoded signature (raw `r || s` for ES256, PKCS#1 v1.5 for RS256).
    public let signature: [UInt8]

    /// Writes `header` and `claims` as compact JSON, signs the signing input with `sign` and
    /// returns the token. Example: `JSONWebToken.encode(header: h, claims: c, sign: key.sign)`.
    public static func encode(
        header: JSONValue, claims: JSONValue,
        sign: (_ signingInput: [UInt8]) throws(CryptoError) -> [UInt8]
    ) throws(CryptoError) -> String {
        var token = Base64URL.encode(JSONWriter.bytes(header))
        token.append(".")
        token.append(Base64URL.encode(JSONWriter.bytes(claims)))
        let signature = try sign(Array(token.utf8))
        token.append(".")
        token.append(Base64URL.encode(signature))
        return token
    }

    /// Splits and parses a compact token. nil unless it has exactly three parts of unpadded
    /// base64url, a non-empty signature, and a header and claims that are JSON objects.
    public static func decode(_ token: String) -> JSONWebToken? {
        let bytes = Array(token.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy(isBase64URL) else { return nil }
        guard let headerBytes = decodePart(parts[0]), let claimsBytes = decodePart(parts[1]),
            let signature = decodePart(parts[2]), !signature.isEmpty,
            let header = try? JSONParser.parse(headerBytes), header.objectMembers != nil,
            let claims = try? JSONParser.parse(claimsBytes), claims.objectMembers != nil
        else { return nil }
        let signingInput = Array(bytes[..<parts[1].endIndex])
        return JSONWebToken(header: header, claims: claims, signingInput: signingInput, signature: signature)
    }

    /// The header's `alg`, if it is a string.
    public var algorithm: String? { header["alg"]?.stringValue }

    private init(header: JSONValue, claims: JSONValue, signingInput: [UInt8], signature: [UInt8]) {
        self.header = header
        self.claims = claims
        self.signingInput = signingInput
        self.signature = signature
    }

    /// Only `A-Z a-z 0-9 - _`, and a length base64 can produce (not 1 mod 4).
    private static func isBase64URL(_ part: ArraySlice<UInt8>) -> Bool {
        guard !part.isEmpty, part.count % 4 != 1 else { return false }
        return part.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    private static func decodePart(_ part: ArraySlice<UInt8>) -> [UInt8]? {
        Base64URL.decode(String(decoding: part, as: UTF8.self))
    }
}
