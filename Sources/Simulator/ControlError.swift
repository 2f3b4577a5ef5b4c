/// A control-API request the simulator cannot act on: answered 400 with `{"error": message}`.
public struct ControlError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
