import COpenSSL

public struct CryptoError: Error, Sendable, Equatable {
    public let code: String
}

/// Random bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw CryptoError(code: "random_failed") }
        return out
    }
}

/// Partner API keys: `mp_` + 32 lowercase hex digits (128 random bits). Only the SHA-256 of a key
/// is stored; a fast hash is enough because the key itself carries 128 bits of entropy.
public enum PartnerAPIKey {
    public static func generate() throws(CryptoError) -> String {
        "mp_" + Digest.hex(try SecureRandom.bytes(16))
    }

    /// True for strings of the key's shape, checked before any lookup.
    public static func isWellFormed(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 35, key.hasPrefix("mp_") else { return false }
        return bytes[3...].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    public static func hash(_ key: String) -> String { Digest.sha256Hex(key) }

}
