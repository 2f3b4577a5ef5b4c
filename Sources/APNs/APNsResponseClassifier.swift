import Foundation
import HTTP2
import HeraldCore

/// Turns an APNs answer into a `DeliveryResult` (protocol-notes section 4). Pure.
///
/// - 2xx: sent.
/// - 410 (any reason) and 400 BadDeviceToken: the token is dead.
/// - 403 ExpiredProviderToken: the client renews its JWT and resends once (`renewProviderToken`).
/// - 429, 5xx: retry, honouring Retry-After when APNs gives one.
/// - Every other status: failed, permanent for this delivery.
/// - Transport errors: retry, with the error's stable code as the reason.
///
/// Reasons are APNs' own reason strings (`BadDeviceToken`), or `http_<status>` when the body had
/// none; they never contain the device token or the JWT.
public enum APNsResponseClassifier {
    public enum Verdict: Sendable, Equatable {
        case result(DeliveryResult)
        /// 403 ExpiredProviderToken: renew the provider token, reconnect, resend.
        case renewProviderToken
    }

    public static func classify(_ response: HTTP2Response, now: Date) -> Verdict {
        let status = response.status
        if (200..<300).contains(status) { return .result(.sent) }
        let error = APNsErrorResponse(body: response.body)
        let reason = error.reason?.rawValue ?? "http_\(status)"
        switch status {
        case 410:
            return .result(.tokenInvalid(reason: reason))
        case 400 where error.reason == .badDeviceToken:
            return .result(.tokenInvalid(reason: reason))
        case 403 where error.reason == .expiredProviderToken:
            return .renewProviderToken
        case 429, 500..<600:
            let retryAfter = RetryAfter.parse(response.header("retry-after"), now: now)
            return .result(.retry(reason: reason, retryAfter: retryAfter))
        default:
            return .result(.failed(reason: reason))
        }
    }

    /// What a request that got no response comes to: always worth retrying later (the
    /// notification itself is fine). The reason is the transport's stable code (`connection_lost`).
    public static func classify(_ error: HTTP2Error) -> DeliveryResult {
        .retry(reason: error.code.rawValue, retryAfter: nil)
    }

    /// The result when the resend after renewing the provider token hit ExpiredProviderToken again.
    public static let expiredAfterRenewal: DeliveryResult =
        .retry(reason: APNsErrorReason.expiredProviderToken.rawValue, retryAfter: nil)
}
