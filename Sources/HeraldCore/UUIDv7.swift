import Foundation

/// Time-ordered UUIDs (RFC 9562 version 7): 48 bits of UNIX milliseconds, then random bits.
/// Push request ids carry their creation time, which names the audit partition they live in;
/// delivery ids are time-ordered so the outbox's primary key grows at its right edge and a claim's
/// rows share a few of its pages (docs/performance.md, "Delivery ids in time order").
public enum UUIDv7 {
    public static func make(at date: Date) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let millis = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let random: UInt64 = generator.next()
        let random2: UInt64 = generator.next()
        // Bytes 0-5 the milliseconds (big-endian), 6-15 random with the version (7) and variant
        // (0b10) bits set. Built in place: the intake makes one per delivery.
        func ms(_ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: millis >> (8 * (5 - index))) }
        func rnd(_ source: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: source >> (8 * index)) }
        return UUID(uuid: (ms(0), ms(1), ms(2), ms(3), ms(4), ms(5),
                           0x70 | (rnd(random, 6) & 0x0F), rnd(random, 7),
                           0x80 | (rnd(random, 0) & 0x3F), rnd(random, 1), rnd(random, 2), rnd(random, 3),
                           rnd(random, 4), rnd(random, 5), rnd(random2, 6), rnd(random2, 7)))
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
