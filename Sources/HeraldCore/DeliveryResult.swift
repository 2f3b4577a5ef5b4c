/// What one send attempt to APNs or FCM came to, once the upstream's answer is classified
/// (protocol-notes sections 4 and 7). The worker turns it into the delivery's outcome.
public enum DeliveryResult: Sendable, Equatable {
    /// 2xx: the upstream accepted the notification.
    case sent
    /// The device token is dead (APNs 410 / BadDeviceToken, FCM UNREGISTERED): mark it invalid.
    case tokenInvalid(reason: String)
    /// Worth trying again later (429, 5xx, timeouts, connection loss); `retryAfter` is the
    /// upstream's Retry-After when it gave one.
    case retry(reason: String, retryAfter: Duration?)
    /// Permanent for this delivery (every other 4xx): never retried unchanged.
    case failed(reason: String)
    /// The upstream refused Herald's own credentials or configuration, not this delivery (SPEC 5:
    /// APNs InvalidProviderToken after a renewal, MissingTopic, BadTopic, TopicDisallowed,
    /// BadCertificateEnvironment; FCM 401 after a renewal, THIRD_PARTY_AUTH_ERROR, PERMISSION_DENIED).
    /// The worker pauses that upstream and puts the row back with its attempt unspent.
    case setupFault(reason: String)

    /// The reason string recorded as the delivery's `last_error` (never contains a token).
    public var reason: String? {
        switch self {
        case .sent: return nil
        case .tokenInvalid(let reason), .retry(let reason, _), .failed(let reason), .setupFault(let reason): return reason
        }
    }
}
