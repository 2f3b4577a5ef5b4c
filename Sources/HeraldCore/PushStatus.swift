import Foundation

/// A push request's status, derived from its counts: nothing pending is `completed`.
public enum PushStatus: String, Sendable {
    case queued, scheduled, sending, completed

    /// `finished`: the deliveries with a final outcome (sent, failed, or suppressed after acceptance).
    public static func of(deliveries: Int, finished: Int, sendAt: Date?, now: Date) -> PushStatus {
        if finished >= deliveries { return .completed }
        if finished > 0 { return .sending }
        if let sendAt, sendAt > now { return .scheduled }
        return .queued
    }
}
