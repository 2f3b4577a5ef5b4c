import FCM
import Foundation
import HeraldCore
import Store

/// Sends claimed FCM deliveries: the stored message with the device's token, `android.ttl`
/// set to what is left of the delivery's TTL, and `android.collapse_key` for a push with a collapse key.
public struct FCMUpstream: DeliveryUpstream {
    public let client: FCMClient
    let clock: any HeraldClock

    public func send(_ delivery: ClaimedDelivery, completion: @escaping @Sendable (DeliveryResult) -> Void) {
        guard let token = delivery.token else {
            completion(.tokenInvalid(reason: "no_token"))
            return
        }
        // Whole seconds left, at least 1 (the claim already expired rows past their TTL).
        let ttl = delivery.expiresAt.map { max(1, Int($0.timeIntervalSince(clock.now).rounded(.up))) }
        client.send(
            FCMMessage(token: token, message: delivery.payloadBytes, ttlSeconds: ttl, collapseKey: delivery.collapseID),
            completion: completion)
    }

    public func connect() { client.connect() }

    public func shutdown() { client.shutdown() }

    public func pipe() -> UpstreamPipe? { client.transportStatistics.map { UpstreamPipe([$0]) } }
}
