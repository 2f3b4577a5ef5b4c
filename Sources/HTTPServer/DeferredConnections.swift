import CMicroHTTPD
import Synchronization

/// Connections suspended for a deferred answer. Once closed (the server is stopping) nothing is resumed
/// any more except by `closeAll` itself: libmicrohttpd must not see a resume after it stopped.
final class DeferredConnections: Sendable {
    private struct Registry: ~Copyable {
        var waiting: [ObjectIdentifier: DeferredHandOff] = [:]
        /// Inline mode: answers an I/O thread is waiting for.
        var inline: [ObjectIdentifier: DeferredResponse] = [:]
        var isClosed = false
    }

    private let registry = Mutex(Registry())

    /// Keeps the (already suspended) connection suspended until `pending` is completed.
    func hold(_ pending: DeferredResponse, state: RequestState, connection: OpaquePointer) {
        let handOff = DeferredHandOff(state: state, connection: connection)
        let key = ObjectIdentifier(state)
        let registered = registry.withLock { registry in
            guard !registry.isClosed else {
                handOff.resume(with: HTTPResponse(status: 503))
                return false
            }
            registry.waiting[key] = handOff
            return true
        }
        guard registered else {
            return
        }
        pending.whenComplete { [self] response in
            registry.withLock { registry in
                guard let handOff = registry.waiting.removeValue(forKey: key) else {
                    return  // answered by closeAll already
                }
                handOff.resume(with: response)
            }
        }
    }

    /// Inline mode: an answer an I/O thread waits for, completed by `closeAll` if still open then.
    func track(_ pending: DeferredResponse) {
        let closed = registry.withLock { registry in
            if !registry.isClosed {
                registry.inline[ObjectIdentifier(pending)] = pending
            }
            return registry.isClosed
        }
        if closed {
            pending.complete(HTTPResponse(status: 503))
        }
    }

    func untrack(_ pending: DeferredResponse) {
        registry.withLock { _ = $0.inline.removeValue(forKey: ObjectIdentifier(pending)) }
    }

    /// Answers every waiting connection with `response` and refuses later waits (stop()).
    func closeAll(with response: HTTPResponse) {
        let inline = registry.withLock { registry in
            registry.isClosed = true
            for handOff in registry.waiting.values {
                handOff.resume(with: response)
            }
            registry.waiting.removeAll()
            defer { registry.inline.removeAll() }
            return Array(registry.inline.values)
        }
        for pending in inline {
            pending.complete(response)
        }
    }

    var count: Int {
        registry.withLock { $0.waiting.count }
    }
}

/// A suspended connection and its request's state, handed to whoever completes the deferred answer.
struct DeferredHandOff: @unchecked Sendable {
    let state: RequestState
    let connection: OpaquePointer

    /// Sets the answer and resumes; libmicrohttpd then calls the access handler, which queues it.
    func resume(with response: HTTPResponse) {
        state.response = response
        MHD_resume_connection(connection)
    }
}
