import Foundation

/// What becomes of a delivery after one attempt, as recorded in `delivery_history`.
public enum DeliveryOutcome: Sendable, Equatable {
    case sent
    /// A permanent failure of this delivery (the upstream's reason).
    case failed(reason: String)
    /// Retried `maxAttempts` times without success.
    case dead(reason: String)
    /// The token is dead; `since` is when it stopped being valid (nil: now). The completion invalidates it
    /// unless the host registered the device after that time.
    case tokenInvalid(reason: String, since: Date? = nil)
    /// Past its TTL before it could be sent.
    case expired
    /// Not sent for the user's sake: `opted_out` after the request was accepted, or `user_cap` (the host's
    /// cap on the partner pushes one user gets an hour).
    case suppressed(reason: String = "opted_out")
    /// A Live Activity row made moot by a newer row of the same activity and device (the newest state
    /// goes instead), or a start of an activity that ended before the start went out. Never sent.
    case superseded
    /// A row of a partner revoked before it was sent (`reason`: partner_revoked). Never sent, never replayed.
    case cancelled(reason: String)
    /// Try again at `at`; the row goes back to pending.
    case retry(at: Date, reason: String)
    /// Held back at no cost to the delivery: the upstream refused Herald's own setup
    /// (`DeliveryResult.setupFault`). Pending again at `at` with this attempt not counted.
    case deferred(at: Date, reason: String)

    /// The `delivery_history.outcome` value (`retry` and `deferred` never reach history).
    public var name: String {
        switch self {
        case .sent: return "sent"
        case .failed: return "failed"
        case .dead: return "dead"
        case .tokenInvalid: return "token_invalid"
        case .expired: return "expired"
        case .suppressed: return "suppressed"
        case .superseded: return "superseded"
        case .cancelled: return "cancelled"
        case .retry: return "retry"
        case .deferred: return "deferred"
        }
    }

    /// The reason stored as `last_error`.
    public var reason: String? {
        switch self {
        case .failed(let reason), .dead(let reason), .tokenInvalid(let reason, _), .retry(_, let reason),
            .deferred(_, let reason), .cancelled(let reason), .suppressed(let reason):
            return reason
        case .expired: return "expired"
        case .superseded: return "superseded"
        case .sent: return nil
        }
    }
}

/// Retries with exponential backoff and full jitter, honouring the upstream's Retry-After (capped
/// by `maxDelay` like every delay, so a huge value cannot park a row for years), up to
/// `maxAttempts` (then `dead`), and never past the delivery's TTL (then `expired`).
public struct RetryPolicy: Sendable, Equatable {
    public var maxAttempts: Int
    /// The backoff cap of the first retry; it doubles with every attempt.
    public var baseDelay: Duration
    public var maxDelay: Duration

    public init(maxAttempts: Int = 8, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(3600)) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The backoff cap before attempt `attempts + 1`: base x 2^(attempts-1), at most maxDelay.
    public func backoffCap(afterAttempt attempts: Int) -> Duration {
        ExponentialBackoff(base: baseDelay, maximum: maxDelay).step(afterFailures: max(attempts, 1))
    }

    /// The outcome of attempt number `attempts` (1-based) that ended in `result`.
    /// `random` is uniform in 0..<1 (injected, so tests are exact).
    public func outcome(
        of result: DeliveryResult, attempts: Int, expiresAt: Date?, now: Date,
        random: Double
    ) -> DeliveryOutcome {
        switch result {
        case .sent: return .sent
        case .failed(let reason): return .failed(reason: reason)
        case .tokenInvalid(let reason, let since): return .tokenInvalid(reason: reason, since: since)
        case .tokenSuspect(let reason):
            // Reached only without a verdict tracker (TokenVerdicts decides first in the worker): not the
            // delivery's fault until proven, so no attempt spent.
            return .deferred(at: now.addingTimeInterval(baseDelay / .seconds(1)), reason: reason)
        case .setupFault(let reason):
            // Not the delivery's fault: no attempt spent, no TTL judgement. A worker that pauses the
            // upstream defers to the pause's end instead (DeliveryWorker).
            return .deferred(at: now.addingTimeInterval(baseDelay / .seconds(1)), reason: reason)
        case .retry(let reason, let retryAfter):
            if attempts >= maxAttempts { return .dead(reason: reason) }
            // Full jitter: anywhere between now and the cap, so retries of a burst spread out.
            var delay = backoffCap(afterAttempt: attempts) * random
            if let retryAfter, retryAfter > delay { delay = min(retryAfter, maxDelay) }
            let at = now.addingTimeInterval(delay / .seconds(1))
            if let expiresAt, at >= expiresAt { return .expired }
            return .retry(at: at, reason: reason)
        }
    }
}
