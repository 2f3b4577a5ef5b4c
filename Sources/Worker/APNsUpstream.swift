import APNs
import Foundation
import HeraldCore
import Postgres
import Store

/// Sends claimed APNs deliveries: the stored body as an `alert` push, `apns-id` = the delivery id,
/// `apns-collapse-id` = the push's collapse id when it has a collapse key, else the delivery id (a re-send after a
/// crash replaces rather than duplicates on the device), `apns-expiration` = the delivery's expiry, and `apns-topic` = the app the
/// device registered (`bundleId`), else HERALD_APNS_TOPIC.
///
/// A Live Activity row goes as `apns-push-type: liveactivity` to `<topic>.push-type.liveactivity` with
/// the row's priority (5 silent, 10 with an alert) and no collapse id: the activity's own `timestamp`
/// already makes a repeated update harmless (the device shows the newest).
///
/// A push row of priority 5 is a retract message: `apns-push-type: background` at priority 5, no collapse id.
public struct APNsUpstream: DeliveryUpstream {
    static let liveActivityTopicSuffix = ".push-type.liveactivity"
    /// A push row of this priority is a silent retract message (functions/push_retract.sql): sent as
    /// `apns-push-type: background`, as Apple requires for a body with only `content-available`, without a
    /// collapse id.
    static let backgroundPriority = 5

    /// The longest TTL a push may have (28 days): a row without an expiry (queued before
    /// every push had one) gets it, never `apns-expiration: 0`, which tells APNs to try once and
    /// keep nothing.
    public static let longestStorage = TimeInterval(PushRules.ttlRange.upperBound)

    public let client: APNsClient
    public let defaultTopic: String
    let clock: any HeraldClock

    public func send(_ delivery: ClaimedDelivery, completion: @escaping @Sendable (DeliveryResult) -> Void) {
        guard let token = delivery.token else {
            completion(.tokenInvalid(reason: "no_token"))
            return
        }
        let id = UUIDText.string(delivery.id)
        let expiresAt = delivery.expiresAt ?? clock.now.addingTimeInterval(Self.longestStorage)
        let topic = delivery.bundleID ?? defaultTopic
        let liveActivity = delivery.activityEvent != nil
        let background = !liveActivity && delivery.priority == Self.backgroundPriority
        let notification = APNsNotification(
            deviceToken: token, environment: APNsEnvironment(rawValue: delivery.environment) ?? .production, id: id,
            pushType: liveActivity ? "liveactivity" : background ? "background" : "alert",
            topic: liveActivity ? topic + Self.liveActivityTopicSuffix : topic,
            priority: liveActivity || background ? delivery.priority ?? 10 : 10,
            expiration: Int(expiresAt.timeIntervalSince1970.rounded(.up)),
            collapseID: liveActivity || background ? nil : delivery.collapseID ?? id,
            payload: delivery.payloadBytes)
        guard topic != defaultTopic else {
            // Herald's own topic: its faults are the upstream's (no closure layer for the common case).
            return client.send(notification, completion: completion)
        }
        client.send(notification) { result in
            completion(Self.judged(result, deviceTopic: true))
        }
    }

    /// A topic refused for one device's own bundle id says the host registered an app Herald's key
    /// cannot push to: that device's delivery fails, the upstream is not paused for everyone.
    static func judged(_ result: DeliveryResult, deviceTopic: Bool) -> DeliveryResult {
        guard deviceTopic, case .setupFault(let reason) = result,
            ["BadTopic", "TopicDisallowed", "MissingTopic"].contains(reason)
        else { return result }
        return .failed(reason: reason)
    }

    public func connect() { client.connect() }

    public func shutdown() { client.shutdown() }

    public func pipe() -> UpstreamPipe? { UpstreamPipe(client.transportStatistics) }
}
