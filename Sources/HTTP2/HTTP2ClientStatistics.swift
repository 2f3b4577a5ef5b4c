import Synchronization

/// A snapshot of an `HTTP2Client`'s counters (totals since it was made) and gauges (now).
public struct HTTP2ClientStatistics: Sendable, Equatable {
    /// Connections whose TCP connect was started.
    public var connectionsOpened: Int
    /// Connections that completed the TLS/h2 handshake and the peer's SETTINGS.
    public var connectionsReady: Int
    /// Connections that ended with an error (connect, TLS, loss, unanswered PING, protocol error).
    public var connectionsFailed: Int
    public var goAwaysReceived: Int
    /// Requests resent because the peer's GOAWAY showed they were not processed.
    public var requestsRetriedAfterGoAway: Int
    /// Requests resent after RST_STREAM REFUSED_STREAM (or a connection that died before they left).
    public var requestsRetriedAfterRefused: Int
    public var pingsSent: Int
    public var pingsAnswered: Int
    public var requestsTimedOut: Int
    /// Requests failed at once because the upstream was in connect backoff (no attempt allowed yet).
    public var requestsFailedInConnectBackoff: Int
    /// Connection attempts that failed in a row, now (0 once a connection is ready).
    public var consecutiveConnectFailures: Int
    /// The wait chosen after the last failed attempt, in milliseconds (0 once a connection is ready).
    public var connectBackoffMilliseconds: Int
    /// Streams open now.
    public var streamsInFlight: Int
    /// Streams the ready connections may still open now: each connection's limit (ours, lowered by the peer's
    /// SETTINGS_MAX_CONCURRENT_STREAMS, and one stream until the peer accepted our credentials) less its open
    /// streams. With `streamsInFlight` it says how full the pipe is.
    public var streamsAvailable: Int
    /// Requests waiting for a stream now.
    public var queued: Int
}

/// The live counters behind `HTTP2ClientStatistics`: written by the loop thread, read from anywhere.
final class ClientCounters: Sendable {
    let connectionsOpened = Atomic<Int>(0)
    let connectionsReady = Atomic<Int>(0)
    let connectionsFailed = Atomic<Int>(0)
    let goAwaysReceived = Atomic<Int>(0)
    let requestsRetriedAfterGoAway = Atomic<Int>(0)
    let requestsRetriedAfterRefused = Atomic<Int>(0)
    let pingsSent = Atomic<Int>(0)
    let pingsAnswered = Atomic<Int>(0)
    let requestsTimedOut = Atomic<Int>(0)
    let requestsFailedInConnectBackoff = Atomic<Int>(0)
    let consecutiveConnectFailures = Atomic<Int>(0)
    let connectBackoffMilliseconds = Atomic<Int>(0)
    let streamsInFlight = Atomic<Int>(0)
    let streamsAvailable = Atomic<Int>(0)
    let queued = Atomic<Int>(0)

    var snapshot: HTTP2ClientStatistics {
        HTTP2ClientStatistics(
            connectionsOpened: connectionsOpened.load(ordering: .relaxed),
            connectionsReady: connectionsReady.load(ordering: .relaxed),
            connectionsFailed: connectionsFailed.load(ordering: .relaxed),
            goAwaysReceived: goAwaysReceived.load(ordering: .relaxed),
            requestsRetriedAfterGoAway: requestsRetriedAfterGoAway.load(ordering: .relaxed),
            requestsRetriedAfterRefused: requestsRetriedAfterRefused.load(ordering: .relaxed),
            pingsSent: pingsSent.load(ordering: .relaxed),
            pingsAnswered: pingsAnswered.load(ordering: .relaxed),
            requestsTimedOut: requestsTimedOut.load(ordering: .relaxed),
            requestsFailedInConnectBackoff: requestsFailedInConnectBackoff.load(ordering: .relaxed),
            consecutiveConnectFailures: consecutiveConnectFailures.load(ordering: .relaxed),
            connectBackoffMilliseconds: connectBackoffMilliseconds.load(ordering: .relaxed),
            streamsInFlight: streamsInFlight.load(ordering: .relaxed),
            streamsAvailable: streamsAvailable.load(ordering: .relaxed),
            queued: queued.load(ordering: .relaxed))
    }
}

extension Atomic where Value == Int {
    /// Adds one (relaxed: these are statistics).
    @inline(__always)
    func increment() {
        add(1, ordering: .relaxed)
    }
}
