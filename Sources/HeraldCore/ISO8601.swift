import Foundation

/// ISO-8601 / RFC 3339 timestamps as partners send them (`2026-12-01T09:00:00Z`, with an optional
/// fraction and a `Z` or `±HH:MM` offset) and as Herald writes them (UTC, milliseconds; microseconds
/// where asked). Parsing is strict: a date that does not exist (`2026-02-30`) is an error, never rolled over.
public enum ISO8601 {
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = digits(b, 0, 4), let month = digits(b, 5, 2), let day = digits(b, 8, 2),
            let hour = digits(b, 11, 2), let minute = digits(b, 14, 2), let second = digits(b, 17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < b.count && b[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < b.count, (0x30...0x39).contains(b[index]) {
                fraction += Double(b[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start, index - start <= 9 else { return nil }
        }
        guard index < b.count else { return nil }
        var offset = 0
        if b[index] == UInt8(ascii: "Z") || b[index] == UInt8(ascii: "z") {
            index += 1
        } else if b[index] == UInt8(ascii: "+") || b[index] == UInt8(ascii: "-") {
            guard index + 6 == b.count, b[index + 3] == UInt8(ascii: ":"),
                let hours = digits(b, index + 1, 2), let minutes = digits(b, index + 4, 2), hours <= 23, minutes <= 59
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (b[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        } else {
            return nil
        }
        guard index == b.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: Double(timegm(&parts) - offset) + fraction)
    }

    /// UTC with milliseconds, as the API writes every time; `microseconds` for a record whose times
    /// are compared with each other (the simulator's `receivedAt`, bench/delivery_latency.py).
    public static func format(_ date: Date, microseconds: Bool = false) -> String {
        // Milliseconds truncated (never into the next second); microseconds to the nearest, since a
        // Double's own error on today's dates is a fraction of one.
        let perSecond: Int64 = microseconds ? 1_000_000 : 1000
        let rule: FloatingPointRoundingRule = microseconds ? .toNearestOrAwayFromZero : .down
        let units = Int64((date.timeIntervalSince1970 * Double(perSecond)).rounded(rule))
        // Floor division, so instants before 1970 keep a positive fraction.
        let seconds = units >= 0 ? units / perSecond : (units - perSecond + 1) / perSecond
        let fraction = units - seconds * perSecond
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(
            format: microseconds ? "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ" : "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), fraction)
    }

    private static func digits(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[start..<(start + count)] {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
