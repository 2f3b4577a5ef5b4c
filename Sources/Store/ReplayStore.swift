import Foundation
import HeraldCore
import Postgres

/// Which finished deliveries `heraldctl replay` puts back in the queue. Only push deliveries
/// that ended failed, dead or expired, and finished after migration 010 (which keeps their payload), can match.
public struct ReplaySelection: Sendable, Equatable {
    public static let replayableOutcomes = ["failed", "dead", "expired"]

    public var requestIDs: [UUID] = []
    /// Every partner row of one mini-app (a revoked one and its successor), or one partner id.
    public var partnerIDs: [UUID] = []
    /// When the delivery finished: since (inclusive), until (exclusive).
    public var since: Date?
    public var until: Date?
    public var outcomes: [String] = ReplaySelection.replayableOutcomes
    /// The reason recorded with the outcome (`last_error`), exactly.
    public var reason: String?

    public init() {}

    /// Nothing but outcomes: a replay of the whole history, which the command refuses.
    public var hasSelector: Bool {
        !requestIDs.isEmpty || !partnerIDs.isEmpty || since != nil || until != nil || reason != nil
    }
}

/// What one replay (or dry run) did. `matched` = `replayed` + every skip; a batch's row has a column of each.
public struct ReplayCounts: Sendable, Equatable, Decodable {
    public var matched = 0
    public var replayed = 0
    public var tokenInvalid = 0
    public var optedOut = 0
    public var deviceRemoved = 0
    public var alreadyReplayed = 0
    /// Rows of a revoked partner: nothing it queued is sent after its revocation, a replay included.
    public var partnerRevoked = 0
    /// Rows of a push its partner retracted: never sent again.
    public var retracted = 0

    static func + (a: ReplayCounts, b: ReplayCounts) -> ReplayCounts {
        var sum = a
        sum.matched += b.matched
        sum.replayed += b.replayed
        sum.tokenInvalid += b.tokenInvalid
        sum.optedOut += b.optedOut
        sum.deviceRemoved += b.deviceRemoved
        sum.alreadyReplayed += b.alreadyReplayed
        sum.partnerRevoked += b.partnerRevoked
        sum.retracted += b.retracted
        return sum
    }
}

/// `heraldctl replay`: puts failed, dead or expired deliveries back in the outbox, under their own id,
/// with the payload they had (sql/010_operations.sql keeps it). Works through the selection in
/// batches of history rows in finish order, one transaction each, so a replay of a million rows
/// neither holds a million row locks nor starts over after an interruption: rows already queued
/// again are marked and skip as `already_replayed`.
///
/// Two replays of the same rows at once are safe: each batch locks the history rows it picked
/// (FOR UPDATE), so the second waits, then finds them marked.
public struct ReplayStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The partner ids of a mini-app (revoked ones too: their deliveries are still in history).
    public func partnerIDs(miniAppID: String) throws -> [UUID] {
        try pool.withConnection { connection in
            try connection.rows(Queries.Replay.PartnerIDs(miniAppID: miniAppID)).map(\.id)
        }
    }

    /// Replays (or, with `dryRun`, judges without changing anything) every row of `selection`.
    /// New rows go to `lane` and expire the request's TTL after now (`fallbackTTLSeconds` for a request
    /// without one). `progress` sees the running totals after each batch.
    public func replay(
        _ selection: ReplaySelection, lane: Int, dryRun: Bool, fallbackTTLSeconds: Int,
        batchSize: Int = 2_000, progress: (ReplayCounts) -> Void = { _ in }
    ) throws -> ReplayCounts {
        var total = ReplayCounts()
        var after: (Date, UUID) = (
            Date(timeIntervalSince1970: 0), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        )
        while true {
            let query = Self.batch(
                selection, after: after, limit: batchSize, lane: lane, fallbackTTLSeconds: fallbackTTLSeconds,
                dryRun: dryRun)
            let batch = try pool.withTransaction { connection -> ReplayBatch in
                // Planned for the values given: each selector left NULL folds away, so each combination reads
                // its own index (a generic plan of optional time bounds would read every partition).
                try connection.run(Queries.Replay.CustomPlans())
                guard let batch = try ReplayBatch.rows(of: connection.result(query)).first else {
                    throw PostgresError(code: .decodingFailed, serverMessage: "the replay batch returned no row")
                }
                if batch.counts.replayed > 0 {
                    try DeliveryStore.notifyDue(on: connection)
                }
                return batch
            }
            total = total + batch.counts
            progress(total)
            guard batch.counts.matched == batchSize, let last = batch.last else { return total }
            after = last
        }
    }

    /// The statement of one batch of `selection` after `after` (the last finished_at and id of the previous
    /// batch): `judge` for a dry run, else `batch`; a selector not given binds NULL.
    public static func batch(
        _ selection: ReplaySelection, after: (Date, UUID), limit: Int, lane: Int, fallbackTTLSeconds: Int,
        dryRun: Bool
    ) -> any NamedQuery {
        let requestIDs = selection.requestIDs.isEmpty ? nil : selection.requestIDs
        let partnerIDs = selection.partnerIDs.isEmpty ? nil : selection.partnerIDs
        guard !dryRun else {
            return Queries.Replay.Judge(
                outcomes: selection.outcomes, afterFinished: after.0, afterID: after.1, limit: limit,
                requestIDs: requestIDs, partnerIDs: partnerIDs, since: selection.since, until: selection.until,
                reason: selection.reason)
        }
        return Queries.Replay.Batch(
            outcomes: selection.outcomes, afterFinished: after.0, afterID: after.1, limit: limit,
            requestIDs: requestIDs, partnerIDs: partnerIDs, since: selection.since, until: selection.until,
            reason: selection.reason, lane: lane, fallbackTTLSeconds: fallbackTTLSeconds)
    }
}

extension ReplayStore {
    /// A row of `partnerIDs` (Queries/replay.sql).
    struct PartnerID: QueryRow, Decodable {
        let id: UUID
    }
}

/// The row of one replay batch (Queries/replay.sql, `judge` and `batch`): its counts, and the last history row it
/// picked (nil when it picked none), after which the next batch starts.
struct ReplayBatch: QueryRow {
    let counts: ReplayCounts
    let last: (Date, UUID)?

    init(row: PostgresRow) throws {
        counts = try PostgresRowDecoder().decode(ReplayCounts.self, from: row)
        last = try row.optionalDate("last_finished_at").map { ($0, try row.uuid("last_id")) }
    }
}
