import Foundation
import HTTP2
import HeraldCore

/// Turns an APNs answer into a `DeliveryResult`. Pure.
///
/// - 2xx: sent.
/// - BadDeviceToken and DeviceTokenNotForTopic (under any status): the token is suspect, not dead. APNs says
///   BadDeviceToken of a token of the other environment too, and DeviceTokenNotForTopic of a whole fleet when
///   Herald's topic is wrong: the worker retires the token only once the upstream accepts another one
///   (Worker's TokenVerdicts).
/// - 410 (any other reason): the token is dead since APNs' `timestamp` (never later than now).
/// - 403 ExpiredProviderToken and InvalidProviderToken: the client renews its JWT and resends once
///   (`renewProviderToken`); the same answer after that, or when the token is too young to renew, is a setup fault.
/// - Every other 403 (MissingProviderToken, UnrelatedKeyIdInToken, BadEnvironmentKeyIdInToken, BadCertificate,
///   BadCertificateEnvironment, Forbidden, a reason Apple adds later): a setup fault; BadEnvironmentKeyIdInToken
///   is one of that environment alone (`environmentReasons`). APNs answers 403 only about the provider's credentials,
///   never about one notification, so no delivery is failed for it.
/// - 400 MissingTopic, BadTopic, TopicDisallowed (and BadCertificateEnvironment under any status): a setup fault,
///   the topic Herald was configured with is refused.
/// - 429, 5xx: retry, honouring Retry-After when APNs gives one.
/// - Every other status: failed, permanent for this delivery.
/// - Transport errors: retry, with the error's stable code as the reason.
///
/// Reasons are APNs' own reason strings (`BadDeviceToken`), or `http_<status>` when the body had
/// none; they never contain the device token or the JWT.
public enum APNsResponseClassifier {
    public enum Verdict: Sendable, Equatable {
        case result(DeliveryResult)
        /// 403 ExpiredProviderToken or InvalidProviderToken: renew the provider token, reconnect, resend once.
        case renewProviderToken(reason: APNsErrorReason)
    }

    /// Reasons that blame Herald's configuration whatever the status.
    static let setupReasons: Set<APNsErrorReason> = [
        .missingTopic, .badTopic, .topicDisallowed, .badCertificate, .badCertificateEnvironment,
        .missingProviderToken, .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken, .forbidden,
        .invalidProviderToken, .expiredProviderToken,
    ]

    /// Setup faults of one environment alone: its key is scoped to the other (Apple issues keys for sandbox or
    /// production only), so the other environment may still be sending (the worker pauses this one).
    public static let environmentReasons: Set<APNsErrorReason> = [.badEnvironmentKeyIDInToken]

    /// The only response headers `classify` reads: the client keeps these and drops the rest
    /// (`HTTP2ClientConfiguration.responseHeaders`).
    public static let readHeaders = ["retry-after"]

    public static func classify(_ response: HTTP2Response, now: Date) -> Verdict {
        let status = response.status
        if (200..<300).contains(status) { return .result(.sent) }
        let error = APNsErrorResponse(body: response.body)
        let reason = error.reason?.rawValue ?? "http_\(status)"
        switch status {
        case _ where error.reason == .badDeviceToken || error.reason == .deviceTokenNotForTopic:
            return .result(.tokenSuspect(reason: reason))
        case 410:
            return .result(.tokenInvalid(reason: reason, since: error.timestamp.map { min($0, now) }))
        case 403:
            if let renewable = error.reason, renewable == .expiredProviderToken || renewable == .invalidProviderToken {
                return .renewProviderToken(reason: renewable)
            }
            return .result(.setupFault(reason: reason))
        case _ where error.reason.map { setupReasons.contains($0) } ?? false:
            return .result(.setupFault(reason: reason))
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

    /// The result when APNs refused the provider token (`reason`) and renewing it did not help: it refused the
    /// renewed one too, or the token was too young to renew (renewing more often than every 20 minutes earns
    /// TooManyProviderTokenUpdates). Either way the key, team or clock is wrong: Herald's setup, not the delivery.
    public static func providerTokenRefused(_ reason: APNsErrorReason) -> DeliveryResult {
        .setupFault(reason: reason.rawValue)
    }
}
