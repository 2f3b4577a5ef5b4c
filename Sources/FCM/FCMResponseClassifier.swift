import Foundation
import HTTP2
import HeraldCore

/// Turns an FCM v1 answer into a `DeliveryResult` (protocol-notes section 7). Pure.
///
/// - 2xx: sent.
/// - UNREGISTERED: the token is dead.
/// - THIRD_PARTY_AUTH_ERROR, SENDER_ID_MISMATCH, INVALID_ARGUMENT: failed.
/// - Other 401 (UNAUTHENTICATED): the client renews its access token and resends once.
/// - QUOTA_EXCEEDED, UNAVAILABLE, INTERNAL, 429 and 5xx: retry, honouring Retry-After.
/// - Every other status: failed.
/// - Transport errors: retry, with the error's stable code as the reason.
///
/// Reasons are FCM's error codes (`UNREGISTERED`), else its status (`NOT_FOUND`), else
/// `http_<status>`; never the token or the message text.
public enum FCMResponseClassifier {
    public enum Verdict: Sendable, Equatable {
        case result(DeliveryResult)
        /// 401: renew the access token and resend.
        case renewAccessToken
    }

    /// The result when the resend after renewing the access token got 401 again.
    public static let unauthenticatedAfterRenewal: DeliveryResult = .retry(reason: "unauthenticated", retryAfter: nil)

    public static func classify(_ response: HTTP2Response, now: Date) -> Verdict {
        let status = response.status
        if (200..<300).contains(status) { return .result(.sent) }
        let error = FCMErrorResponse(body: response.body)
        let reason = error.reason ?? "http_\(status)"
        let retry: Verdict = .result(.retry(reason: reason,
                                            retryAfter: RetryAfter.parse(response.header("retry-after"), now: now)))
        switch error.errorCode {
        case .unregistered?:
            return .result(.tokenInvalid(reason: reason))
        case .thirdPartyAuthError?, .senderIDMismatch?, .invalidArgument?:
            return .result(.failed(reason: reason))
        case .quotaExceeded?, .unavailable?, .internal?:
            return retry
        default:
            break
        }
        switch status {
        case 401: return .renewAccessToken
        case 429, 500..<600: return retry
        default: return .result(.failed(reason: reason))
        }
    }

    /// What a request that got no response comes to: retry, reason `connection_lost` etc.
    public static func classify(_ error: HTTP2Error) -> DeliveryResult {
        .retry(reason: error.code.rawValue, retryAfter: nil)
    }
}
