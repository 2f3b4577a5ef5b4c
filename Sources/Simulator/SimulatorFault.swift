import HeraldCore

/// How requests for one device token should fail (`PUT /sim/faults/{token}`).
///
/// A fault applies to requests that pass every check (a malformed request is answered as APNs or
/// FCM would, whatever the fault says), and each application counts against `times`.
public struct SimulatorFault: Sendable, Equatable {
    /// The status to answer with; nil answers normally (useful with `delayMs` alone).
    public var status: Int?
    /// The APNs reason, or the FCM `errorCode`. nil: the usual one for `status`
    /// (APNs 410 Unregistered, FCM 404 UNREGISTERED, ...).
    public var reason: String?
    /// Only the next `times` requests; nil for every request until the fault is cleared.
    public var times: Int?
    /// Seconds for a `retry-after` header on the answer.
    public var retryAfter: Int?
    /// Answer (or drop, or GOAWAY) this many milliseconds late, on top of `SimulatorConfiguration.latency`; the event
    /// loop is never blocked.
    public var delayMs: Int = 0
    /// Close the connection without answering (the client cannot know whether it was processed).
    public var drop: Bool = false
    /// Send GOAWAY naming the stream before this one as the last processed: this request and
    /// any later one on the connection are unprocessed, and the client resends them elsewhere.
    public var goAway: Bool = false

    /// Upper bound for `delayMs`: long enough for any client timeout test, short enough that a
    /// typo cannot park streams for hours.
    public static let maxDelayMs = 600_000
}

extension SimulatorFault {
    /// Reads the control API's JSON body. Every member is optional; unknown members, wrong types
    /// and out-of-range values are refused with a message saying which.
    public init(json: JSONValue) throws(ControlError) {
        guard let members = json.objectMembers else { throw ControlError("the fault must be a JSON object") }
        self.init()
        for (key, value) in members {
            switch key {
            case "status":
                status = try Self.optionalInteger(value, key, in: 200...599)
            case "reason":
                if case .null = value { reason = nil; continue }
                guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= 200 else {
                    throw ControlError("reason must be a non-empty string of at most 200 bytes, or null")
                }
                reason = text
            case "times":
                times = try Self.optionalInteger(value, key, in: 1...Int(Int32.max))
            case "retryAfter":
                retryAfter = try Self.optionalInteger(value, key, in: 0...86_400)
            case "delayMs":
                delayMs = try Self.optionalInteger(value, key, in: 0...Self.maxDelayMs) ?? 0
            case "drop":
                drop = try Self.optionalBool(value, key)
            case "goaway", "goAway":
                goAway = try Self.optionalBool(value, key)
            default:
                throw ControlError(
                    "unknown member \"\(key)\" (known: status, reason, times, retryAfter, delayMs, drop, goaway)")
            }
        }
        guard !(drop && goAway) else { throw ControlError("drop and goaway cannot both be true") }
        guard status != nil || drop || goAway || delayMs > 0 else {
            throw ControlError("a fault needs at least one of status, delayMs, drop or goaway")
        }
    }

    /// The fault as the control API shows it.
    var json: JSONValue {
        func number(_ value: Int?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
        return .object([
            ("status", number(status)), ("reason", reason.map(JSONValue.string) ?? .null), ("times", number(times)),
            ("retryAfter", number(retryAfter)), ("delayMs", .number(Double(delayMs))), ("drop", .bool(drop)),
            ("goaway", .bool(goAway)),
        ])
    }

    private static func optionalInteger(_ value: JSONValue, _ key: String, in range: ClosedRange<Int>)
        throws(ControlError) -> Int?
    {
        if case .null = value { return nil }
        guard let number = value.numberValue, number == number.rounded(), number >= Double(range.lowerBound),
            number <= Double(range.upperBound)
        else {
            throw ControlError("\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound), or null")
        }
        return Int(number)
    }

    private static func optionalBool(_ value: JSONValue, _ key: String) throws(ControlError) -> Bool {
        switch value {
        case .null: return false
        case .bool(let flag): return flag
        default: throw ControlError("\(key) must be true, false or null")
        }
    }
}
