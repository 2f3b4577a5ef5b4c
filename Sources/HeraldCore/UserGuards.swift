import Foundation

/// A user's quiet hours: local times of day, `start` to `end`, spanning midnight when `end` comes first
/// (22:00 to 08:00). Partner pushes that are not time-sensitive wait until they end
/// (Sources/Store/Migrations/functions/user_guards.sql).
public struct QuietHours: Sendable, Equatable {
    /// Minutes after local midnight, 0 to 1439.
    public let start: Int
    public let end: Int

    public init?(start: Int, end: Int) {
        guard (0..<1440).contains(start), (0..<1440).contains(end), start != end else { return nil }
        self.start = start
        self.end = end
    }

    /// `HH:MM` (24-hour, two digits each) as minutes after midnight, nil for anything else.
    public static func minutes(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
            bytes.enumerated().allSatisfy({ $0.offset == 2 || digits.contains($0.element) })
        else { return nil }
        let digit = { (index: Int) in Int(bytes[index] - UInt8(ascii: "0")) }
        let hours = digit(0) * 10 + digit(1), minutes = digit(3) * 10 + digit(4)
        guard hours < 24, minutes < 60 else { return nil }
        return hours * 60 + minutes
    }

    /// `minutes` written back as `HH:MM`.
    public static func text(_ minutes: Int) -> String {
        let hours = minutes / 60, rest = minutes % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }

    /// The JSON form the host sends and reads back: `{"start":"22:00","end":"08:00"}`.
    public var json: JSONValue {
        .object([("start", .string(Self.text(start))), ("end", .string(Self.text(end)))])
    }
}

/// The host's guards for one user across partners, as `PUT /api/internal/users/{userId}` sets them: the user's
/// time zone (an IANA name; whether Postgres knows it is checked where it is stored) and quiet hours in it
/// (without a time zone, UTC). A PUT is the whole user: a field left out clears it.
public struct UserGuards: Sendable, Equatable {
    public var timeZone: String?
    public var quietHours: QuietHours?

    public init(timeZone: String? = nil, quietHours: QuietHours? = nil) {
        self.timeZone = timeZone
        self.quietHours = quietHours
    }

    /// The fields of a user body that carry the guards.
    public static let fields: Set<String> = ["timeZone", "quietHours"]

    /// An IANA time zone name's shape: `Area/Location` words, `UTC` and the like; at most 64 characters.
    static func isTimeZoneShaped(_ text: String) -> Bool {
        guard (1...64).contains(text.utf8.count) else { return false }
        return text.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "/_+-".utf8.contains(byte)
        }
    }

    /// The 400 for a time zone that is not shaped like an IANA name.
    public static func invalidTimeZone(field: String = "timeZone") -> HeraldError {
        HeraldError(
            status: 400, code: "invalid_time_zone",
            message: "timeZone must be an IANA time zone name, such as Europe/Paris.", field: field)
    }

    /// The 422 for a well-formed name that names no time zone Postgres knows (`Mars/Olympus_Mons`).
    public static func unknownTimeZone(field: String = "timeZone") -> HeraldError {
        HeraldError(
            status: 422, code: "unknown_time_zone",
            message: "timeZone names no IANA time zone this server knows, such as Europe/Paris.",
            field: field)
    }

    /// `timeZone` and `quietHours` of a user body (absent or null: none).
    public static func parse(_ fields: JSONFields) throws(HeraldError) -> UserGuards {
        let timeZone = try fields.string("timeZone")
        if let timeZone, !isTimeZoneShaped(timeZone) { throw invalidTimeZone(field: fields.field("timeZone")) }
        guard let quiet = try fields.object("quietHours", allowed: ["start", "end"]) else {
            return UserGuards(timeZone: timeZone)
        }
        let start = try time(quiet, "start"), end = try time(quiet, "end")
        guard let hours = QuietHours(start: start, end: end) else {
            throw .invalidField(fields.field("quietHours"), "quietHours start and end must differ.")
        }
        return UserGuards(timeZone: timeZone, quietHours: hours)
    }

    private static func time(_ fields: JSONFields, _ name: String) throws(HeraldError) -> Int {
        guard let minutes = QuietHours.minutes(try fields.requiredString(name)) else {
            throw .invalidField(
                fields.field(name),
                "\(fields.field(name)) must be a time of day as HH:MM (00:00-23:59).")
        }
        return minutes
    }
}
