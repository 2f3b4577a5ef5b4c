import Foundation
import HeraldCore
import Postgres

/// A webhook event leased to a sender (sql/020_webhooks.sql).
public struct LeasedWebhookEvent: Sendable, Equatable, Decodable {
    public let id: UUID
    public let partnerID: UUID
    public let body: [UInt8]
    /// Attempts so far, this one included.
    public let attempts: Int
    /// Retries stop 24 hours after this.
    public let windowStart: Date
    /// The partner's webhook now; nil when it was removed after the event was written.
    public let url: String?
    public let secret: String?
    /// The secret before the last rotation while its overlap lasts (the event is signed with both); else nil.
    public let previousSecret: String?
}

/// What one attempt decided for an event.
public struct WebhookAttemptRecord: Sendable, Equatable {
    public enum Outcome: String, Sendable {
        case delivered, failed, retry
    }

    public let id: UUID
    public let outcome: Outcome
    /// The answer's HTTP status; nil when none came.
    public let status: Int?
    /// A stable code (`http_500`, `timeout`, `address_refused`, `window_passed`...); nil when delivered.
    public let error: String?
    /// When to try again (`retry` only).
    public let retryAt: Date?

    public init(id: UUID, outcome: Outcome, status: Int?, error: String?, retryAt: Date?) {
        self.id = id
        self.outcome = outcome
        self.status = status
        self.error = error
        self.retryAt = retryAt
    }
}

/// Which failed events `heraldctl webhooks replay` sends again.
public struct WebhookReplaySelection: Sendable, Equatable {
    public var eventIDs: [UUID] = []
    public var partnerIDs: [UUID] = []
    /// When the event failed: since (inclusive), until (exclusive).
    public var since: Date?
    public var until: Date?

    public init() {}

    public var hasSelector: Bool { !eventIDs.isEmpty || !partnerIDs.isEmpty || since != nil || until != nil }
}

/// Queries on `webhook_events`: the workers' claim and record, and the operator's replay.
public struct WebhookStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// Leases at most `limit` due events to `worker`, at most `room[partner]` (else `perPartner`) of each partner.
    public func claim(
        worker: String, limit: Int, perPartner: Int, room: [UUID: Int], leaseSeconds: Int,
        now: Date
    ) throws -> [LeasedWebhookEvent] {
        try pool.withConnection { connection in
            try connection.rows(
                Claim(
                    worker: worker, limit: limit, perPartner: perPartner, room: room,
                    leaseSeconds: leaseSeconds, now: now))
        }
    }

    /// Records attempts' outcomes; returns how many events were still this worker's to record.
    @discardableResult
    public func record(worker: String, _ records: [WebhookAttemptRecord], now: Date) throws -> Int {
        guard !records.isEmpty else { return 0 }
        return try pool.withConnection { connection in
            try connection.row(Record(worker: worker, records: records, now: now))!.count
        }
    }

    /// Puts failed events back in the queue with a new 24-hour window and no attempts spent; returns how
    /// many matched, could be replayed and were (a dry run changes nothing). Events of partners without a
    /// webhook stay failed.
    public func replay(_ selection: WebhookReplaySelection, dryRun: Bool, now: Date) throws
        -> (matched: Int, replayable: Int, replayed: Int)
    {
        try pool.withTransaction { connection in
            let matched = try connection.rows(
                Queries.Webhooks.Replayable(
                    eventIDs: selection.eventIDs, partnerIDs: selection.partnerIDs, since: selection.since,
                    until: selection.until))
            let replayable = matched.filter(\.replayable).map(\.id)
            guard !dryRun, !replayable.isEmpty else { return (matched.count, replayable.count, 0) }
            let replayed = try connection.run(Queries.Webhooks.Replay(ids: replayable, now: now))
            return (matched.count, replayable.count, replayed)
        }
    }
}

extension LeasedWebhookEvent: QueryRow {}

extension WebhookStore {
    struct Claim: NamedQuery {
        typealias Row = LeasedWebhookEvent
        static let sql = Queries.Webhooks.claim
        let worker: String
        let limit: Int
        let perPartner: Int
        let room: [UUID: Int]
        let leaseSeconds: Int
        let now: Date
        var bindings: [(any PostgresEncodable)?] {
            let partners = Array(room.keys)
            return [worker, limit, perPartner, partners, partners.map { room[$0]! }, leaseSeconds, now]
        }
    }

    struct Record: NamedQuery {
        typealias Row = CountRow
        static let sql = Queries.Webhooks.record
        let worker: String
        let records: [WebhookAttemptRecord]
        let now: Date
        var bindings: [(any PostgresEncodable)?] {
            [
                worker, records.map(\.id), records.map(\.outcome.rawValue), records.map(\.status), records.map(\.error),
                records.map(\.retryAt), now,
            ]
        }
    }

    /// A row of `replayable`: a failed event the selection matched, and whether its partner has a webhook.
    struct ReplayableEvent: QueryRow, Decodable {
        let id: UUID
        let replayable: Bool
    }

}
