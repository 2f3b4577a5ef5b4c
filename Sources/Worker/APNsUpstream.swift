import APNs
import Foundation
import Postgres
import HeraldCore
import Store

/// Sends claimed APNs deliveries: the stored body as an `alert` push, `apns-id` and
/// `apns-collapse-id` = the delivery id (a re-send after a crash replaces rather than duplicates
/// on the device), `apns-expiration` = the delivery's TTL (0 without one: no store-and-forward).
public struct APNsUpstream: DeliveryUpstream {
    public let client: APNsClient

    public init(client: APNsClient) { self.client = client }

    public func send(_ delivery: ClaimedDelivery, completion: @escaping @Sendable (DeliveryResult) -> Void) {
        guard let token = delivery.token else {
            completion(.tokenInvalid(reason: "no_token"))
            return
        }
        let id = PostgresUUID.format(delivery.id)
        let notification = APNsNotification(
            deviceToken: token, environment: APNsEnvironment(rawValue: delivery.environment) ?? .production, id: id,
            pushType: "alert", priority: 10,
            expiration: delivery.expiresAt.map { Int($0.timeIntervalSince1970.rounded(.up)) },
            collapseID: id, payload: Array(delivery.payload.utf8))
        client.send(notification, completion: completion)
    }

    public func shutdown() { client.shutdown() }
}
