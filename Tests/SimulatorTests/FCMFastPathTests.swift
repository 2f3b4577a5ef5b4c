import HeraldCore
import Testing

@testable import Simulator

/// The FCM fast path (FCMFastPath) against the full validator: whatever it accepts, the full validator accepts with
/// the same target and validate_only; the messages Herald sends take it.
@Suite("FCM fast path")
struct FCMFastPathTests {
    let validator = FCMRequestValidator(tokens: AccessTokenStore())

    /// What the full validator says of `body` (no fast path).
    func full(_ body: String) -> FCMRequestValidator.Body? {
        try? validator.checkBody(Array(body.utf8)).get()
    }

    func expectAgreement(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let fast = FCMFastPath.accept(Array(body.utf8)) else { return }
        let slow = full(body)
        // The fast path takes token messages only: the full validator must agree it is a token.
        #expect(
            slow?.target == fast.token && slow?.validateOnly == fast.validateOnly && slow?.isToken == true,
            "fast path accepted \(body)", sourceLocation: sourceLocation)
    }

    static let herald =
        #"{"message":{"token":"fcm-bench-5","android":{"priority":"HIGH","ttl":"2419200s"},"data":{"title":"[Pull] Deposit pending","body":"Confirmations: 1/6","channel":"miniapp","miniAppId":"fun.pull.gacha","deliveryId":"0b6f1c1e-3f55-4e55-9d6a-2f9f2b0c6a11","kid":"k1","sig":"c4ca4238a0b923820dcc509a6f75849b"}}}"#

    static let accepted = [
        herald,
        #"{"message":{"token":"t"}}"#,
        #" { "validate_only" : true , "message" : { "token" : "t" , "data" : { } } } "#,
        #"{"message":{"token":"t"},"validateOnly":false,"validate_only":true}"#,
        #"{"message":{"token":"t","android":{"priority":"NORMAL","ttl":"1.5s","data":{"k":"v"},"collapse_key":"c","direct_boot_ok":true}}}"#,
        #"{"message":{"token":"t","notification":{"title":"x","image":null},"apns":{"payload":{"aps":{"badge":3,"x":[1,-2.5,0,{"a":[]}]}}},"fcm_options":{},"name":"n","webpush":{"headers":{}},"fcmOptions":{}}}"#,
        #"{"message":{"token":"t","data":{"\#(String(repeating: "k", count: 2000))":"\#(String(repeating: "v", count: 2096))"}}}"#,
    ]

    @Test("The messages Herald sends, and other plain ones, take the fast path with the full validator's answer")
    func acceptedBodies() {
        for body in Self.accepted {
            #expect(FCMFastPath.accept(Array(body.utf8)) != nil, "\(body)")
            #expect(full(body) != nil, "\(body)")
            expectAgreement(body)
        }
        #expect(FCMFastPath.accept(Array(Self.herald.utf8))?.token == "fcm-bench-5")
        #expect(FCMFastPath.accept(Array(Self.accepted[2].utf8))?.validateOnly == true)
    }

    static let others = [
        "", "[]", "{}", "null", #"{"message":{}}"#, #"{"message":5}"#, #"{"message":{"token":""}}"#,
        #"{"message":{"token":5}}"#, #"{"message":{"topic":"news"}}"#, #"{"message":{"condition":"'a' in topics"}}"#,
        #"{"message":{"token":"t","topic":"news"}}"#, #"{"message":{"token":"t","token":"u"}}"#,
        #"{"message":{"token":"t"},"message":{"token":"u"}}"#, #"{"message":{"token":"t","data":{"a":"1","a":"2"}}}"#,
        #"{"message":{"token":"t","notification":{"a":1,"a":2}}}"#, #"{"message":{"token":"t\n"}}"#,
        #"{"message":{"token":"t\u0041"}}"#, #"{"message":{"token":"tö"}}"#,
        #"{"message":{"token":"t","data":{"from":"x"}}}"#,
        #"{"message":{"token":"t","data":{"googleX":"x"}}}"#, #"{"message":{"token":"t","data":{"gcm.n":"x"}}}"#,
        #"{"message":{"token":"t","data":{"message_type":"x"}}}"#, #"{"message":{"token":"t","data":{"n":1}}}"#,
        #"{"message":{"token":"t","data":{"\#(String(repeating: "k", count: 2000))":"\#(String(repeating: "v", count: 2097))"}}}"#,
        #"{"message":{"token":"t","android":{"priority":1}}}"#,
        #"{"message":{"token":"t","android":{"priority":"LOW"}}}"#,
        #"{"message":{"token":"t","android":{"ttl":"2419201s"}}}"#,
        #"{"message":{"token":"t","android":{"ttl":"10"}}}"#,
        #"{"message":{"token":"t","android":{"ttl":"1.1234567890s"}}}"#, #"{"message":{"token":"t","android":[]}}"#,
        #"{"message":{"token":"t","unknown":1}}"#, #"{"message":{"token":"t"},"extra":1}"#,
        #"{"message":{"token":"t"}} x"#,
        #"{"message":{"token":"t",}}"#, #"{"message":{"token":"t","apns":{"x":1e5}}}"#,
        #"{"message":{"token":"t","apns":{"x":01}}}"#,
        #"{"message":{"token":"t","apns":{"x":-}}}"#,
        #"{"message":{"token":"t","apns":{"x":\#(String(repeating: "9", count: 400))}}}"#,
        #"{"message":{"token":"t","apns":\#(String(repeating: "[", count: 20))\#(String(repeating: "]", count: 20))}}"#,
        #"{"message":{"token":"t","apns":\#(String(repeating: "[", count: 40))\#(String(repeating: "]", count: 40))}}"#,
        #"{"message":{"token":"t\#u{7F}"}}"#, #"{"validate_only":1,"message":{"token":"t"}}"#,
    ]

    @Test("Anything else: the fast path declines or agrees with the full validator")
    func otherBodies() {
        for body in Self.others {
            expectAgreement(body)
        }
        // Among them, ones the full validator takes and the fast path leaves to it.
        let declined = [
            #"{"message":{"topic":"news"}}"#, #"{"message":{"token":"t","android":{"priority":1}}}"#,
            #"{"message":{"token":"t","apns":{"x":1e5}}}"#, #"{"message":{"token":"t\u0041"}}"#,
            #"{"message":{"token":"t","apns":\#(String(repeating: "[", count: 20))\#(String(repeating: "]", count: 20))}}"#,
        ]
        for body in declined {
            #expect(FCMFastPath.accept(Array(body.utf8)) == nil, "\(body)")
            #expect(full(body) != nil, "\(body)")
        }
    }

    @Test("Every one-byte change of Herald's message: the fast path declines or agrees with the full validator")
    func mutations() {
        let bytes = Array(Self.herald.utf8)
        let replacements: [UInt8?] = [nil, 0x22, 0x2C, 0x7D, 0x5C, 0x31, 0x20, 0x3A, 0x7B, 0x5B]
        for position in bytes.indices {
            for replacement in replacements {
                var changed = bytes
                if let replacement { changed[position] = replacement } else { changed.remove(at: position) }
                expectAgreement(String(decoding: changed, as: UTF8.self))
            }
        }
    }
}
