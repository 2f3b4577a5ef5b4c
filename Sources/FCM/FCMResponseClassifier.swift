import Foundation
import HTTP2
import HeraldCore

/// Turns an FCM v1 answer into a `DeliveryResult`. Pure.
///
/// - 2xx: sent.
/// - UNREGISTERED (the app is gone from the device): the token is dead.
/// - INVALID_ARGUMENT about the registration token (a `message.token` field violation, or FCM's "not a valid FCM
///   registration token"): the token is suspect, retired only once the upstream accepts another token (Worker's
///   TokenVerdicts): a whole fleet refused this way says more about Herald's setup. Any other INVALID_ARGUMENT:
///   failed, the message is wrong.
/// - SENDER_ID_MISMATCH (the service account's project is not the one that issued the token: firebase-admin's
///   `mismatched-credential`), THIRD_PARTY_AUTH_ERROR (the APNs or web push credentials in Firebase), and any
///   other 403 (PERMISSION_DENIED: the service account may not send for the project): a setup fault, never a
///   dead token.
/// - Other 401 (UNAUTHENTICATED): the client renews its access token and resends once; a 401 again is a setup fault.
/// - QUOTA_EXCEEDED: retry after at least `quotaExceededMinimumWait` (60 s), longer when Retry-After says so.
/// - UNAVAILABLE, INTERNAL, 429 and 5xx: retry, honouring Retry-After.
/// - Every other status: failed.
/// - Transport errors: retry, with the error's stable code as the reason.
///
/// Reasons are FCM's error codes (`UNREGISTERED`), else its status (`NOT_FOUND`), else
/// `http_<status>`; never the token or the message text.
public enum FCMResponseClassifier {
    public enum Verdict: Sendable, Equatable {
        case result(DeliveryResult)
        /// 401: renew the access token and resend; `reason` is what a second 401 records.
        case renewAccessToken(reason: String)
    }

    /// FCM asks for at least a minute of backoff on project quota errors.
    public static let quotaExceededMinimumWait: Duration = .seconds(60)

    /// The result when the resend after renewing the access token got 401 (`reason`) again: FCM refuses the
    /// service account's freshly issued token, so the account (or its project access) is wrong.
    public static func unauthenticatedAfterRenewal(_ reason: String) -> DeliveryResult {
        .setupFault(reason: reason)
    }

    /// The only response headers `classify` reads: the client keeps these and drops the rest
    /// (`HTTP2ClientConfiguration.responseHeaders`).
    public static let readHeaders = ["retry-after"]

    public static func classify(_ response: HTTP2Response, now: Date) -> Verdict {
        let status = response.status
        if (200..<300).contains(status) { return .result(.sent) }
        let error = FCMErrorResponse(body: response.body)
        let reason = error.reason ?? "http_\(status)"
        let retryAfter = RetryAfter.parse(response.header("retry-after"), now: now)
        switch error.errorCode {
        case .unregistered?:
            return .result(.tokenInvalid(reason: reason))
        case .invalidArgument?:
            return .result(error.isAboutRegistrationToken ? .tokenSuspect(reason: reason) : .failed(reason: reason))
        case .senderIDMismatch?, .thirdPartyAuthError?:
            return .result(.setupFault(reason: reason))
        case .quotaExceeded?:
            return .result(.retry(reason: reason, retryAfter: max(retryAfter ?? .zero, quotaExceededMinimumWait)))
        case .unavailable?, .internal?:
            return .result(.retry(reason: reason, retryAfter: retryAfter))
        default:
            break
        }
        switch status {
        case 400 where error.isAboutRegistrationToken: return .result(.tokenSuspect(reason: reason))
        case 401: return .renewAccessToken(reason: reason)
        case 403: return .result(.setupFault(reason: reason))
        case 429, 500..<600: return .result(.retry(reason: reason, retryAfter: retryAfter))
        default: return .result(.failed(reason: reason))
        }
    }

    /// What a request that got no response comes to: retry, reason `connection_lost` etc.
    public static func classify(_ error: HTTP2Error) -> DeliveryResult {
        .retry(reason: error.code.rawValue, retryAfter: nil)
    }
}
