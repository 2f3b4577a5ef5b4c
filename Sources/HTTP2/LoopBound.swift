/// A value that only its event loop's thread touches, carried across a `@Sendable` boundary (an `execute`, a resolver
/// thread's callback), as NIO's `NIOLoopBound` carries one: made on the loop (`init(_:loop:)`) and read only there
/// (`value`), each checked.
///
/// The one unchecked door is `init(handingOver:to:)`: a value made on another thread and given up to the loop through
/// `EventLoop.execute(handingOver:_:)`, whose locked inbox orders the two threads' accesses; the maker keeps no use of
/// it. Reading it is still checked.
///
/// The checks are preconditions, kept in release builds as NIO keeps its `preconditionInEventLoop`: they cost a relaxed
/// atomic load and `pthread_self()` (`EventLoop.inEventLoop`), and a value touched off its loop would be a data race,
/// undefined behaviour, rather than a clear crash.
struct LoopBound<Value>: @unchecked Sendable {
    /// The loop whose thread owns the value.
    let loop: EventLoop
    private let boundValue: Value

    /// Binds `value`, made on `loop`'s thread, to it.
    init(_ value: Value, loop: EventLoop) {
        precondition(loop.inEventLoop, "LoopBound made off its event loop's thread")
        self.loop = loop
        boundValue = value
    }

    /// Binds `value`, made on this thread, to `loop`, which alone uses it from now on: see
    /// `EventLoop.execute(handingOver:_:)`, the one caller.
    fileprivate init(handingOver value: Value, to loop: EventLoop) {
        self.loop = loop
        boundValue = value
    }

    /// The value, on the loop's thread only.
    var value: Value {
        precondition(loop.inEventLoop, "LoopBound read off its event loop's thread")
        return boundValue
    }
}

extension EventLoop {
    /// `execute(_:)` with a value that is not `Sendable` (a request, a connection's action), made on this thread and
    /// given up to the loop: `work` gets it on the loop's thread. Returns false, without running `work`, once the loop
    /// was asked to stop.
    @discardableResult
    func execute<Value>(handingOver value: Value, _ work: @escaping @Sendable (Value) -> Void) -> Bool {
        let bound = LoopBound(handingOver: value, to: self)
        return execute { work(bound.value) }
    }
}
