import HeraldCore
import Testing

@testable import FCM

@Suite struct FCMMessageBuilderTests {
    static let stored = #"{"android":{"priority":"HIGH"},"data":{"title":"Hi \"there\"","body":"é ✓","n":"1"}}"#

    func body(_ stored: String, token: String = "reg-token-1", ttl: Int? = nil) throws -> String {
        String(
            decoding: try FCMMessageBuilder.body(
                for: FCMMessage(
                    token: token, message: Array(stored.utf8),
                    ttlSeconds: ttl)), as: UTF8.self)
    }

    @Test func wrapsTheStoredMessageAddsTokenAndTTL() throws {
        #expect(
            try body(Self.stored, ttl: 3600) == #"{"message":{"android":{"priority":"HIGH","ttl":"3600s"},"#
                + #""data":{"title":"Hi \"there\"","body":"é ✓","n":"1"},"token":"reg-token-1"}}"#)
    }

    @Test func withoutTTLTheAndroidBlockIsUntouched() throws {
        #expect(
            try body(Self.stored) == #"{"message":{"android":{"priority":"HIGH"},"#
                + #""data":{"title":"Hi \"there\"","body":"é ✓","n":"1"},"token":"reg-token-1"}}"#)
    }

    @Test func dataIsKeptExactly() throws {
        let json = try parseJSON(Array(try body(Self.stored, ttl: 10).utf8))
        let original = try parseJSON(Array(Self.stored.utf8))
        #expect(json["message"]?["data"] == original["data"])
    }

    @Test func ttlIsAddedWithoutAnAndroidBlockAndClamped() throws {
        #expect(
            try body(#"{"data":{"a":"b"}}"#, ttl: 0)
                == #"{"message":{"data":{"a":"b"},"android":{"ttl":"0s"},"token":"reg-token-1"}}"#)
        #expect(try body(#"{"data":{}}"#, ttl: -5).contains(#""ttl":"0s""#))
        #expect(try body(#"{"data":{}}"#, ttl: 99_999_999).contains(#""ttl":"2419200s""#))
        #expect(
            try body(#"{"android":{"ttl":"5s"},"data":{}}"#, ttl: 60)
                == #"{"message":{"android":{"ttl":"60s"},"data":{},"token":"reg-token-1"}}"#)
    }

    @Test func anyStoredTargetIsReplacedByTheToken() throws {
        let text = try body(#"{"topic":"news","token":"old","condition":"x","data":{}}"#, token: "new")
        #expect(text == #"{"message":{"data":{},"token":"new"}}"#)
    }

    @Test func tokenIsEscapedAsAJSONString() throws {
        let json = try parseJSON(Array(try body(#"{"data":{}}"#, token: #"a"b\c"#).utf8))
        #expect(json["message"]?["token"]?.stringValue == #"a"b\c"#)
    }

    @Test(arguments: ["", "[]", "\"x\"", "{", #"{"android":"HIGH","data":{}}"#])
    func storedMessagesThatAreNotObjectsAreRefused(_ stored: String) {
        #expect(throws: FCMMessageBuilder.Failure(reason: "invalid_message")) {
            try FCMMessageBuilder.body(for: FCMMessage(token: "t", message: Array(stored.utf8), ttlSeconds: 5))
        }
    }
}
