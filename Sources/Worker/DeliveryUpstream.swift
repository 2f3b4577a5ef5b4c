import Foundation
import HeraldCore
import Store

/// Sends one claimed delivery to APNs or FCM and reports the classified answer. The seam between
/// the queue and the upstream clients: one implementation per upstream.
public protocol DeliveryUpstream: Sendable {
    /// `completion` runs once, on the client's event-loop thread: it must be short.
    func send(_ delivery: ClaimedDelivery, completion: @escaping @Sendable (DeliveryResult) -> Void)
    /// Opens the connections now, at the worker's start, rather than at the first send. Returns at once.
    func connect()
    /// Fails what is in flight and closes the connections.
    func shutdown()
}
