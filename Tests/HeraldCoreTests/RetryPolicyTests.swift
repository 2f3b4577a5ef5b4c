import Foundation
import HeraldCore
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(60))
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func finalResultsPassThrough() {
        #expect(policy.outcome(of: .sent, attempts: 1, expiresAt: nil, now: now, random: 0.5) == .sent)
        #expect(
            policy.outcome(of: .failed(reason: "BadTopic"), attempts: 1, expiresAt: nil, now: now, random: 0.5)
                == .failed(reason: "BadTopic"))
        #expect(
            policy.outcome(
                of: .tokenInvalid(reason: "Unregistered"), attempts: 3, expiresAt: nil, now: now,
                random: 0.5) == .tokenInvalid(reason: "Unregistered"))
    }

    @Test func theBackoffCapDoublesUpToTheMaximum() {
        #expect(policy.backoffCap(afterAttempt: 1) == .seconds(1))
        #expect(policy.backoffCap(afterAttempt: 2) == .seconds(2))
        #expect(policy.backoffCap(afterAttempt: 4) == .seconds(8))
        #expect(policy.backoffCap(afterAttempt: 30) == .seconds(60))
        #expect(policy.backoffCap(afterAttempt: 1_000) == .seconds(60))
    }

    @Test func fullJitterSpreadsTheRetryBetweenNowAndTheCap() {
        let retry = DeliveryResult.retry(reason: "InternalServerError", retryAfter: nil)
        #expect(
            policy.outcome(of: retry, attempts: 3, expiresAt: nil, now: now, random: 0)
                == .retry(at: now, reason: "InternalServerError"))
        #expect(
            policy.outcome(of: retry, attempts: 3, expiresAt: nil, now: now, random: 0.5)
                == .retry(at: now.addingTimeInterval(2), reason: "InternalServerError"))
    }

    @Test func retryAfterIsAFloorOnTheDelay() {
        let retry = DeliveryResult.retry(reason: "TooManyRequests", retryAfter: .seconds(30))
        #expect(
            policy.outcome(of: retry, attempts: 1, expiresAt: nil, now: now, random: 0.9)
                == .retry(at: now.addingTimeInterval(30), reason: "TooManyRequests"))
        // A longer jittered backoff wins over a shorter Retry-After.
        let short = DeliveryResult.retry(reason: "TooManyRequests", retryAfter: .seconds(1))
        #expect(
            policy.outcome(of: short, attempts: 4, expiresAt: nil, now: now, random: 0.5)
                == .retry(at: now.addingTimeInterval(4), reason: "TooManyRequests"))
    }

    @Test func theLastAttemptIsDead() {
        let retry = DeliveryResult.retry(reason: "ServiceUnavailable", retryAfter: nil)
        #expect(
            policy.outcome(of: retry, attempts: 5, expiresAt: nil, now: now, random: 0.5)
                == .dead(reason: "ServiceUnavailable"))
    }

    @Test func aRetryPastTheTTLExpires() {
        let retry = DeliveryResult.retry(reason: "TooManyRequests", retryAfter: .seconds(30))
        #expect(
            policy.outcome(of: retry, attempts: 1, expiresAt: now.addingTimeInterval(10), now: now, random: 0)
                == .expired)
    }

    @Test func outcomeNamesMatchTheHistoryColumn() {
        let names = [
            DeliveryOutcome.sent, .failed(reason: "x"), .dead(reason: "x"), .tokenInvalid(reason: "x"),
            .expired, .suppressed(),
        ].map(\.name)
        #expect(names == ["sent", "failed", "dead", "token_invalid", "expired", "suppressed"])
        #expect(DeliveryOutcome.suppressed().reason == "opted_out")
        #expect(DeliveryOutcome.suppressed(reason: "user_cap").reason == "user_cap")
        #expect(DeliveryOutcome.sent.reason == nil)
    }

    @Test func retryAfterIsCappedByTheMaximumDelay() {
        let capped = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(600))
        let huge = DeliveryResult.retry(reason: "TooManyRequests", retryAfter: .seconds(Int64.max))
        #expect(
            capped.outcome(of: huge, attempts: 1, expiresAt: nil, now: now, random: 0)
                == .retry(at: now.addingTimeInterval(600), reason: "TooManyRequests"))
    }

    @Test func aSetupFaultSpendsNoAttemptAndIsNeverDeadOrExpired() {
        let fault = DeliveryResult.setupFault(reason: "InvalidProviderToken")
        // Even at the last attempt and past the TTL: the delivery is not judged.
        #expect(
            policy.outcome(of: fault, attempts: 5, expiresAt: now, now: now, random: 0.5)
                == .deferred(at: now.addingTimeInterval(1), reason: "InvalidProviderToken"))
        #expect(DeliveryOutcome.deferred(at: now, reason: "x").name == "deferred")
    }
}
