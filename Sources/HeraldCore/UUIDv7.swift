import Foundation

/// Time-ordered UUIDs (RFC 9562 version 7): 48 bits of UNIX milliseconds, 12 bits of the
/// millisecond's fraction (RFC 9562 section 6.2, method 3), then random bits.
/// Push request ids carry their creation time, which names the audit partition they live in and is
/// the moment a latency is measured from (bench/delivery_latency.py), so it is kept to the
/// microsecond; delivery ids are time-ordered so the outbox's primary key grows at its right edge and
/// a claim's rows share a few of its pages (random ids would dirty one random leaf per claimed row).
public enum UUIDv7 {
    public static func make(at date: Date) -> UUID {
        var generator = SystemRandomNumberGenerator()
        // To the nearest microsecond, as Postgres keeps a timestamp (and PostgresTimestamp writes one).
        let micros = UInt64(max(0, (date.timeIntervalSince1970 * 1_000_000).rounded()))
        let millis = micros / 1000
        // The fraction in 4096ths of a millisecond, rounded down: `timestamp(of:)` rounds it up to
        // the same microsecond.
        let fraction = micros % 1000 * 4096 / 1000
        let random: UInt64 = generator.next()
        let random2: UInt64 = generator.next()
        // Bytes 0-5 the milliseconds (big-endian), then the version (7) and the fraction's 12 bits,
        // then the variant (0b10) and random bits. Built in place: the intake makes one per delivery.
        func ms(_ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: millis >> (8 * (5 - index))) }
        func rnd(_ source: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: source >> (8 * index)) }
        return UUID(
            uuid: (
                ms(0), ms(1), ms(2), ms(3), ms(4), ms(5),
                0x70 | UInt8(fraction >> 8), UInt8(truncatingIfNeeded: fraction),
                0x80 | (rnd(random, 0) & 0x3F), rnd(random, 1), rnd(random, 2), rnd(random, 3),
                rnd(random, 4), rnd(random, 5), rnd(random2, 6), rnd(random2, 7)
            ))
    }

    /// The smallest version-7 id of `date`'s millisecond: ids made then or later sort at or above it, so a range of
    /// ids is a range of time (the console's sums over recent requests, Queries/console.sql `partnerEngagement`).
    public static func lowest(at date: Date) -> UUID {
        let millis = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        func ms(_ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: millis >> (8 * (5 - index))) }
        return UUID(uuid: (ms(0), ms(1), ms(2), ms(3), ms(4), ms(5), 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0))
    }

    /// The creation time of an id `make(at:)` made, to the microsecond; nil for versions other than 7.
    /// Version-7 ids made elsewhere (sql/functions/uuid_v7.sql's `herald_uuid_v7`, or by this type
    /// before it kept the fraction) have random bits there: their time is right to the millisecond only.
    public static func timestamp(of id: UUID) -> Date? {
        guard let millis = millisecond(of: id) else { return nil }
        let u = id.uuid
        let fraction = UInt64(u.6 & 0x0F) << 8 | UInt64(u.7)
        // Random bits of 4092 and above would round up into the next millisecond.
        let micros = millis * 1000 + min(999, (fraction * 1000 + 4095) / 4096)
        return Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    }

    /// The whole milliseconds since 1970 a version-7 id was made in; nil for other versions. A lookup
    /// by an id from outside searches this millisecond (`PushStore.find`), so that ids whose fraction
    /// bits are random are found too.
    public static func millisecond(of id: UUID) -> UInt64? {
        let u = id.uuid
        guard u.6 >> 4 == 7 else { return nil }
        return [u.0, u.1, u.2, u.3, u.4, u.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
