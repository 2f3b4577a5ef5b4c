#if canImport(Glibc)
    import Glibc
#endif

/// Runs blocking work (name resolution) on a short-lived thread of its own, off the event loop.
enum DetachedThread {
    private final class Box {
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }

    /// Returns false when no thread could be started (the caller runs `work` itself or fails).
    static func run(_ work: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Box(work)).toOpaque()
        var handle = pthread_t()
        guard pthread_create(&handle, nil, heraldDetachedThreadMain, context) == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return false
        }
        pthread_detach(handle)
        return true
    }

    fileprivate static func main(_ context: UnsafeMutableRawPointer) {
        Unmanaged<Box>.fromOpaque(context).takeRetainedValue().work()
    }
}

private func heraldDetachedThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    if let context {
        DetachedThread.main(context)
    }
    return nil
}
