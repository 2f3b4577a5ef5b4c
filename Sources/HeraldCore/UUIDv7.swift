import Foundation

/// Time-ordered UUIDs (RFC 9562 version 7): 48 bits of UNIX milliseconds, then random bits.
/// Push request ids carry their creation time, which names the audit partition they live in.
public enum UUIDv7 {
    public static func make(at date: Date) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let millis = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8((millis >> (8 * (5 - UInt64(index)))) & 0xFF) }
        let random: UInt64 = generator.next()
        let random2: UInt64 = generator.next()
        for index in 6..<16 {
            let source = index < 14 ? random : random2
            bytes[index] = UInt8((source >> (8 * UInt64(index % 8))) & 0xFF)
        }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// The creation time of a version-7 UUID, to the millisecond; nil for other versions.
    public static func timestamp(of id: UUID) -> Date? {
        let u = id.uuid
        guard u.6 >> 4 == 7 else { return nil }
        let parts = [u.0, u.1, u.2, u.3, u.4, u.5]
        let millis = parts.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Date(timeIntervalSince1970: Double(millis) / 1000)
    }
}
