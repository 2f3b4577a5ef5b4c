import COpenSSL

/// Hashes and MACs from OpenSSL's one-shot functions.
public enum Digest {
    /// SHA-256 of `bytes`.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                _ = SHA256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return out
    }

    public static func sha256Hex(_ text: String) -> String { hex(sha256(Array(text.utf8))) }

    /// HMAC-SHA256 of `message` under `key`.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        key.withUnsafeBufferPointer { keyBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                out.withUnsafeMutableBufferPointer { output in
                    _ = HMAC(
                        EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                        messageBuffer.baseAddress, messageBuffer.count, output.baseAddress, &length)
                }
            }
        }
        return out
    }

    /// Compares without an early exit, not even on length, so timing reveals neither where two secrets
    /// differ nor how long the expected one is: both sides are hashed (SHA-256, so the loop always covers 32
    /// bytes) and the lengths are folded into the same difference.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        let left = sha256(lhs)
        let right = sha256(rhs)
        var difference = UInt64(truncatingIfNeeded: lhs.count ^ rhs.count)
        for index in 0..<32 { difference |= UInt64(left[index] ^ right[index]) }
        return difference == 0
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
