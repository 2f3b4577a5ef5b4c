import Synchronization

/// Answers one request. Every method may be called from any thread; only the first call of any of them takes
/// effect. Called on the server's loop thread (inside `handle`, or later), it acts inline without a thread hop.
public final class HTTP2ServerResponder: Sendable {
    private enum Action {
        case respond(HTTP2Response)
        case reset
        case close
        case goAway([UInt8])
    }

    private let loop: EventLoop
    nonisolated(unsafe) private let connection: ServerConnection
    private let streamID: Int32
    private let used = Atomic<Bool>(false)

    init(loop: EventLoop, connection: ServerConnection, streamID: Int32) {
        self.loop = loop
        self.connection = connection
        self.streamID = streamID
    }

    /// Sends the response (headers, then the body if any).
    public func respond(_ response: HTTP2Response) {
        perform(.respond(response))
    }

    /// Resets the stream (RST_STREAM INTERNAL_ERROR) instead of answering.
    public func resetStream() {
        perform(.reset)
    }

    /// Drops the TCP connection without answering (the client sees a connection loss).
    public func closeConnection() {
        perform(.close)
    }

    /// Sends GOAWAY with a last stream id below this stream: this stream and every later one count as unprocessed
    /// (the client must retry them); earlier streams are still answered, then the connection closes.
    public func goAway(debugData: [UInt8] = []) {
        perform(.goAway(debugData))
    }

    /// Runs `action` on the server's loop thread once `delay` has passed: a timer of the loop, so nothing waits on
    /// a thread and an answer given from `action` goes out inline, written with the others due in the same
    /// iteration. A server that stops first drops it.
    public func after(_ delay: Duration, _ action: @escaping @Sendable () -> Void) {
        if loop.inEventLoop {
            loop.schedule(at: MonotonicClock.now() + delay.nanoseconds, action)
        } else {
            let loop = self.loop
            let deadline = MonotonicClock.now() + delay.nanoseconds
            loop.execute {
                loop.schedule(at: deadline, action)
            }
        }
    }

    private func perform(_ action: Action) {
        guard !used.exchange(true, ordering: .relaxed) else {
            return
        }
        if loop.inEventLoop {
            run(action)
        } else {
            loop.execute(handingOver: action) { [self] action in
                run(action)
            }
        }
    }

    private func run(_ action: Action) {
        switch action {
        case .respond(let response):
            connection.respond(streamID: streamID, response)
        case .reset:
            connection.reset(streamID: streamID)
        case .close:
            connection.requestClose()
        case .goAway(let debugData):
            connection.goAway(before: streamID, debugData: debugData)
        }
    }
}
