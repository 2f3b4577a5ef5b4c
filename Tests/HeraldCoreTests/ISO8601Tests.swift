import Foundation
import HeraldCore
import Testing

@Suite struct ISO8601Tests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1.5, "1970-01-01T00:00:01.500Z"),
        (1_780_272_000, "2026-06-01T00:00:00.000Z"),
        (1_780_272_000.123, "2026-06-01T00:00:00.123Z"),
        (1_780_272_000.9999, "2026-06-01T00:00:00.999Z"),  // truncated, never rounded into the next second
        (951_782_400, "2000-02-29T00:00:00.000Z"),
        (4_102_444_799.001, "2099-12-31T23:59:59.001Z"),
    ])
    func formatsUTCWithMilliseconds(_ seconds: Double, _ expected: String) {
        #expect(ISO8601.format(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test(arguments: [
        (1_780_272_000.123456, "2026-06-01T00:00:00.123456Z"),
        (1_780_272_000.000001, "2026-06-01T00:00:00.000001Z"),
        (1_780_272_000.9999996, "2026-06-01T00:00:01.000000Z"),
        (-0.5, "1969-12-31T23:59:59.500000Z"),
    ])
    func formatsUTCWithMicroseconds(_ seconds: Double, _ expected: String) throws {
        let text = ISO8601.format(Date(timeIntervalSince1970: seconds), microseconds: true)
        #expect(text == expected)
        let parsed = try #require(ISO8601.parse(text))
        #expect(abs(parsed.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test func formatsInstantsBeforeTheEpoch() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test(arguments: [
        ("2026-06-01T00:00:00Z", 1_780_272_000.0),
        ("2026-06-01T00:00:00.250Z", 1_780_272_000.25),
        ("2026-06-01T02:00:00+02:00", 1_780_272_000),
        ("2026-05-31T19:00:00-05:00", 1_780_272_000),
    ])
    func parsesTimestampsWithZones(_ text: String, _ seconds: Double) throws {
        let date = try #require(ISO8601.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.0005)
    }

    @Test(arguments: [
        "", "2026-06-01", "2026-06-01T00:00:00", "yesterday", "2026-06-01T25:00:00Z", "2026-13-01T00:00:00Z",
    ])
    func refusesOtherText(_ text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    /// Dates that do not exist must be refused, not rolled over into the next month: a partner's
    /// typo in sendAt would otherwise schedule a push on a day it never asked for.
    @Test(arguments: ["2026-06-31T00:00:00Z", "2026-02-29T09:00:00Z", "2026-04-31T12:00:00+02:00"])
    func refusesImpossibleCalendarDates(_ text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    @Test func formatThenParseRoundTrips() throws {
        for millis in stride(from: Int64(1_780_272_000_000), to: 1_780_272_000_000 + 3_000, by: 37) {
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            let parsed = try #require(ISO8601.parse(ISO8601.format(date)))
            #expect(abs(parsed.timeIntervalSince(date)) < 0.0005)
        }
    }
}
