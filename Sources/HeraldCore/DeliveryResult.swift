import Foundation

/// What one send attempt to APNs or FCM came to, once the upstream's answer is classified
/// (`APNsResponseClassifier`, `FCMResponseClassifier`). The worker turns it into the delivery's outcome.
public enum DeliveryResult: Sendable, Equatable {
    /// 2xx: the upstream accepted the notification.
    case sent
    /// The device token is dead (APNs 410 Unregistered, FCM UNREGISTERED): mark it invalid. `since` is when
    /// it stopped being valid as the upstream says (APNs' 410 `timestamp`), nil for the answer's time.
    case tokenInvalid(reason: String, since: Date? = nil)
    /// The upstream refused the token in words that may as well blame Herald's setup (APNs BadDeviceToken,
    /// also said of a token of the other environment, and DeviceTokenNotForTopic; FCM INVALID_ARGUMENT
    /// about the token): the token is suspect until the same upstream accepts another token
    /// (Worker's TokenVerdicts), and never retired before.
    case tokenSuspect(reason: String)
    /// Worth trying again later (429, 5xx, timeouts, connection loss); `retryAfter` is the
    /// upstream's Retry-After when it gave one.
    case retry(reason: String, retryAfter: Duration?)
    /// Permanent for this delivery (every other 4xx): never retried unchanged.
    case failed(reason: String)
    /// The upstream refused Herald's own credentials or configuration, not this delivery
    /// (APNs InvalidProviderToken after a renewal, MissingTopic, BadTopic, TopicDisallowed,
    /// BadCertificateEnvironment; FCM 401 after a renewal, THIRD_PARTY_AUTH_ERROR, PERMISSION_DENIED,
    /// SENDER_ID_MISMATCH).
    /// The worker pauses that upstream and puts the row back with its attempt unspent.
    case setupFault(reason: String)

    /// The reason string recorded as the delivery's `last_error` (never contains a token).
    public var reason: String? {
        switch self {
        case .sent: return nil
        case .tokenInvalid(let reason, _), .tokenSuspect(let reason), .retry(let reason, _), .failed(let reason),
            .setupFault(let reason):
            return reason
        }
    }
}
