import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import APNs

@Suite struct APNsResponseClassifierTests {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func verdict(_ status: Int, _ reason: String?, headers: [HTTP2Header] = [])
        -> APNsResponseClassifier.Verdict
    {
        let body = reason.map { #"{"reason":"\#($0)"}"# } ?? ""
        return APNsResponseClassifier.classify(.json(status, body, headers: headers), now: now)
    }

    @Test func successIsSent() {
        #expect(Self.verdict(200, nil, headers: [HTTP2Header("apns-id", sampleAPNsID)]) == .result(.sent))
    }

    /// Every status and reason of Apple's APNs documentation, with the result it must give.
    static let table: [(Int, String, APNsResponseClassifier.Verdict)] = [
        (400, "BadCollapseId", .result(.failed(reason: "BadCollapseId"))),
        (400, "BadDeviceToken", .result(.tokenSuspect(reason: "BadDeviceToken"))),
        (400, "BadExpirationDate", .result(.failed(reason: "BadExpirationDate"))),
        (400, "BadMessageId", .result(.failed(reason: "BadMessageId"))),
        (400, "BadPriority", .result(.failed(reason: "BadPriority"))),
        (400, "BadTopic", .result(.setupFault(reason: "BadTopic"))),
        (400, "DeviceTokenNotForTopic", .result(.tokenSuspect(reason: "DeviceTokenNotForTopic"))),
        (400, "DuplicateHeaders", .result(.failed(reason: "DuplicateHeaders"))),
        (400, "IdleTimeout", .result(.failed(reason: "IdleTimeout"))),
        (400, "InvalidPushType", .result(.failed(reason: "InvalidPushType"))),
        (400, "MissingDeviceToken", .result(.failed(reason: "MissingDeviceToken"))),
        (400, "MissingTopic", .result(.setupFault(reason: "MissingTopic"))),
        (400, "PayloadEmpty", .result(.failed(reason: "PayloadEmpty"))),
        (400, "TopicDisallowed", .result(.setupFault(reason: "TopicDisallowed"))),
        (403, "BadCertificate", .result(.setupFault(reason: "BadCertificate"))),
        (403, "BadCertificateEnvironment", .result(.setupFault(reason: "BadCertificateEnvironment"))),
        (403, "ExpiredProviderToken", .renewProviderToken(reason: .expiredProviderToken)),
        (403, "Forbidden", .result(.setupFault(reason: "Forbidden"))),
        (403, "InvalidProviderToken", .renewProviderToken(reason: .invalidProviderToken)),
        (403, "MissingProviderToken", .result(.setupFault(reason: "MissingProviderToken"))),
        (403, "UnrelatedKeyIdInToken", .result(.setupFault(reason: "UnrelatedKeyIdInToken"))),
        (403, "BadEnvironmentKeyIdInToken", .result(.setupFault(reason: "BadEnvironmentKeyIdInToken"))),
        (404, "BadPath", .result(.failed(reason: "BadPath"))),
        (405, "MethodNotAllowed", .result(.failed(reason: "MethodNotAllowed"))),
        (410, "ExpiredToken", .result(.tokenInvalid(reason: "ExpiredToken"))),
        (410, "Unregistered", .result(.tokenInvalid(reason: "Unregistered"))),
        (413, "PayloadTooLarge", .result(.failed(reason: "PayloadTooLarge"))),
        (429, "TooManyProviderTokenUpdates", .result(.retry(reason: "TooManyProviderTokenUpdates", retryAfter: nil))),
        (429, "TooManyRequests", .result(.retry(reason: "TooManyRequests", retryAfter: nil))),
        (500, "InternalServerError", .result(.retry(reason: "InternalServerError", retryAfter: nil))),
        (503, "ServiceUnavailable", .result(.retry(reason: "ServiceUnavailable", retryAfter: nil))),
        (503, "Shutdown", .result(.retry(reason: "Shutdown", retryAfter: nil))),
    ]

    @Test(arguments: table.indices)
    func everyDocumentedReasonIsClassified(_ index: Int) {
        let (status, reason, expected) = Self.table[index]
        #expect(Self.verdict(status, reason) == expected, "\(status) \(reason)")
    }

    @Test func tableCoversEveryKnownReason() {
        let covered = Set(Self.table.map { APNsErrorReason(rawValue: $0.1) })
        #expect(covered == Set(APNsErrorReason.allKnown))
        for reason in APNsErrorReason.allKnown {
            #expect(APNsErrorReason(rawValue: reason.rawValue) == reason)
        }
    }

    @Test func unknownReasonsAndEmptyBodiesStillClassifyByStatus() {
        #expect(APNsErrorReason(rawValue: "BrandNewReason") == .unknown("BrandNewReason"))
        #expect(Self.verdict(400, "BrandNewReason") == .result(.failed(reason: "BrandNewReason")))
        #expect(Self.verdict(410, nil) == .result(.tokenInvalid(reason: "http_410")))
        // APNs answers 403 only about the provider credentials: never one delivery's failure.
        #expect(Self.verdict(403, nil) == .result(.setupFault(reason: "http_403")))
        #expect(Self.verdict(403, "BrandNewReason") == .result(.setupFault(reason: "BrandNewReason")))
        #expect(Self.verdict(502, nil) == .result(.retry(reason: "http_502", retryAfter: nil)))
        #expect(Self.verdict(429, nil) == .result(.retry(reason: "http_429", retryAfter: nil)))
        #expect(
            APNsResponseClassifier.classify(.json(500, "<html>oops</html>"), now: Self.now)
                == .result(.retry(reason: "http_500", retryAfter: nil)))
        #expect(Self.verdict(302, nil) == .result(.failed(reason: "http_302")))
    }

    @Test func setupReasonsBlameTheConfigurationWhateverTheStatus() {
        // BadCertificateEnvironment is documented under 403 but has been reported as 400 too.
        #expect(
            Self.verdict(400, "BadCertificateEnvironment")
                == .result(.setupFault(reason: "BadCertificateEnvironment")))
        #expect(Self.verdict(404, "TopicDisallowed") == .result(.setupFault(reason: "TopicDisallowed")))
    }

    /// BadDeviceToken (also said of a token of the other environment) and DeviceTokenNotForTopic (also said of a
    /// whole fleet under a wrong topic) may blame Herald's setup: suspect, whatever the status; only the worker's
    /// verdict tracker retires the token.
    @Test func tokenVerdictsThatMayBlameTheSetupAreSuspectWhateverTheStatus() {
        #expect(Self.verdict(400, "DeviceTokenNotForTopic") == .result(.tokenSuspect(reason: "DeviceTokenNotForTopic")))
        #expect(Self.verdict(410, "DeviceTokenNotForTopic") == .result(.tokenSuspect(reason: "DeviceTokenNotForTopic")))
        #expect(Self.verdict(410, "BadDeviceToken") == .result(.tokenSuspect(reason: "BadDeviceToken")))
    }

    /// A 410 is the app gone from the phone: dead since APNs' timestamp (milliseconds), never later than now.
    @Test func unregisteredIsDeadSinceAPNsTimestamp() {
        let earlier = Self.now.addingTimeInterval(-3_600)
        let body = #"{"reason":"Unregistered","timestamp":\#(Int64(earlier.timeIntervalSince1970 * 1000))}"#
        #expect(
            APNsResponseClassifier.classify(.json(410, body), now: Self.now)
                == .result(.tokenInvalid(reason: "Unregistered", since: earlier)))
        let future = #"{"reason":"Unregistered","timestamp":\#(Int64(Self.now.timeIntervalSince1970 * 1000) + 60_000)}"#
        #expect(
            APNsResponseClassifier.classify(.json(410, future), now: Self.now)
                == .result(.tokenInvalid(reason: "Unregistered", since: Self.now)))
    }

    @Test func aRefusedProviderTokenThatRenewalDidNotFixIsASetupFault() {
        #expect(
            APNsResponseClassifier.providerTokenRefused(.invalidProviderToken)
                == .setupFault(reason: "InvalidProviderToken"))
        #expect(
            APNsResponseClassifier.providerTokenRefused(.expiredProviderToken)
                == .setupFault(reason: "ExpiredProviderToken"))
    }

    @Test func retryAfterIsHonouredInSecondsOrAsAnHTTPDate() {
        #expect(
            Self.verdict(429, "TooManyRequests", headers: [HTTP2Header("retry-after", "30")])
                == .result(.retry(reason: "TooManyRequests", retryAfter: .seconds(30))))
        // 1_750_000_000 is Sun, 15 Jun 2025 15:06:40 GMT.
        let inAMinute = [HTTP2Header("retry-after", "Sun, 15 Jun 2025 15:07:40 GMT")]
        #expect(
            Self.verdict(503, "ServiceUnavailable", headers: inAMinute)
                == .result(.retry(reason: "ServiceUnavailable", retryAfter: .seconds(60))))
        #expect(
            Self.verdict(503, "Shutdown", headers: [HTTP2Header("retry-after", "Sun, 15 Jun 2025 15:00:00 GMT")])
                == .result(.retry(reason: "Shutdown", retryAfter: .zero)))
        #expect(
            Self.verdict(429, "TooManyRequests", headers: [HTTP2Header("retry-after", "soon")])
                == .result(.retry(reason: "TooManyRequests", retryAfter: nil)))
        #expect(
            Self.verdict(429, "TooManyRequests", headers: [HTTP2Header("retry-after", "-5")])
                == .result(.retry(reason: "TooManyRequests", retryAfter: nil)))
    }

    @Test func unregisteredTimestampIsReadAsMillisecondsOrSeconds() {
        let millis = APNsErrorResponse(body: Array(#"{"reason":"Unregistered","timestamp":1750000000123}"#.utf8))
        #expect(millis.reason == .unregistered)
        #expect(millis.timestamp == Date(timeIntervalSince1970: 1_750_000_000.123))
        let seconds = APNsErrorResponse(body: Array(#"{"reason":"Unregistered","timestamp":1750000000}"#.utf8))
        #expect(seconds.timestamp == Date(timeIntervalSince1970: 1_750_000_000))
        #expect(APNsErrorResponse(body: Array(#"{"reason":"BadTopic"}"#.utf8)).timestamp == nil)
        #expect(APNsErrorResponse(body: []) == APNsErrorResponse(reason: nil))
    }

    @Test(arguments: [
        (HTTP2Error.Code.goAway, "goaway"), (.streamReset, "stream_reset"), (.connectionLost, "connection_lost"),
        (.timeout, "timeout"), (.connectFailed, "connect_failed"), (.tlsFailed, "tls_failed"),
        (.protocolError, "protocol_error"), (.shutdown, "shutdown"),
    ])
    func transportErrorsAreRetriedWithTheirCode(_ code: HTTP2Error.Code, _ reason: String) {
        let result = APNsResponseClassifier.classify(HTTP2Error(code, "details for /3/device/\(sampleDeviceToken)"))
        #expect(result == .retry(reason: reason, retryAfter: nil))
        #expect(!(result.reason ?? "").contains(sampleDeviceToken))
    }
}
