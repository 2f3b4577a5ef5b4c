import CCurl
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one thread that owns the libcurl multi handle and every transfer on it.
///
/// Other threads hand transfers over through a Mutex-guarded inbox and wake the thread with
/// `curl_multi_wakeup`; the thread adds them, drives libcurl (`curl_multi_perform`), completes what finished,
/// and sleeps in `curl_multi_poll` until a socket, a libcurl timer or a wake-up needs it. Connections (and
/// their HTTP/2 multiplexing) live in the multi handle and are reused across transfers to the same host.
final class FetchLoop: Sendable {
    private struct Inbox {
        var pending: [FetchTransfer] = []
        var stopping = false
    }

    /// Touched by other threads only through `curl_multi_wakeup`, and only under the inbox lock while not
    /// stopping: the thread frees the handle only after it saw `stopping`, so no wake-up can follow.
    nonisolated(unsafe) private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let thread = Mutex<pthread_t?>(nil)
    /// The loop thread's `pthread_t` (0 before it runs).
    private let threadID = Atomic<UInt>(0)

    /// Connections kept open between transfers, across every host this fetcher talks to.
    static let idleConnections = 256

    /// Nil when libcurl cannot make a multi handle or no thread can be started (out of memory or threads).
    init?() {
        guard let multi = curl_multi_init() else {
            return nil
        }
        self.multi = multi
        // Several requests to one host share a connection as HTTP/2 streams.
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        // Idle connections kept for reuse. libcurl's default (4 x the transfers in progress) shrinks as
        // transfers finish, closing connections a moment before the next send needs one: every send to an
        // HTTP/1.1 receiver then pays a TCP and TLS handshake (bench/webhooks shows the cost).
        _ = CCurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.idleConnections)

        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&handle, nil, heraldFetchLoopMain, context) == 0 else {
            Unmanaged<FetchLoop>.fromOpaque(context).release()
            curl_multi_cleanup(multi)
            return nil
        }
        thread.withLock { $0 = handle }
    }

    /// True on the loop's own thread (inside a completion).
    var isCurrentThread: Bool {
        threadID.load(ordering: .relaxed) == pthread_self()
    }

    /// Hands a transfer to the thread. False once `stop()` was called: the caller completes it itself.
    func submit(_ transfer: FetchTransfer) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.stopping else {
                return false
            }
            inbox.pending.append(transfer)
            _ = curl_multi_wakeup(multi)
            return true
        }
    }

    /// Fails every transfer not finished with `stopped`, ends the thread and joins it (unless called on it, from
    /// a completion: the thread then ends after that completion). Idempotent.
    func stop() {
        inbox.withLock { inbox in
            guard !inbox.stopping else {
                return
            }
            inbox.stopping = true
            _ = curl_multi_wakeup(multi)
        }
        guard
            let handle = thread.withLock({ handle -> pthread_t? in
                defer { handle = nil }
                return handle
            })
        else {
            return
        }
        if isCurrentThread {
            pthread_detach(handle)
        } else {
            pthread_join(handle, nil)
        }
    }

    // MARK: The loop thread

    fileprivate func run() {
        threadID.store(pthread_self(), ordering: .relaxed)
        Thread.current.name = "herald-fetch"
        var active: [UnsafeMutableRawPointer: FetchTransfer] = [:]
        while true {
            let (incoming, stopping) = inbox.withLock { inbox in
                defer { inbox.pending = [] }
                return (inbox.pending, inbox.stopping)
            }
            if stopping {
                incoming.forEach { $0.complete(.failure(HTTPFetchError.stoppedError)) }
                break
            }
            for transfer in incoming {
                add(transfer, to: &active)
            }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            completeFinished(&active)
            // Wakes for socket activity, libcurl's next timeout, or curl_multi_wakeup; the cap only bounds a
            // sleep in case libcurl asked for none.
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for (easy, transfer) in active {
            _ = curl_multi_remove_handle(multi, easy)
            transfer.close()
            transfer.complete(.failure(HTTPFetchError.stoppedError))
        }
        curl_multi_cleanup(multi)
    }

    private func add(_ transfer: FetchTransfer, to active: inout [UnsafeMutableRawPointer: FetchTransfer]) {
        switch transfer.open() {
        case .failure(let error):
            transfer.complete(.failure(error))
        case .success(let easy):
            let code = curl_multi_add_handle(multi, easy)
            guard code == CURLM_OK else {
                transfer.close()
                let text = String(cString: curl_multi_strerror(code))
                transfer.complete(.failure(HTTPFetchError(.network, "\(text) (curlm \(code.rawValue))")))
                return
            }
            active[easy] = transfer
        }
    }

    private func completeFinished(_ active: inout [UnsafeMutableRawPointer: FetchTransfer]) {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = active.removeValue(forKey: easy)
            else {
                continue
            }
            // Read before removing: the message belongs to the multi handle and dies with the removal.
            let code = message.pointee.data.result
            _ = curl_multi_remove_handle(multi, easy)
            let result = transfer.result(code)
            transfer.close()
            transfer.complete(result)
        }
    }
}

private func heraldFetchLoopMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    if let context {
        Unmanaged<FetchLoop>.fromOpaque(context).takeRetainedValue().run()
    }
    return nil
}
