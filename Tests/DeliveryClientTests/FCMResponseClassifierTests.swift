import FCM
import Foundation
import HTTP2
import HeraldCore
import Testing

@Suite struct FCMResponseClassifierTests {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func errorBody(_ code: Int, _ status: String, _ errorCode: String?) -> String {
        let details = errorCode.map {
            #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"#
        } ?? ""
        return #"{"error":{"code":\#(code),"message":"Requested entity for token abc was not found.","#
            + #""status":"\#(status)"\#(details)}}"#
    }

    static func verdict(_ status: Int, _ grpc: String, _ errorCode: String?, headers: [HTTP2Header] = [])
        -> FCMResponseClassifier.Verdict {
        FCMResponseClassifier.classify(.json(status, errorBody(status, grpc, errorCode), headers: headers), now: now)
    }

    @Test func successIsSent() {
        let response = HTTP2Response.json(200, #"{"name":"projects/p/messages/1"}"#)
        #expect(FCMResponseClassifier.classify(response, now: Self.now) == .result(.sent))
    }

    /// The errorCode table of protocol-notes section 7.
    static let table: [(Int, String, String, FCMResponseClassifier.Verdict)] = [
        (400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", .result(.failed(reason: "INVALID_ARGUMENT"))),
        (401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", .result(.failed(reason: "THIRD_PARTY_AUTH_ERROR"))),
        (403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", .result(.failed(reason: "SENDER_ID_MISMATCH"))),
        (404, "NOT_FOUND", "UNREGISTERED", .result(.tokenInvalid(reason: "UNREGISTERED"))),
        (429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", .result(.retry(reason: "QUOTA_EXCEEDED", retryAfter: nil))),
        (500, "INTERNAL", "INTERNAL", .result(.retry(reason: "INTERNAL", retryAfter: nil))),
        (503, "UNAVAILABLE", "UNAVAILABLE", .result(.retry(reason: "UNAVAILABLE", retryAfter: nil))),
        (400, "INVALID_ARGUMENT", "UNSPECIFIED_ERROR", .result(.failed(reason: "UNSPECIFIED_ERROR"))),
    ]

    @Test(arguments: table.indices)
    func everyDocumentedErrorCodeIsClassified(_ index: Int) {
        let (status, grpc, errorCode, expected) = Self.table[index]
        #expect(Self.verdict(status, grpc, errorCode) == expected, "\(errorCode)")
    }

    @Test func tableCoversEveryKnownCode() {
        #expect(Set(Self.table.map { FCMErrorCode(rawValue: $0.2) }) == Set(FCMErrorCode.allKnown))
        #expect(FCMErrorCode(rawValue: "NEW_CODE") == .unknown("NEW_CODE"))
    }

    @Test func unregisteredWinsWhateverTheStatus() {
        #expect(Self.verdict(400, "INVALID_ARGUMENT", "UNREGISTERED") == .result(.tokenInvalid(reason: "UNREGISTERED")))
    }

    @Test func plain401RenewsTheAccessToken() {
        #expect(Self.verdict(401, "UNAUTHENTICATED", nil) == .renewAccessToken)
        #expect(FCMResponseClassifier.classify(HTTP2Response(status: 401), now: Self.now) == .renewAccessToken)
    }

    @Test func withoutDetailsTheStatusDecides() {
        #expect(Self.verdict(404, "NOT_FOUND", nil) == .result(.failed(reason: "NOT_FOUND")))
        #expect(Self.verdict(503, "UNAVAILABLE", nil) == .result(.retry(reason: "UNAVAILABLE", retryAfter: nil)))
        #expect(Self.verdict(429, "RESOURCE_EXHAUSTED", nil)
                    == .result(.retry(reason: "RESOURCE_EXHAUSTED", retryAfter: nil)))
        #expect(FCMResponseClassifier.classify(.json(502, "<html>bad gateway</html>"), now: Self.now)
                    == .result(.retry(reason: "http_502", retryAfter: nil)))
        #expect(FCMResponseClassifier.classify(.json(413, ""), now: Self.now) == .result(.failed(reason: "http_413")))
        #expect(Self.verdict(400, "INVALID_ARGUMENT", "NEW_CODE") == .result(.failed(reason: "NEW_CODE")))
    }

    @Test func reasonsNeverCarryMessageText() {
        let odd = #"{"error":{"code":400,"status":"token abc-123 is bad"}}"#
        #expect(FCMResponseClassifier.classify(.json(400, odd), now: Self.now) == .result(.failed(reason: "http_400")))
    }

    @Test func retryAfterIsHonouredInSecondsOrAsAnHTTPDate() {
        #expect(Self.verdict(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", headers: [HTTP2Header("retry-after", "60")])
                    == .result(.retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))))
        let inTenSeconds = [HTTP2Header("retry-after", "Sun, 15 Jun 2025 15:06:50 GMT")]
        #expect(Self.verdict(503, "UNAVAILABLE", "UNAVAILABLE", headers: inTenSeconds)
                    == .result(.retry(reason: "UNAVAILABLE", retryAfter: .seconds(10))))
        #expect(Self.verdict(500, "INTERNAL", "INTERNAL", headers: [HTTP2Header("retry-after", "Sunday soon")])
                    == .result(.retry(reason: "INTERNAL", retryAfter: nil)))
    }

    @Test(arguments: [HTTP2Error.Code.goAway, .streamReset, .connectionLost, .timeout, .connectFailed, .tlsFailed])
    func transportErrorsAreRetriedWithTheirCode(_ code: HTTP2Error.Code) {
        #expect(FCMResponseClassifier.classify(HTTP2Error(code, "x")) == .retry(reason: code.rawValue, retryAfter: nil))
    }
}
