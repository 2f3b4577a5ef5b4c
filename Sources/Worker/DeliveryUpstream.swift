import Foundation
import HTTP2
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
    /// How full the pipe to the upstream is now; nil when the client cannot tell (a scripted one).
    func pipe() -> UpstreamPipe?
}

extension DeliveryUpstream {
    public func pipe() -> UpstreamPipe? { nil }
}

/// The streams of one upstream's HTTP/2 clients, now. Sends in flight are bounded by streams over the round
/// trip: `streamsInFlight + streamsAvailable` streams answered every RTT are the most one worker can send.
public struct UpstreamPipe: Sendable, Equatable {
    /// Streams open (requests sent and not answered).
    public var streamsInFlight: Int
    /// Streams the ready connections may still open (our cap, lowered by the peer's SETTINGS_MAX_CONCURRENT_STREAMS).
    public var streamsAvailable: Int
    /// Requests waiting in the client for a stream: claimed ahead, ready to go the moment one frees.
    public var queued: Int
}

/// In an extension, so the memberwise init stays synthesized.
extension UpstreamPipe {
    /// The sum over several clients (APNs keeps one per environment).
    init(_ statistics: [HTTP2ClientStatistics]) {
        self.init(
            streamsInFlight: statistics.reduce(0) { $0 + $1.streamsInFlight },
            streamsAvailable: statistics.reduce(0) { $0 + $1.streamsAvailable },
            queued: statistics.reduce(0) { $0 + $1.queued })
    }
}
