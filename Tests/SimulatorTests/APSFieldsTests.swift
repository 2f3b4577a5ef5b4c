import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import Simulator

/// The simulator's checks of `aps.thread-id`, `aps.category`, `aps.sound` and `aps.interruption-level`
/// (APSFieldsValidator), and its record of what it accepted.
@Suite("APNs aps presentation keys")
struct APSFieldsTests {
    static func body(_ aps: String, beside: String = "") -> [UInt8] {
        Array(#"{"aps":{"alert":{"title":"T","body":"B"},\#(aps)}\#(beside)}"#.utf8)
    }

    static let accepted: [String] = [
        #""thread-id":"fun.pull.gacha""#,
        #""thread-id":"""#,
        #""category":"INVITE""#,
        #""category":"reply.quick-2_X""#,
        #""sound":"default""#,
        #""sound":"chime.caf""#,
        #""sound":{"critical":1,"name":"alarm.caf","volume":0.5}"#,
        #""interruption-level":"passive""#,
        #""interruption-level":"active""#,
        #""interruption-level":"time-sensitive""#,
        #""interruption-level":"critical""#,
        // Escapes decode to Apple's value, as they do for APNs.
        #""interruption-level":"time\u002dsensitive""#,
        #""thread-id":"a","category":"INVITE","sound":"default","interruption-level":"passive","mutable-content":1"#,
        // Keys Apple does not define, or that sit elsewhere, are not these keys.
        #""threadId":5,"Sound":5,"interruption_level":"loud","Category":5,"categoryIdentifier":5"#,
        #""mutable-content":1"#,
    ]

    @Test(arguments: accepted)
    func acceptedAps(_ aps: String) {
        #expect(APSFieldsValidator.check(Self.body(aps)) == nil)
    }

    @Test("the same names outside aps, or inside its alert, are not checked")
    func outsideAps() {
        #expect(
            APSFieldsValidator.check(Self.body(#""mutable-content":1"#, beside: #","sound":3,"thread-id":[]"#)) == nil)
        #expect(APSFieldsValidator.check(Array(#"{"aps":{"alert":{"sound":1,"thread-id":2}}}"#.utf8)) == nil)
        #expect(APSFieldsValidator.check(Array(#"{"other":{"interruption-level":"loud"}}"#.utf8)) == nil)
        #expect(APSFieldsValidator.check(Array(#"{"aps":"not an object","sound":1}"#.utf8)) == nil)
    }

    static let thread = "aps.thread-id must be a string"
    static let category = "aps.category must be a string"
    static let sound = "aps.sound must be a string or a dictionary"
    static let level = "aps.interruption-level must be passive, active, time-sensitive or critical"

    static let refused: [(String, String)] = [
        (#""thread-id":42"#, thread),
        (#""thread-id":null"#, thread),
        (#""thread-id":["a"]"#, thread),
        (#""category":5"#, category),
        (#""category":null"#, category),
        (#""category":true"#, category),
        (#""category":["INVITE"]"#, category),
        (#""category":{"identifier":"INVITE"}"#, category),
        (#""categ\u006fry":7"#, category),
        (#""sound":1"#, sound),
        (#""sound":true"#, sound),
        (#""sound":null"#, sound),
        (#""sound":["chime.caf"]"#, sound),
        (#""interruption-level":"urgent""#, level),
        (#""interruption-level":"Critical""#, level),
        (#""interruption-level":"time_sensitive""#, level),
        (#""interruption-level":"""#, level),
        (#""interruption-level":1"#, level),
        (#""interruption-level":null"#, level),
        (#""interruption-level":{"level":"active"}"#, level),
        // An escaped key is the same key.
        (#""interruption\u002dlevel":"loud""#, level),
        // The first broken rule is the answer.
        (#""sound":"default","thread-id":7,"interruption-level":"loud""#, thread),
    ]

    @Test(arguments: refused)
    func refusedAps(_ aps: String, _ detail: String) {
        let rejection = APSFieldsValidator.check(Self.body(aps))
        #expect(rejection == APNsRejection(status: 400, reason: "PayloadEmpty", detail: detail))
    }

    @Test("over HTTP/2: a bad interruption-level is 400 PayloadEmpty, recorded with the rule as its detail")
    func refusedOverTheWire() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.apns(body: Self.body(#""thread-id":"a","interruption-level":"loud""#))
        #expect(response.status == 400)
        #expect(response.reason == "PayloadEmpty")
        let record = try #require(harness.simulator.received().last)
        #expect(record.status == 400)
        #expect(record.detail == Self.level)
        // The answer itself carries only the reason, as APNs' does.
        #expect(response.json == .object([("reason", .string("PayloadEmpty"))]))
    }

    @Test("over HTTP/2: a category that is not a string is 400 PayloadEmpty, recorded with the rule as its detail")
    func refusedCategoryOverTheWire() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.apns(body: Self.body(#""thread-id":"a","category":42"#))
        #expect(response.status == 400)
        #expect(response.reason == "PayloadEmpty")
        let record = try #require(harness.simulator.received().last)
        #expect(record.status == 400)
        #expect(record.detail == Self.category)
        let listed = try await harness.control("GET", "/sim/received")
        let entry = try #require(listed.json.arrayValue?.last)
        #expect(entry["payload"]?["aps"]?["category"] == .number(42))
        #expect(entry["detail"] == .string(Self.category))
    }

    @Test("over HTTP/2: what was accepted is recorded byte for byte, and aps reads back field by field")
    func recordedOverTheWire() async throws {
        let harness = try SimulatorHarness()
        let body = Self.body(
            #""mutable-content":1,"thread-id":"fun.pull.gacha","category":"INVITE","sound":"chime.caf","#
                + #""interruption-level":"time-sensitive""#,
            beside: #","miniAppId":"fun.pull.gacha""#)
        let response = try await harness.apns(body: body)
        #expect(response.status == 200)
        let record = try #require(harness.simulator.received().last)
        #expect(record.body == body)
        #expect(record.aps?["thread-id"] == .string("fun.pull.gacha"))
        #expect(record.aps?["sound"] == .string("chime.caf"))
        #expect(record.aps?["category"] == .string("INVITE"))
        #expect(record.aps?["interruption-level"] == .string("time-sensitive"))
        // The control API lists the same payload.
        let listed = try await harness.control("GET", "/sim/received")
        let entry = try #require(listed.json.arrayValue?.last)
        #expect(entry["payload"]?["aps"]?["interruption-level"] == .string("time-sensitive"))
        #expect(entry["payload"]?["aps"]?["sound"] == .string("chime.caf"))
        #expect(entry["payload"]?["aps"]?["category"] == .string("INVITE"))
    }
}
