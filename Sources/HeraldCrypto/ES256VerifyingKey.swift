import COpenSSL

/// An ECDSA P-256 public key that checks JWS `ES256` signatures (raw 64-byte `r || s`).
///
/// Thread-safe: each check uses its own OpenSSL context.
public final class ES256VerifyingKey: Sendable {
    /// Bytes of `r` and of `s` in the raw signature.
    static let componentLength = 32

    private let key: EVPKey

    /// Reads a public key PEM (`BEGIN PUBLIC KEY`), or a private key PEM whose public half is used
    /// (the simulator is given the same `.p8` the worker signs with). Only P-256 is accepted.
    ///
    /// - Throws: `CryptoError.invalidPEM`, `CryptoError.wrongKeyType`.
    public init(pem: String) throws(CryptoError) {
        let key = try EVPKey.publicKey(pem: pem)
        try Self.checkCurve(key)
        self.key = key
    }

    init(checkedKey: EVPKey) {
        self.key = checkedKey
    }

    /// True when `signature` is a valid raw `r || s` ES256 signature of `message`. Anything else
    /// (a DER signature, a wrong length, another key's signature) is false.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 2 * Self.componentLength,
            let der = ECDSASignature.der(fromRaw: signature)
        else { return false }
        return key.verify(sha256: der, for: message)
    }

    static func checkCurve(_ key: EVPKey) throws(CryptoError) {
        guard key.baseID == EVP_PKEY_EC, key.curveName == "prime256v1" else { throw .wrongKeyType }
    }
}
