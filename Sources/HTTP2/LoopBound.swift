/// Carries a value that only the event loop thread touches across an `execute` boundary.
///
/// The value is created on the caller's thread and handed over through the loop's locked inbox (which orders the
/// two threads' accesses); afterwards only the loop thread uses it. That is a guarantee the compiler cannot see.
struct LoopBound<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
