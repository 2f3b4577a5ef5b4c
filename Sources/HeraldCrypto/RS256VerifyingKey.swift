import COpenSSL

/// An RSA public key that checks JWS `RS256` signatures (RSASSA-PKCS1-v1_5 with SHA-256).
///
/// Thread-safe: each check uses its own OpenSSL context.
public final class RS256VerifyingKey: Sendable {
    private let key: EVPKey

    /// Reads a public key PEM (`BEGIN PUBLIC KEY`), or a private key PEM whose public half is used.
    ///
    /// - Throws: `CryptoError.invalidPEM`, `CryptoError.wrongKeyType`, `CryptoError.weakKey`.
    public init(pem: String) throws(CryptoError) {
        let key = try EVPKey.publicKey(pem: pem)
        try Self.checkKey(key)
        self.key = key
    }

    init(checkedKey: EVPKey) {
        self.key = checkedKey
    }

    /// True when `signature` is a valid RS256 signature of `message` under this key.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.verify(sha256: signature, for: message)
    }

    static func checkKey(_ key: EVPKey) throws(CryptoError) {
        guard key.baseID == EVP_PKEY_RSA else { throw .wrongKeyType }
        guard key.bits >= RS256SigningKey.minimumBits else { throw .weakKey }
    }
}
