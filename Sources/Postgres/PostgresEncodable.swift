import Foundation
import HeraldCore

/// A Swift value that can be bound as a statement parameter. Parameters travel in Postgres' text
/// format, which every column type accepts; the statement's SQL casts where the type is ambiguous.
public protocol PostgresEncodable: Sendable {
    var postgresText: String { get }
    /// Appends the bytes of `postgresText` to `out`. The connection writes every parameter of a
    /// statement into one buffer that libpq reads in place (PostgresConnection's binder); the
    /// default goes through `postgresText`, and the types a worker binds per statement (ids,
    /// times, arrays of them) write their bytes directly.
    func appendPostgresText(to out: inout [UInt8])
    /// Appends this value as one element of an array literal, quoted and escaped (see Array's
    /// postgresText). The default goes through `postgresText`; types that can write their bytes
    /// directly do, because a worker binds arrays of hundreds of ids per statement.
    func appendQuotedArrayElement(to out: inout [UInt8])
}

extension PostgresEncodable {
    public func appendPostgresText(to out: inout [UInt8]) {
        out.append(contentsOf: postgresText.utf8)
    }

    public func appendQuotedArrayElement(to out: inout [UInt8]) {
        var text = postgresText
        text.withUTF8 { PostgresArrayLiteral.appendQuoted($0, to: &out) }
    }
}

/// The quoting of one-dimensional array literals, e.g. `{"a","b\"c"}`.
public enum PostgresArrayLiteral {
    /// `bytes` as one quoted element, `"` and `\` escaped.
    public static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Runs between the bytes that need escaping are appended whole: a rendered payload (JSON, quotes every few
        // bytes) appended byte by byte was a few percent of the intake's CPU.
        var runStart = 0
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "\\") {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            out.append(UInt8(ascii: "\\"))
            runStart = index
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        out.append(UInt8(ascii: "\""))
    }

    /// The elements of `array` between the braces, comma-separated. The binder sees a parameter
    /// as `any PostgresEncodable`, so Array's conformance runs unspecialised: element by element
    /// through witness tables and value-witness copies, with generic metadata looked up on the way
    /// (most of the worker's cost of binding a completion). The element types the worker binds in
    /// bulk take a loop compiled for their type; any other goes through the protocol.
    static func appendElements<Element: PostgresEncodable>(of array: [Element], to out: inout [UInt8]) {
        if typed(array, UUID.self, &out, { uuid, out in uuid.appendQuotedArrayElement(to: &out) }) { return }
        if typed(array, String.self, &out, { text, out in text.appendQuotedArrayElement(to: &out) }) { return }
        if typed(array, UUID?.self, &out, { uuid, out in uuid.appendQuotedArrayElement(to: &out) }) { return }
        if typed(array, Int?.self, &out, { number, out in number.appendQuotedArrayElement(to: &out) }) { return }
        if typed(array, Int.self, &out, { number, out in number.appendQuotedArrayElement(to: &out) }) { return }
        if typed(array, Date.self, &out, { date, out in date.appendQuotedArrayElement(to: &out) }) { return }
        var first = true
        for element in array {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            element.appendQuotedArrayElement(to: &out)
        }
    }

    /// When `Element` is `T`, appends every element with `append` (compiled for `T`) and returns true.
    private static func typed<Element, T>(
        _ array: [Element], _: T.Type, _ out: inout [UInt8],
        _ append: (T, inout [UInt8]) -> Void
    ) -> Bool {
        guard Element.self == T.self else { return false }
        array.withUnsafeBufferPointer { buffer in
            // Sound: Element is T (checked above), so the memory is already bound to T and the
            // rebinding changes nothing; it only lets this loop be compiled for T.
            buffer.withMemoryRebound(to: T.self) { elements in
                for index in elements.indices {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    append(elements[index], &out)
                }
            }
        }
        return true
    }
}

extension String: PostgresEncodable {
    public var postgresText: String { self }
}

/// A value whose text never holds `"` or `\`: as an array element it is quoted without escaping, its bytes
/// written straight into the literal.
public protocol PostgresUnescapedText: PostgresEncodable {}

extension PostgresUnescapedText {
    public func appendQuotedArrayElement(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendPostgresText(to: &out)
        out.append(UInt8(ascii: "\""))
    }
}

/// Digits need no escaping.
extension Int: PostgresUnescapedText {
    public var postgresText: String { String(self) }
}

extension Int64: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int32: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Double: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Bool: PostgresEncodable {
    public var postgresText: String { self ? "t" : "f" }
}

/// A UUID needs no escaping: its 36 characters straight into the literal.
extension UUID: PostgresUnescapedText {
    public var postgresText: String { UUIDText.string(self) }

    public func appendPostgresText(to out: inout [UInt8]) { UUIDText.append(self, to: &out) }
}

/// A timestamp needs no escaping: its text straight into the literal.
extension Date: PostgresUnescapedText {
    /// Microsecond precision as an explicit UTC timestamp literal.
    public var postgresText: String { PostgresTimestamp.format(self) }

    public func appendPostgresText(to out: inout [UInt8]) { PostgresTimestamp.append(self, to: &out) }
}

extension Array: PostgresEncodable where Element: PostgresEncodable {
    /// A one-dimensional array literal with every element quoted, e.g. `{"a","b\"c"}`.
    public var postgresText: String {
        var out: [UInt8] = []
        out.reserveCapacity(2 + count * 40)
        appendPostgresText(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func appendPostgresText(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        PostgresArrayLiteral.appendElements(of: self, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    /// Never called for nil: the binder sends SQL NULL for an absent value.
    public var postgresText: String { self?.postgresText ?? "" }

    /// Never called for nil either (see postgresText).
    public func appendPostgresText(to out: inout [UInt8]) { self?.appendPostgresText(to: &out) }

    /// nil is an array's NULL element (a parameter that is nil is sent as SQL NULL by the binder).
    public func appendQuotedArrayElement(to out: inout [UInt8]) {
        if let self { self.appendQuotedArrayElement(to: &out) } else { out.append(contentsOf: "NULL".utf8) }
    }
}

/// Text encodings of timestamps, shared by parameters and row decoding.
public enum PostgresTimestamp {
    /// `2026-12-01 18:12:14.123456+00`, to the microsecond, in UTC. Written digit by digit rather than
    /// with Foundation's formatter: the intake's writer binds four timestamps per push, the worker
    /// one per retried row.
    public static func format(_ date: Date) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(29)
        append(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The text of `format`, appended to a byte buffer.
    public static func append(_ date: Date, to out: inout [UInt8]) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var daySeconds = seconds % 86_400
        if daySeconds < 0 { daySeconds += 86_400; days -= 1 }
        // Civil date of a day count since 1970-01-01 (proleptic Gregorian, eras of 400 years).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        digits(year, 4, &out); out.append(UInt8(ascii: "-"))
        digits(month, 2, &out); out.append(UInt8(ascii: "-"))
        digits(day, 2, &out); out.append(UInt8(ascii: " "))
        digits(daySeconds / 3_600, 2, &out); out.append(UInt8(ascii: ":"))
        digits(daySeconds / 60 % 60, 2, &out); out.append(UInt8(ascii: ":"))
        digits(daySeconds % 60, 2, &out); out.append(UInt8(ascii: "."))
        digits(fraction, 6, &out)
        out.append(contentsOf: "+00".utf8)
    }

    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Parses the server's `timestamptz` output with `TimeZone=UTC` (set on every connection):
    /// `2026-11-29 13:30:51.123456+00`.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }
}

extension PostgresTimestamp {
    /// `parse(_:)` on a value's bytes: `2026-11-29 13:30:51.123456+00` (fraction and offset minutes
    /// optional), the day counted with the proleptic Gregorian calendar (the inverse of `append`)
    /// instead of libc's timegm.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count >= 19 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for i in from..<(from + count) {
                let digit = bytes[i] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == UInt8(ascii: "-"), let month = number(5, 2),
            bytes[7] == UInt8(ascii: "-"), let day = number(8, 2), let hour = number(11, 2),
            bytes[13] == UInt8(ascii: ":"), let minute = number(14, 2), bytes[16] == UInt8(ascii: ":"),
            let second = number(17, 2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var index = 19
        var micros = 0
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                if digits < 6 { micros = micros * 10 + Int(bytes[index] - UInt8(ascii: "0")); digits += 1 }
                index += 1
            }
            while digits < 6 { micros *= 10; digits += 1 }
        }
        var offsetSeconds = 0
        if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
            let sign = bytes[index] == UInt8(ascii: "+") ? 1 : -1
            let hours = number(index + 1, 2) ?? 0
            let minutes =
                index + 3 < bytes.count && bytes[index + 3] == UInt8(ascii: ":") ? number(index + 4, 2) ?? 0 : 0
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        }
        // Days since 1970-01-01 of a civil date (eras of 400 years, years starting in March).
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let epoch = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(epoch - offsetSeconds) + Double(micros) / 1_000_000)
    }
}
