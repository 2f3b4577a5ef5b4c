import Foundation
import Testing

@testable import HeraldCore

@Suite struct DeliveryEventReportTests {
    static let now = Fixtures.now

    static func parse(_ json: String) throws(HeraldError) -> DeliveryEventReport {
        let value: JSONValue
        do { value = try JSONParser.parse(Array(json.utf8)) } catch { throw .invalidJSON("\(error)") }
        return try DeliveryEventReport.parse(value, now: now)
    }

    static func error(_ json: String) -> HeraldError? {
        do {
            _ = try parse(json)
            return nil
        } catch { return error }
    }

    @Test("each event parses; without `at` it happened now; `at` and userId are kept")
    func valid() throws {
        for event in DeliveryEventReport.Event.allCases {
            #expect(try Self.parse(#"{"event":"\#(event.rawValue)"}"#) == .init(event: event, at: Self.now))
        }
        let at = Self.now.addingTimeInterval(-3_600)
        let report = try Self.parse(#"{"event":"opened","at":"\#(ISO8601.format(at))","userId":"u-1"}"#)
        #expect(report == .init(event: .opened, at: at, userID: "u-1"))
        // A phone a little ahead of the server, and a report a week old less a minute, are still taken.
        let ahead = ISO8601.format(Self.now.addingTimeInterval(DeliveryEventReport.maxSkew))
        #expect(try Self.parse(#"{"event":"received","at":"\#(ahead)"}"#).event == .received)
        let old = ISO8601.format(Self.now.addingTimeInterval(60 - DeliveryEventReport.maxAge))
        #expect(try Self.parse(#"{"event":"received","at":"\#(old)"}"#).event == .received)
    }

    @Test("each refusal has its code and field")
    func refused() {
        let future = ISO8601.format(Self.now.addingTimeInterval(DeliveryEventReport.maxSkew + 1))
        let tooOld = ISO8601.format(Self.now.addingTimeInterval(-DeliveryEventReport.maxAge - 1))
        let cases: [(String, String, String)] = [
            ("{}", "missing_field", "event"),
            (#"{"event":"clicked"}"#, "invalid_field", "event"),
            (#"{"event":1}"#, "invalid_field", "event"),
            (#"{"event":"opened","at":"yesterday"}"#, "invalid_field", "at"),
            (#"{"event":"opened","at":"2026-12-07T10:00:00"}"#, "invalid_field", "at"),
            (#"{"event":"opened","at":"\#(future)"}"#, "event_time_in_future", "at"),
            (#"{"event":"opened","at":"\#(tooOld)"}"#, "event_time_too_old", "at"),
            (#"{"event":"opened","userId":"a b"}"#, "invalid_field", "userId"),
            (#"{"event":"opened","deviceToken":"x"}"#, "unknown_field", "deviceToken"),
            ("[]", "invalid_field", ""),
        ]
        for (body, code, field) in cases {
            let error = Self.error(body)
            #expect(error?.code == code, "\(body)")
            #expect(error?.field == field, "\(body)")
            // A well-formed time out of the window is valid JSON that breaks a rule: 422, as a push's sendAt.
            #expect(error?.status == (code.hasPrefix("event_time") ? 422 : 400), "\(body)")
        }
    }
}
