import Synchronization

/// The identifiers the simulator hands out (`apns-id`, `apns-unique-id`, FCM message names) and
/// the check APNs applies to a client's `apns-id`.
///
/// They need to be unique, not secret, and they are made on every request, so they come from a
/// SplitMix64 sequence over an atomic counter (seeded from the system generator once) instead of
/// a `getrandom` system call each: one String allocation per id and no lock.
final class Identifiers: Sendable {
    private let counter: Atomic<UInt64>
    private let seed: UInt64

    init() {
        var generator = SystemRandomNumberGenerator()
        seed = generator.next()
        counter = Atomic(generator.next())
    }

    /// The next 64 pseudo-random bits (SplitMix64 finaliser over a Weyl sequence).
    func next() -> UInt64 {
        var z = counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue ^ seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A random (version 4) UUID in lowercase canonical form, as APNs writes `apns-id`.
    func uuid() -> String {
        var high = next()
        var low = next()
        high = (high & ~0xF000) | 0x4000  // version 4 in bits 12-15 of time_hi
        low = (low & ~(0xC000_0000_0000_0000 as UInt64)) | 0x8000_0000_0000_0000  // RFC 4122 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var position = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    buffer[position] = Self.hexDigit(UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF)
                    position += 1
                }
            }
            func dash() { buffer[position] = UInt8(ascii: "-"); position += 1 }
            put(high >> 32, nibbles: 8); dash()
            put(high >> 16, nibbles: 4); dash()
            put(high, nibbles: 4); dash()
            put(low >> 48, nibbles: 4); dash()
            put(low, nibbles: 12)
            return 36
        }
    }

    /// `count` random bytes as lowercase hex.
    func hex(bytes count: Int) -> String {
        String(unsafeUninitializedCapacity: count * 2) { buffer in
            var position = 0
            var word = next()
            for index in 0..<count {
                if index > 0 && index % 8 == 0 { word = next() }
                let byte = UInt8(truncatingIfNeeded: word >> UInt64((index % 8) * 8))
                buffer[position] = Self.hexDigit(byte >> 4)
                buffer[position + 1] = Self.hexDigit(byte & 0xF)
                position += 2
            }
            return count * 2
        }
    }

    /// The lowercase hex digit of a nibble (arithmetic, not a table: no global to initialise).
    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x57 + nibble
    }

    /// True for a lowercase canonical UUID: 8-4-4-4-12 lowercase hex digits.
    static func isLowercaseUUID(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            switch count {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                guard (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) else { return false }
            }
            count += 1
            if count > 36 { return false }
        }
        return count == 36
    }

    static let maxDeviceTokenBytes = 1024

    /// True for hexadecimal digits (either case) of a whole number of bytes, at most `maxDeviceTokenBytes`: the
    /// shape of an APNs device token. Today's tokens are 32 bytes, but Apple documents that their length varies
    /// and must not be hard-coded, so any length is taken; the bound only keeps a path from being a megabyte.
    static func isDeviceToken(_ token: Substring) -> Bool {
        // A slice of a native string is contiguous UTF-8: scan the bytes without the view's indexing.
        if let result = token.utf8.withContiguousStorageIfAvailable(isDeviceTokenBytes) { return result }
        return Array(token.utf8).withUnsafeBufferPointer(isDeviceTokenBytes)
    }

    private static func isDeviceTokenBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 2, bytes.count % 2 == 0, bytes.count <= 2 * maxDeviceTokenBytes else { return false }
        for byte in bytes {
            guard (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
            else { return false }
        }
        return true
    }
}
