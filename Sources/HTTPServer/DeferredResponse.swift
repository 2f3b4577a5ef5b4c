import Synchronization

/// An answer a handler promises and someone else gives, from any thread, exactly once (later calls to
/// `complete` are ignored). If the server stops first, it answers 503 itself.
public final class DeferredResponse: Sendable {
    private struct State {
        var response: HTTPResponse?
        var observers: [@Sendable (HTTPResponse) -> Void] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Gives the answer; returns false if one was already given.
    @discardableResult
    public func complete(_ response: HTTPResponse) -> Bool {
        var final = response
        if final.deferred != nil {
            final = HTTPResponse(status: 500)
        }
        let observers: [@Sendable (HTTPResponse) -> Void]? = state.withLock { state in
            guard state.response == nil else {
                return nil
            }
            state.response = final
            defer { state.observers.removeAll() }
            return state.observers
        }
        guard let observers else {
            return false
        }
        for observer in observers {
            observer(final)
        }
        return true
    }

    /// Whether the answer was given.
    public var isComplete: Bool {
        state.withLock { $0.response != nil }
    }

    /// Calls `observer` with the answer once given (at once, on this thread, if it already was).
    public func whenComplete(_ observer: @escaping @Sendable (HTTPResponse) -> Void) {
        let done: HTTPResponse? = state.withLock { state in
            if let response = state.response {
                return response
            }
            state.observers.append(observer)
            return nil
        }
        if let done {
            observer(done)
        }
    }
}
