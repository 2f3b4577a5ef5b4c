import COpenSSL

/// An RSA private key that signs with RSASSA-PKCS1-v1_5 and SHA-256 (JWS `RS256`), as Google's
/// service-account OAuth2 assertions need.
///
/// Loaded once and shared: signing is thread-safe (each call uses its own OpenSSL context).
public final class RS256SigningKey: Sendable {
    /// Shorter moduli are refused (RFC 7518 section 3.3 requires at least 2,048 bits).
    static let minimumBits = 2048

    private let key: EVPKey
    /// The public half, for checking what this key signed.
    public let verifyingKey: RS256VerifyingKey

    /// Reads an RSA private key PEM: PKCS#8 (`BEGIN PRIVATE KEY`, as in a service-account file's
    /// `private_key`) or PKCS#1 (`BEGIN RSA PRIVATE KEY`).
    ///
    /// - Throws: `CryptoError.invalidPEM`, `CryptoError.wrongKeyType` (not RSA),
    ///   `CryptoError.weakKey` (under 2,048 bits).
    public init(pem: String) throws(CryptoError) {
        let key = try EVPKey.privateKey(pem: pem)
        try RS256VerifyingKey.checkKey(key)
        self.key = key
        self.verifyingKey = RS256VerifyingKey(checkedKey: try key.publicHalf())
    }

    /// Signs `message` and returns the PKCS#1 v1.5 signature (as long as the modulus).
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try key.sign(sha256: message)
    }
}
