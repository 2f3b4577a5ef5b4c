import Foundation

/// A push request's status, derived from its counts (SPEC 5): nothing pending is `completed`.
public enum PushStatus: String, Sendable {
    case queued, scheduled, sending, completed

    public static func of(deliveries: Int, sent: Int, failed: Int, sendAt: Date?, now: Date) -> PushStatus {
        if sent + failed >= deliveries { return .completed }
        if sent + failed > 0 { return .sending }
        if let sendAt, sendAt > now { return .scheduled }
        return .queued
    }
}
