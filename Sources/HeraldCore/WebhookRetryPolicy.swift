import Foundation

/// What became of one attempt to POST a webhook event.
public enum WebhookAttemptResult: Sendable, Equatable {
    /// The receiver answered with this status.
    case answered(status: Int)
    /// No answer: a timeout, a refused connection, TLS... `permanent` for what no retry changes (the
    /// address policy refused the receiver's address, the URL is not https).
    case notAnswered(code: String, permanent: Bool)
}

/// When a webhook event is delivered, retried or given up: a 2xx ends it; timeouts, network errors, 5xx
/// and 429 are retried with exponential backoff and jitter for `window` from the event (or its replay);
/// any other answer fails it at once (redirects are not followed, so a 3xx is an answer too).
public struct WebhookRetryPolicy: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        case delivered
        case retry(at: Date)
        case failed
    }

    /// The wait after the first failed attempt, doubling per attempt up to the maximum; each wait is jittered.
    public var backoff = ExponentialBackoff(base: .seconds(5), maximum: .seconds(3600))
    /// How long an event is retried (24 hours).
    public var window: Duration = .seconds(86_400)

    public init() {}

    /// The decision after attempt number `attempts` (1 for the first), given `random` uniform in 0..<1.
    public func decide(
        _ result: WebhookAttemptResult, attempts: Int, windowStart: Date, now: Date,
        random: Double
    ) -> Decision {
        switch result {
        case .answered(let status) where (200...299).contains(status):
            return .delivered
        case .answered(let status) where status >= 500 || status == 429:
            break
        case .answered:
            return .failed
        case .notAnswered(_, let permanent):
            if permanent { return .failed }
        }
        let next = now.addingTimeInterval(backoff.delay(afterFailures: attempts, random: random) / .seconds(1))
        guard next < windowStart.addingTimeInterval(window / .seconds(1)) else { return .failed }
        return .retry(at: next)
    }

    /// The error code an attempt leaves on its event: `http_<status>` or the transport's code; nil when delivered.
    public static func errorCode(_ result: WebhookAttemptResult) -> String? {
        switch result {
        case .answered(let status) where (200...299).contains(status): nil
        case .answered(let status): "http_\(status)"
        case .notAnswered(let code, _): code
        }
    }
}
