import HTTP2
import HeraldCore

/// Builds the HTTP/2 request for one notification. Pure.
public enum APNsRequestBuilder {
    /// Appended to the bundle id for Live Activity pushes.
    public static let liveActivityTopicSuffix = ".push-type.liveactivity"

    /// `POST /3/device/<token>` with `authorization: bearer <jwt>`, `apns-push-type`,
    /// `apns-topic` (the notification's, or `topic` with the Live Activity suffix when the push
    /// type is `liveactivity`), `apns-priority`, `apns-expiration` when set (never 0 by default: an
    /// absent header lets APNs store the notification for an offline device, 0 would not),
    /// `apns-collapse-id` when set, and `apns-id`.
    public static func request(
        for notification: APNsNotification, topic: String, providerToken: String,
        timeout: Duration? = nil
    ) -> HTTP2Request {
        request(
            for: notification, topic: topic, authorization: authorization(providerToken: providerToken),
            timeout: timeout)
    }

    /// The `authorization` header value for a provider token.
    public static func authorization(providerToken: String) -> String { "bearer " + providerToken }

    /// `request(for:topic:providerToken:)` with the `authorization` value already made (`authorization(providerToken:)`).
    public static func request(
        for notification: APNsNotification, topic: String, authorization: String,
        timeout: Duration? = nil
    ) -> HTTP2Request {
        var headers: [HTTP2Header] = []
        headers.reserveCapacity(7)
        headers.append(HTTP2Header("authorization", authorization))
        headers.append(HTTP2Header("apns-push-type", notification.pushType))
        headers.append(HTTP2Header("apns-topic", self.topic(for: notification, configuredTopic: topic)))
        headers.append(HTTP2Header("apns-priority", String(notification.priority)))
        if let expiration = notification.expiration {
            headers.append(HTTP2Header("apns-expiration", String(expiration)))
        }
        // The apns-id is new for every notification, and so is a collapse id equal to it (Herald's): never indexed,
        // so they do not push the topic and the push type out of the HPACK tables (HTTP2Header.neverIndexed).
        if let collapseID = notification.collapseID {
            headers.append(HTTP2Header("apns-collapse-id", collapseID, neverIndexed: collapseID == notification.id))
        }
        headers.append(HTTP2Header("apns-id", notification.id, neverIndexed: true))
        return HTTP2Request(
            method: "POST", path: "/3/device/" + notification.deviceToken, headers: headers,
            body: notification.payload, timeout: timeout)
    }

    /// The `apns-topic` a notification is sent with.
    public static func topic(for notification: APNsNotification, configuredTopic: String) -> String {
        if let topic = notification.topic { return topic }
        if notification.pushType == "liveactivity" { return configuredTopic + liveActivityTopicSuffix }
        return configuredTopic
    }

    /// Device tokens are hex strings (64 characters today; Apple reserves the right to make them
    /// longer). Anything else would corrupt the request path, so it is refused before sending.
    public static func isWellFormedDeviceToken(_ token: String) -> Bool {
        let bytes = token.utf8
        guard !bytes.isEmpty, bytes.count <= 200 else { return false }
        // Over the contiguous bytes when there are some (every native string): no iterator per byte.
        return bytes.withContiguousStorageIfAvailable { $0.allSatisfy(HexDigit.isDigit) }
            ?? bytes.allSatisfy(HexDigit.isDigit)
    }

}
