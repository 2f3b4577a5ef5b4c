import HeraldCore
import Testing

@testable import FCM

/// The fast path (splicing the intake's stored form) gives exactly what parsing and re-writing give.
@Suite struct FCMMessageSpliceTests {
    static let storedForms = [
        #"{"android":{"priority":"HIGH"},"data":{"title":"Hi \"there\"","body":"é ✓","n":"1"}}"#,
        #"{"android":{"priority":"HIGH"},"data":{}}"#,
        #"{"android":{"priority":"HIGH"},"data":{"url":"https://x/?a=1&b=2","deliveryId":"0192f3a4"}}"#,
        #"{"android":{"priority":"HIGH"}}"#,
    ]

    @Test(arguments: storedForms, [nil, 0, 60, 99_999_999] as [Int?])
    func spliceEqualsRebuild(_ stored: String, ttl: Int?) throws {
        // Stored exactly as the intake writes it (JSONWriter), so even the bytes must agree.
        let canonical = JSONWriter.bytes(try JSONParser.parse(Array(stored.utf8)))
        let message = FCMMessage(token: #"tok"en\1"#, message: canonical, ttlSeconds: ttl)
        let spliced = try #require(FCMMessageBuilder.splice(message))
        #expect(
            String(decoding: spliced, as: UTF8.self)
                == String(decoding: try FCMMessageBuilder.rebuild(message), as: UTF8.self))
    }

    /// A collapse key goes into `android` beside the TTL, by either path, with or without a TTL.
    @Test(arguments: storedForms + [#"{"data":{"a":"b"}}"#, #"{"android":{"priority":"HIGH","ttl":"5s"}}"#])
    func collapseKeyJoinsAndroid(_ stored: String) throws {
        let key = String(repeating: "0f", count: 32)
        for ttl in [nil, 60] as [Int?] {
            let message = FCMMessage(token: "t", message: Array(stored.utf8), ttlSeconds: ttl, collapseKey: key)
            let body = try JSONParser.parse(try FCMMessageBuilder.body(for: message))
            #expect(body["message"]?["android"]?["collapse_key"] == .string(key))
            #expect(
                body["message"]?["android"]?["ttl"] == ttl.map { .string("\($0)s") }
                    ?? (stored.contains("5s") ? .string("5s") : nil))
            if let spliced = FCMMessageBuilder.splice(message) {
                #expect(spliced == (try FCMMessageBuilder.rebuild(message)))
            }
        }
    }

    @Test(arguments: [
        #"{"data":{"a":"b"}}"#,  // another shape
        #"{"android":{"priority":"HIGH"},"token":"old","data":{}}"#,  // a target to replace
        #"{"android":{"priority":"HIGH"},"data":{"topic":"x"}}"#,  // a key that looks like one
        #"{"android":{"priority":"HIGH","ttl":"5s"},"data":{}}"#,  // android with more members
    ])
    func otherFormsTakeTheGeneralPath(_ stored: String) {
        #expect(FCMMessageBuilder.splice(FCMMessage(token: "t", message: Array(stored.utf8), ttlSeconds: 5)) == nil)
    }
}
