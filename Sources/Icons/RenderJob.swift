import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One render (an icon's PNGs, or a media file re-encoded) on a thread of its own, so that the caller can stop
/// waiting when the time budget runs out even while the C libraries cannot be interrupted (see `IconLimits`).
final class RenderJob<Output: Sendable>: Sendable {
    typealias Work = @Sendable (Cancellation) throws(IconError) -> Output

    /// librsvg draws nested groups recursively; its nesting limits assume a main-thread-sized stack.
    static var stackSize: Int { 16 << 20 }

    let cancellation = Cancellation()
    private let work: Work
    /// Runs when the work has ended, whether or not anyone still waits (it gives back the render slot).
    private let ended: @Sendable () -> Void
    private let outcome = Mutex<Result<Output, IconError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(work: @escaping Work, ended: @escaping @Sendable () -> Void) {
        self.work = work
        self.ended = ended
    }

    /// Starts the thread; false when none could be created (nothing has run then).
    func start() -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, Self.stackSize)
        let context = Unmanaged.passRetained(RenderThreadEntry { self.run() }).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, &attributes, heraldIconsRenderThread, context) == 0 else {
            Unmanaged<RenderThreadEntry>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// The outcome, or nil if the work has not ended by `deadline`.
    func wait(until deadline: DispatchTime) -> Result<Output, IconError>? {
        guard done.wait(timeout: deadline) == .success else {
            return nil
        }
        return outcome.withLock { $0 }
    }

    fileprivate func run() {
        let result = Result { () throws(IconError) in try work(cancellation) }
        outcome.withLock { $0 = result }
        ended()
        done.signal()
    }
}

/// What a render thread runs: one non-generic type, so the C entry point can take it back from its context.
private final class RenderThreadEntry: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

private func heraldIconsRenderThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    if let context {
        Unmanaged<RenderThreadEntry>.fromOpaque(context).takeRetainedValue().body()
    }
    return nil
}
