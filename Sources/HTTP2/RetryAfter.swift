import Foundation

/// Parses `Retry-After` (RFC 9110 section 10.2.3): delay-seconds or an IMF-fixdate HTTP-date.
/// Shared by the APNs and FCM clients, which both honour it.
public enum RetryAfter {
    /// The delay `value` asks for, measured from `now`; nil when absent or unparseable. A date in
    /// the past gives zero.
    public static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value else { return nil }
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // More digits than Int64 holds is still a request to wait a very long time; callers cap it.
            return .seconds(Int64(text) ?? Int64.max)
        }
        guard let date = httpDate(text) else { return nil }
        let delay = date.timeIntervalSince(now)
        return delay > 0 ? .milliseconds(Int64((delay * 1000).rounded(.up))) : .zero
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, computed directly (no formatter: they are not cheap or
    /// reliably thread-safe on Linux).
    public static func httpDate(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT",
            let day = Int(fields[1]), (1...31).contains(day),
            let monthIndex = months.firstIndex(of: String(fields[2])),
            let year = Int(fields[3]), (1970...9999).contains(year)
        else { return nil }
        let clock = fields[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
