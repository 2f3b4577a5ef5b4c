import Foundation
import HeraldCore

/// The JSON body of an APNs error: `{"reason":"..."}`, plus `timestamp` on 410 (the last time
/// APNs confirmed the token was no longer valid).
public struct APNsErrorResponse: Sendable, Equatable {
    public var reason: APNsErrorReason?
    /// 410's `timestamp`. Apple documents milliseconds since the epoch, some clients read seconds:
    /// values above 10^11 (year 5138 in seconds) are taken as milliseconds.
    public var timestamp: Date?
}

extension APNsErrorResponse {
    /// Parses a response body; an empty or malformed body gives a response with no reason
    /// (APNs always sends one, but a proxy in between may not).
    public init(body: [UInt8]) {
        guard !body.isEmpty, let json = try? JSONParser.parse(body) else {
            self.init(reason: nil)
            return
        }
        let reason = json["reason"]?.stringValue.flatMap { $0.isEmpty ? nil : APNsErrorReason(rawValue: $0) }
        self.init(reason: reason, timestamp: json["timestamp"].flatMap(Self.timestamp))
    }

    static func timestamp(_ value: JSONValue) -> Date? {
        let number: Double?
        switch value {
        case .number(let value): number = value
        case .string(let text): number = Double(text)
        default: number = nil
        }
        guard let number, number.isFinite, number > 0 else { return nil }
        return Date(timeIntervalSince1970: number > 1e11 ? number / 1000 : number)
    }
}
