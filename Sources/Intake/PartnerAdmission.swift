import Foundation
import HTTPServer
import HeraldCore
import Store

/// What the push and Live Activity endpoints share before they write: the Idempotency-Key, the replay of
/// a stored answer, and the answer of a spent rate limit. The host's reminders use the same key rules.
enum PartnerAdmission {
    static let keyReused = HeraldError.ruleViolated(
        "idempotency_key_reused", "This Idempotency-Key was used with a different request body.",
        field: "Idempotency-Key")

    static func idempotencyKey(_ request: RoutedRequest) throws(HeraldError) -> String? {
        let key = request.http.header("idempotency-key")
        if let key, !Identifiers.isValidIdempotencyKey(key) {
            throw .invalidField("Idempotency-Key", "Idempotency-Key must be 1-255 printable ASCII characters.")
        }
        return key
    }

    static func replay(_ stored: IdempotentResponse, bodyHash: String, metrics: IntakeMetrics) throws -> HTTPResponse {
        guard stored.bodyHash == bodyHash else { throw keyReused }
        metrics.recordIdempotentReplay()
        return Reply.json(stored.status, Array(stored.response.utf8), headers: [("Idempotent-Replayed", "true")])
    }

    /// The replay of the answer stored for `key`, if any: a keyed request refused before its write (a body that no
    /// longer validates, a target that changed since) is answered as the first request was, before any refusal.
    static func storedReplay(
        key: String?, bodyHash: String?, partnerID: UUID, now: Date, keys: PushStore,
        metrics: IntakeMetrics
    ) throws -> HTTPResponse? {
        guard let key, let bodyHash,
            let stored = try keys.idempotentResponse(partnerID: partnerID, key: key, now: now)
        else { return nil }
        return try replay(stored, bodyHash: bodyHash, metrics: metrics)
    }

    static func rateLimited(_ reservation: RateReservation, partner: PartnerProfile) -> HeraldError {
        let minute = RateLimitWindow.perMinute(partner.rateLimitPerMinute)
        let day = RateLimitWindow.perDay(partner.rateLimitPerDay)
        var retryAfter = 1
        var window = "minute"
        if reservation.minuteCount >= partner.rateLimitPerMinute, let oldest = reservation.minuteOldest {
            retryAfter = minute.retryAfter(oldestBucket: oldest, at: reservation.nowSeconds)
        }
        if reservation.dayCount >= partner.rateLimitPerDay, let oldest = reservation.dayOldest {
            retryAfter = max(retryAfter, day.retryAfter(oldestBucket: oldest, at: reservation.nowSeconds))
            window = "day"
        }
        let limit = window == "day" ? partner.rateLimitPerDay : partner.rateLimitPerMinute
        return HeraldError(
            status: 429, code: "rate_limited",
            message: "Rate limit of \(limit) requests per \(window) reached.", retryAfter: retryAfter)
    }
}
