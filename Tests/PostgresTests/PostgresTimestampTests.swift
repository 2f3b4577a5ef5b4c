import Foundation
import Postgres
import Testing

@Suite("Postgres timestamp text")
struct PostgresTimestampTests {
    /// What the server's `timestamptz` input reads, the slow way: gmtime and a format string.
    static func reference(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let seconds = Int64((micros / 1_000_000).rounded(.down))
        let fraction = Int64(micros) - seconds * 1_000_000
        var parts = tm()
        var t = time_t(seconds)
        gmtime_r(&t, &parts)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min),
            Int(parts.tm_sec), fraction)
    }

    @Test("timestamps are written digit by digit to the microsecond, across eras and leap days, as gmtime has them")
    func sameText() {
        var dates: [Date] = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.000001),
            Date(timeIntervalSince1970: 951_782_400.5),  // 2000-02-29
            Date(timeIntervalSince1970: 4_107_542_399.999999),  // 2100-02-28 23:59:59
            Date(timeIntervalSince1970: -2_208_988_800),  // 1900-01-01
            Date(),
        ]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let micros = Int64(seed >> 12) % 8_000_000_000_000_000 - 2_000_000_000_000_000
            dates.append(Date(timeIntervalSince1970: Double(micros) / 1_000_000))
        }
        for date in dates {
            #expect(PostgresTimestamp.format(date) == Self.reference(date), "\(date.timeIntervalSince1970)")
            #expect(
                PostgresTimestamp.parse(PostgresTimestamp.format(date))
                    .map { abs($0.timeIntervalSince(date)) < 0.000_01 } == true, "\(date.timeIntervalSince1970)")
            #expect([date].postgresText == "{\"" + Self.reference(date) + "\"}")
        }
    }
}
