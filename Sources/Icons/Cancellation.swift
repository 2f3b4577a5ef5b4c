import CRsvg

/// A GCancellable: the waiting caller cancels it when the time budget runs out, librsvg checks it while it parses,
/// and the render checks it between steps. GCancellable is thread-safe.
final class Cancellation: Sendable {
    nonisolated(unsafe) let handle: UnsafeMutablePointer<GCancellable>

    init() {
        handle = g_cancellable_new()
    }

    deinit {
        g_object_unref(handle)
    }

    func cancel() {
        g_cancellable_cancel(handle)
    }

    var isCancelled: Bool {
        g_cancellable_is_cancelled(handle) != 0
    }
}
