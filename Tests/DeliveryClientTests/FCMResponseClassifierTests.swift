import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import FCM

@Suite struct FCMResponseClassifierTests {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func errorBody(_ code: Int, _ status: String, _ errorCode: String?) -> String {
        let details =
            errorCode.map {
                #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"#
            } ?? ""
        return #"{"error":{"code":\#(code),"message":"Requested entity for token abc was not found.","#
            + #""status":"\#(status)"\#(details)}}"#
    }

    static func verdict(_ status: Int, _ grpc: String, _ errorCode: String?, headers: [HTTP2Header] = [])
        -> FCMResponseClassifier.Verdict
    {
        FCMResponseClassifier.classify(.json(status, errorBody(status, grpc, errorCode), headers: headers), now: now)
    }

    @Test func successIsSent() {
        let response = HTTP2Response.json(200, #"{"name":"projects/p/messages/1"}"#)
        #expect(FCMResponseClassifier.classify(response, now: Self.now) == .result(.sent))
    }

    /// The errorCode table of FCM's HTTP v1 documentation.
    static let table: [(Int, String, String, FCMResponseClassifier.Verdict)] = [
        (400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", .result(.failed(reason: "INVALID_ARGUMENT"))),
        (401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", .result(.setupFault(reason: "THIRD_PARTY_AUTH_ERROR"))),
        (403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", .result(.setupFault(reason: "SENDER_ID_MISMATCH"))),
        (404, "NOT_FOUND", "UNREGISTERED", .result(.tokenInvalid(reason: "UNREGISTERED"))),
        (
            429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED",
            .result(.retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60)))
        ),
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
        #expect(Self.verdict(401, "UNAUTHENTICATED", nil) == .renewAccessToken(reason: "UNAUTHENTICATED"))
        #expect(
            FCMResponseClassifier.classify(HTTP2Response(status: 401), now: Self.now)
                == .renewAccessToken(reason: "http_401"))
        #expect(
            FCMResponseClassifier.unauthenticatedAfterRenewal("UNAUTHENTICATED")
                == .setupFault(reason: "UNAUTHENTICATED"))
    }

    @Test func withoutDetailsTheStatusDecides() {
        #expect(Self.verdict(404, "NOT_FOUND", nil) == .result(.failed(reason: "NOT_FOUND")))
        #expect(Self.verdict(503, "UNAVAILABLE", nil) == .result(.retry(reason: "UNAVAILABLE", retryAfter: nil)))
        #expect(
            Self.verdict(429, "RESOURCE_EXHAUSTED", nil)
                == .result(.retry(reason: "RESOURCE_EXHAUSTED", retryAfter: nil)))
        #expect(
            FCMResponseClassifier.classify(.json(502, "<html>bad gateway</html>"), now: Self.now)
                == .result(.retry(reason: "http_502", retryAfter: nil)))
        #expect(FCMResponseClassifier.classify(.json(413, ""), now: Self.now) == .result(.failed(reason: "http_413")))
        #expect(Self.verdict(400, "INVALID_ARGUMENT", "NEW_CODE") == .result(.failed(reason: "NEW_CODE")))
    }

    @Test func quotaExceededWaitsAtLeastAMinute() {
        #expect(
            Self.verdict(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED")
                == .result(.retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))))
        #expect(
            Self.verdict(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", headers: [HTTP2Header("retry-after", "5")])
                == .result(.retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))))
        #expect(
            Self.verdict(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", headers: [HTTP2Header("retry-after", "0")])
                == .result(.retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))))
        // Other throttling keeps what the answer said.
        #expect(
            Self.verdict(503, "UNAVAILABLE", "UNAVAILABLE", headers: [HTTP2Header("retry-after", "5")])
                == .result(.retry(reason: "UNAVAILABLE", retryAfter: .seconds(5))))
    }

    /// Real FCM bodies for a bad registration token (firebase-admin issue threads): the message alone, a
    /// `message.token` field violation alone, or both.
    static let tokenBodies = [
        #"{"error":{"code":400,"message":"The registration token is not a valid FCM registration token","#
            + #""status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","#
            + #""errorCode":"INVALID_ARGUMENT"}]}}"#,
        #"{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT","#
            + #""details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"#
            + #""field":"message.token","description":"Invalid registration token"}]},{"#
            + #""@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}]}}"#,
        #"{"error":{"code":400,"message":"The registration token is not a valid FCM registration token","#
            + #""status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","#
            + #""fieldViolations":[{"field":"message.token","#
            + #""description":"The registration token is not a valid FCM registration token"}]}]}}"#,
    ]

    @Test(arguments: tokenBodies)
    func invalidArgumentAboutTheTokenMakesItSuspect(_ body: String) {
        let verdict = FCMResponseClassifier.classify(.json(400, body), now: Self.now)
        #expect(verdict == .result(.tokenSuspect(reason: "INVALID_ARGUMENT")))
    }

    @Test func invalidArgumentAboutTheMessageFailsIt() {
        let dataKey =
            #"{"error":{"code":400,"message":"Invalid data payload key: from","status":"INVALID_ARGUMENT","#
            + #""details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","#
            + #""errorCode":"INVALID_ARGUMENT"}]}}"#
        #expect(
            FCMResponseClassifier.classify(.json(400, dataKey), now: Self.now)
                == .result(.failed(reason: "INVALID_ARGUMENT")))
        let unknownField =
            #"{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"key\" at "#
            + #"'message': Cannot find field.","status":"INVALID_ARGUMENT","details":[{"#
            + #""@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message","#
            + #""description":"Cannot find field."}]}]}}"#
        #expect(
            FCMResponseClassifier.classify(.json(400, unknownField), now: Self.now)
                == .result(.failed(reason: "INVALID_ARGUMENT")))
        // A field violation elsewhere in the message is not about the token.
        let ttl =
            #"{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"#
            + #""@type":"type.googleapis.com/google.rpc.BadRequest","#
            + #""fieldViolations":[{"field":"message.android.ttl"}]}]}}"#
        #expect(
            FCMResponseClassifier.classify(.json(400, ttl), now: Self.now)
                == .result(.failed(reason: "INVALID_ARGUMENT")))
    }

    @Test func credentialAndPermissionErrorsAreSetupFaults() {
        // PERMISSION_DENIED comes from Google's front end without an FcmError detail.
        let denied =
            #"{"error":{"code":403,"message":"Permission 'cloudmessaging.messages.create' denied on "#
            + #"resource '//cloudresourcemanager.googleapis.com/projects/other' (or it may not exist).","#
            + #""status":"PERMISSION_DENIED"}}"#
        #expect(
            FCMResponseClassifier.classify(.json(403, denied), now: Self.now)
                == .result(.setupFault(reason: "PERMISSION_DENIED")))
        #expect(
            FCMResponseClassifier.classify(HTTP2Response(status: 403), now: Self.now)
                == .result(.setupFault(reason: "http_403")))
        #expect(Self.verdict(403, "PERMISSION_DENIED", "NEW_CODE") == .result(.setupFault(reason: "NEW_CODE")))
        #expect(
            Self.verdict(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR")
                == .result(.setupFault(reason: "THIRD_PARTY_AUTH_ERROR")))
        // SENDER_ID_MISMATCH: the service account is of another Firebase project than the token's. Herald's setup,
        // never a reason to retire the token.
        #expect(
            Self.verdict(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH")
                == .result(.setupFault(reason: "SENDER_ID_MISMATCH")))
    }

    @Test func errorBodiesAreReadWithTheirFieldViolations() {
        let body = FCMErrorResponse(body: Array(Self.tokenBodies[1].utf8))
        #expect(body.errorCode == .invalidArgument)
        #expect(body.status == "INVALID_ARGUMENT")
        #expect(body.fieldViolations == ["message.token"])
        #expect(body.isAboutRegistrationToken)
        #expect(!FCMErrorResponse(body: Array(#"{"error":{"code":400}}"#.utf8)).isAboutRegistrationToken)
        #expect(FCMErrorResponse(body: []) == FCMErrorResponse(errorCode: nil, status: nil))
    }

    @Test func reasonsNeverCarryMessageText() {
        let odd = #"{"error":{"code":400,"status":"token abc-123 is bad"}}"#
        #expect(FCMResponseClassifier.classify(.json(400, odd), now: Self.now) == .result(.failed(reason: "http_400")))
    }

    @Test func retryAfterIsHonouredInSecondsOrAsAnHTTPDate() {
        #expect(
            Self.verdict(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", headers: [HTTP2Header("retry-after", "90")])
                == .result(.retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(90))))
        let inTenSeconds = [HTTP2Header("retry-after", "Sun, 15 Jun 2025 15:06:50 GMT")]
        #expect(
            Self.verdict(503, "UNAVAILABLE", "UNAVAILABLE", headers: inTenSeconds)
                == .result(.retry(reason: "UNAVAILABLE", retryAfter: .seconds(10))))
        #expect(
            Self.verdict(500, "INTERNAL", "INTERNAL", headers: [HTTP2Header("retry-after", "Sunday soon")])
                == .result(.retry(reason: "INTERNAL", retryAfter: nil)))
    }

    @Test(arguments: [HTTP2Error.Code.goAway, .streamReset, .connectionLost, .timeout, .connectFailed, .tlsFailed])
    func transportErrorsAreRetriedWithTheirCode(_ code: HTTP2Error.Code) {
        #expect(FCMResponseClassifier.classify(HTTP2Error(code, "x")) == .retry(reason: code.rawValue, retryAfter: nil))
    }
}
