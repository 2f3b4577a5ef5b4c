import COpenSSL

/// Stable error codes of the asymmetric keys (`ES256SigningKey`, `RS256SigningKey` and their
/// verifying halves). Messages never quote key material.
extension CryptoError {
    /// The text is not a PEM private or public key OpenSSL can read (or it is passphrase-protected).
    public static let invalidPEM = CryptoError(code: "invalid_pem")
    /// The key is of the wrong algorithm or curve (ES256 needs EC P-256, RS256 needs RSA).
    public static let wrongKeyType = CryptoError(code: "wrong_key_type")
    /// An RSA key shorter than 2,048 bits.
    public static let weakKey = CryptoError(code: "weak_key")
    /// OpenSSL could not produce a signature.
    public static let signFailed = CryptoError(code: "sign_failed")
}

/// An OpenSSL `EVP_PKEY` owned by Swift, freed with the last reference.
///
/// `@unchecked Sendable` because the key is never mutated after it is loaded: OpenSSL 3 allows
/// any number of threads to sign or verify with one `EVP_PKEY` as long as each uses its own
/// `EVP_MD_CTX`, which `sign` and `verify` create per call.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// `EVP_PKEY_EC`, `EVP_PKEY_RSA`, ...
    var baseID: Int32 { EVP_PKEY_get_base_id(pointer) }

    /// Key size in bits (the modulus for RSA, the field for EC).
    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    /// The EC group's short name (`prime256v1` for P-256); nil for other key types.
    var curveName: String? {
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &buffer, buffer.count, &length) == 1 else {
            ERR_clear_error()
            return nil
        }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads a private key: PKCS#8 (`BEGIN PRIVATE KEY`) or the traditional EC/RSA forms.
    static func privateKey(pem: String) throws(CryptoError) -> EVPKey {
        guard let key = withMemoryBIO(pem, { PEM_read_bio_PrivateKey($0, nil, refusePassphrase, nil) }) else {
            ERR_clear_error()
            throw .invalidPEM
        }
        return EVPKey(taking: key)
    }

    /// Reads a public key (`BEGIN PUBLIC KEY`), or the public half of a private key PEM.
    static func publicKey(pem: String) throws(CryptoError) -> EVPKey {
        if let key = withMemoryBIO(pem, { PEM_read_bio_PUBKEY($0, nil, refusePassphrase, nil) }) {
            return EVPKey(taking: key)
        }
        // Not a public key: OpenSSL queued why; drop it so it cannot surface in unrelated TLS code.
        ERR_clear_error()
        return try privateKey(pem: pem).publicHalf()
    }

    /// A key holding only the public part, so a verifier never carries the private scalar.
    func publicHalf() throws(CryptoError) -> EVPKey {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else {
            ERR_clear_error()
            throw .invalidPEM
        }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        let key = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, Int(written))
        }
        guard written == length, let key else {
            ERR_clear_error()
            throw .invalidPEM
        }
        return EVPKey(taking: key)
    }

    /// A SHA-256 signature in OpenSSL's native form (DER for ECDSA, PKCS#1 v1.5 for RSA).
    func sign(sha256 message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .signFailed }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            ERR_clear_error()
            throw .signFailed
        }
        var length = 0
        var signature = [UInt8]()
        let ok = message.withNonNullBuffer { input -> Bool in
            guard EVP_DigestSign(context, nil, &length, input.baseAddress, input.count) == 1 else { return false }
            signature = [UInt8](repeating: 0, count: length)
            return signature.withUnsafeMutableBufferPointer { output in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count) == 1
            }
        }
        guard ok else {
            ERR_clear_error()
            throw .signFailed
        }
        signature.removeSubrange(length...)
        return signature
    }

    /// Checks a SHA-256 signature in OpenSSL's native form.
    func verify(sha256 signature: [UInt8], for message: [UInt8]) -> Bool {
        guard !signature.isEmpty, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = signature.withUnsafeBufferPointer { signatureBuffer in
            message.withNonNullBuffer { input in
                EVP_DigestVerify(
                    context, signatureBuffer.baseAddress, signatureBuffer.count,
                    input.baseAddress, input.count)
            }
        }
        if result != 1 { ERR_clear_error() }
        return result == 1
    }

    private static func withMemoryBIO(_ text: String, _ body: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count < Int32.max else { return nil }
        return bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }
}

/// Passphrase callback that refuses: without one OpenSSL would prompt on the terminal for an
/// encrypted key, hanging a service. Herald's keys are unencrypted files protected by permissions.
private func refusePassphrase(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int32, _ writing: Int32,
    _ context: UnsafeMutableRawPointer?
) -> Int32 {
    -1
}

extension Array where Element == UInt8 {
    /// Like `withUnsafeBufferPointer`, but an empty array still yields a non-null address
    /// (OpenSSL treats a null input pointer as an error even with length 0).
    func withNonNullBuffer<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if isEmpty {
            var placeholder: UInt8 = 0
            return withUnsafePointer(to: &placeholder) { body(UnsafeBufferPointer(start: $0, count: 0)) }
        }
        return withUnsafeBufferPointer(body)
    }
}
