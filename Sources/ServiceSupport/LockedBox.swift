import Foundation

/// A value behind a lock, for the few mutable fields of otherwise immutable services (the intake's HTTP
/// server once started, the webhook sender's service made after its init).
public final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func get() -> Value { lock.withLock { value } }
    public func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
