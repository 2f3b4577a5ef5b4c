import COpenSSL

/// An ECDSA P-256 private key that signs with SHA-256 (JWS `ES256`), as APNs provider tokens need.
///
/// Loaded once and shared: signing is thread-safe (each call uses its own OpenSSL context).
public final class ES256SigningKey: Sendable {
    private let key: EVPKey
    /// The public half, for checking what this key signed.
    public let verifyingKey: ES256VerifyingKey

    /// Reads a PKCS#8 private key PEM (`-----BEGIN PRIVATE KEY-----`, Apple's `.p8` file); the
    /// traditional `BEGIN EC PRIVATE KEY` form is accepted too. Only the P-256 curve is allowed.
    ///
    /// - Throws: `CryptoError.invalidPEM` (unreadable or encrypted), `CryptoError.wrongKeyType`
    ///   (not EC P-256).
    public init(pem: String) throws(CryptoError) {
        let key = try EVPKey.privateKey(pem: pem)
        try ES256VerifyingKey.checkCurve(key)
        self.key = key
        self.verifyingKey = ES256VerifyingKey(checkedKey: try key.publicHalf())
    }

    /// Signs `message` (SHA-256, ECDSA) and returns the raw 64-byte `r || s` JWS form.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let der = try key.sign(sha256: message)
        guard let raw = ECDSASignature.raw(fromDER: der, componentLength: ES256VerifyingKey.componentLength) else {
            throw .signFailed
        }
        return raw
    }
}
