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

/// What one replay (or dry run) did. `matched` = `replayed` + every skip.
public struct ReplayCounts: Sendable, Equatable {
    public var matched = 0
    public var replayed = 0
    public var tokenInvalid = 0
    public var optedOut = 0
    public var deviceRemoved = 0
    public var alreadyReplayed = 0
    /// Rows of a revoked partner: nothing it queued is sent after its revocation, a replay included.
    public var partnerRevoked = 0

    public init() {}

    static func + (a: ReplayCounts, b: ReplayCounts) -> ReplayCounts {
        var sum = a
        sum.matched += b.matched
        sum.replayed += b.replayed
        sum.tokenInvalid += b.tokenInvalid
        sum.optedOut += b.optedOut
        sum.deviceRemoved += b.deviceRemoved
        sum.alreadyReplayed += b.alreadyReplayed
        sum.partnerRevoked += b.partnerRevoked
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
            try connection.rows(PartnerIDs(miniAppID: miniAppID)).map(\.id)
        }
    }

    /// Replays (or, with `dryRun`, judges without changing anything) every row of `selection`.
    /// New rows go to `lane` and expire the request's TTL after now (`fallbackTTLSeconds` for a request
    /// without one). `progress` sees the running totals after each batch.
    public func replay(
        _ selection: ReplaySelection, lane: Int, dryRun: Bool, fallbackTTLSeconds: Int,
        batchSize: Int = 2_000, progress: (ReplayCounts) -> Void = { _ in }
    ) throws -> ReplayCounts {
        let sql = Self.statement(for: selection, dryRun: dryRun)
        var total = ReplayCounts()
        var after: (Date, UUID) = (
            Date(timeIntervalSince1970: 0), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        )
        while true {
            let parameters = Self.parameters(
                selection, after: after, limit: batchSize, lane: lane,
                fallbackTTLSeconds: fallbackTTLSeconds, dryRun: dryRun)
            let row = try pool.withTransaction { connection -> PostgresRow in
                // Each selector combination has its own text; plan it for the values given (a generic
                // plan of optional time bounds would read every partition).
                try connection.run(CustomPlans())
                // Built per selection (`statement`), so it is no named query.
                guard let row = try connection.query(sql, parameters).first else {
                    throw PostgresError(code: .decodingFailed, serverMessage: "the replay batch returned no row")
                }
                if try row.int("replayed") > 0 {
                    try DeliveryStore.notifyDue(on: connection)
                }
                return row
            }
            let batch = try ReplayCounts(row: row)
            total = total + batch
            progress(total)
            guard batch.matched == batchSize, let lastFinished = try row.optionalDate("last_finished_at") else {
                return total
            }
            after = (lastFinished, try row.uuid("last_id"))
        }
    }

    public static func parameters(
        _ selection: ReplaySelection, after: (Date, UUID), limit: Int, lane: Int,
        fallbackTTLSeconds: Int, dryRun: Bool
    ) -> [(any PostgresEncodable)?] {
        var values: [(any PostgresEncodable)?] = [selection.outcomes, after.0, after.1, limit]
        if !dryRun { values += [lane, fallbackTTLSeconds] }
        if !selection.requestIDs.isEmpty { values.append(selection.requestIDs) }
        if !selection.partnerIDs.isEmpty { values.append(selection.partnerIDs) }
        if let since = selection.since { values.append(since) }
        if let until = selection.until { values.append(until) }
        if let reason = selection.reason { values.append(reason) }
        return values
    }

    /// The batch statement for a selection: only the conditions given, so each combination is planned
    /// for the index that serves it (delivery_history_request, _replayable_partner, _replayable).
    /// Parameters: $1 outcomes, $2/$3 the last (finished_at, id) of the previous batch, $4 batch size,
    /// then (replay only) $5 lane and $6 the fallback TTL, then the selectors in `parameters`' order.
    public static func statement(for selection: ReplaySelection, dryRun: Bool) -> String {
        var next = dryRun ? 5 : 7
        func parameter() -> String { defer { next += 1 }; return "$\(next)" }
        var conditions: [String] = []
        if !selection.requestIDs.isEmpty { conditions.append("h.request_id = ANY (\(parameter())::uuid[])") }
        if !selection.partnerIDs.isEmpty { conditions.append("h.partner_id = ANY (\(parameter())::uuid[])") }
        if selection.since != nil { conditions.append("h.finished_at >= \(parameter())::timestamptz") }
        if selection.until != nil { conditions.append("h.finished_at < \(parameter())::timestamptz") }
        if selection.reason != nil { conditions.append("h.last_error = \(parameter())::text") }
        let selected = conditions.map { "\n       AND " + $0 }.joined()
        let picked = """
            WITH picked AS (
                SELECT h.id, h.finished_at, h.request_id, h.request_created_at, h.partner_id, h.service, h.user_id,
                       h.device_id, h.payload, h.replayed_at
                  FROM delivery_history h
                 WHERE h.outcome = ANY ($1::text[]) AND h.activity_event IS NULL AND h.payload IS NOT NULL
                   AND (h.finished_at, h.id) > ($2::timestamptz, $3::uuid)\(selected)
                 ORDER BY h.finished_at, h.id
                 LIMIT $4\(dryRun ? "" : "\n       FOR UPDATE OF h")
            ), judged AS (
                SELECT p.*, v.environment, r.ttl_seconds,
                       CASE
                           -- Queued again already. A finished id re-enters the outbox only through a replay,
                           -- which marks the row in the same statement: the mark alone says it (in the outbox,
                           -- or sent under this id since), with no probe of the outbox or of every history
                           -- partition per row. The lock above makes a concurrent replay see the mark.
                           WHEN p.replayed_at IS NOT NULL THEN 'already_replayed'
                           WHEN EXISTS (SELECT 1 FROM partners pr WHERE pr.id = p.partner_id AND pr.revoked_at IS NOT NULL)
                               THEN 'partner_revoked'
                           WHEN v.device_id IS NULL THEN 'device_removed'
                           WHEN p.service = 'apns' AND (v.apns_token IS NULL OR v.apns_token_invalidated_at IS NOT NULL)
                               THEN 'token_invalid'
                           WHEN p.service = 'fcm' AND (v.fcm_token IS NULL OR v.fcm_token_invalidated_at IS NOT NULL)
                               THEN 'token_invalid'
                           WHEN EXISTS (SELECT 1 FROM opt_outs o JOIN partners pa ON pa.mini_app_id = o.mini_app_id
                                         WHERE pa.id = p.partner_id AND o.user_id = p.user_id) THEN 'opted_out'
                           ELSE 'replay'
                       END AS verdict
                  FROM picked p
                  -- The request's audit row, which the replay counts on again. Retention may have dropped it
                  -- (requests are partitioned by creation, history by finish): such a row is replayed all the
                  -- same, with the fallback TTL, and counted nowhere.
                  LEFT JOIN push_requests r ON r.id = p.request_id AND r.created_at = p.request_created_at
                  LEFT JOIN devices v ON v.user_id = p.user_id AND v.device_id = p.device_id
            )
            """
        let last = """
            (SELECT p.finished_at FROM picked p ORDER BY p.finished_at DESC, p.id DESC LIMIT 1) AS last_finished_at,
                   (SELECT p.id FROM picked p ORDER BY p.finished_at DESC, p.id DESC LIMIT 1) AS last_id
            """
        if dryRun {
            return picked + """

                SELECT (SELECT count(*) FROM picked) AS matched, count(*) FILTER (WHERE verdict = 'replay') AS replayed,
                       count(*) FILTER (WHERE verdict = 'token_invalid') AS token_invalid,
                       count(*) FILTER (WHERE verdict = 'opted_out') AS opted_out,
                       count(*) FILTER (WHERE verdict = 'device_removed') AS device_removed,
                       count(*) FILTER (WHERE verdict = 'already_replayed') AS already_replayed,
                       count(*) FILTER (WHERE verdict = 'partner_revoked') AS partner_revoked,
                       \(last)
                  FROM judged
                """
        }
        return picked + """
            , queued AS (
                -- By the outbox's one writer (sql/functions/outbox_write.sql), each row its own request: the device's
                -- environment now (the payload is the same for both), due now with a fresh TTL, outside the host's
                -- guards; an id already in the outbox is skipped.
                SELECT w.r_id AS id, w.r_request AS request_id, w.r_request_created AS request_created_at
                  FROM (SELECT array_agg(j.request_id) AS requests, array_agg(j.request_created_at) AS created,
                               array_agg(j.partner_id) AS partners, array_agg(now()) AS due,
                               array_agg(coalesce(j.ttl_seconds, $6)) AS ttl, array_agg(j.id) AS ids,
                               array_agg(j.service) AS services, array_agg(j.user_id) AS users,
                               array_agg(j.device_id) AS devices, array_agg(j.environment) AS environments,
                               array_agg(j.payload) AS payloads
                          FROM judged j WHERE j.verdict = 'replay') r
                 CROSS JOIN LATERAL herald_outbox_write($5, r.requests, r.created, r.partners, r.due, r.ttl, NULL, NULL,
                                                        r.ids, r.services, r.users, r.devices, r.environments,
                                                        r.payloads) w
            ), marked AS (
                UPDATE delivery_history h SET replayed_at = now()
                  FROM queued q JOIN judged j ON j.id = q.id
                 WHERE h.id = j.id AND h.finished_at = j.finished_at
            ), counts AS (
                SELECT request_id, request_created_at, count(*) AS n FROM queued GROUP BY request_id, request_created_at
            ), locked AS (
                -- In id order, as the worker's completion takes them: no deadlock with a worker finishing rows
                -- of the same requests.
                SELECT r.id, r.created_at FROM push_requests r JOIN counts c
                    ON r.id = c.request_id AND r.created_at = c.request_created_at
                 ORDER BY r.id FOR UPDATE OF r
            ), rollup AS (
                -- The replayed rows are pending again: out of `failed`, so the request is `sending` until
                -- their new outcome counts.
                UPDATE push_requests r SET failed = greatest(r.failed - c.n, 0)
                  FROM counts c JOIN locked l ON l.id = c.request_id AND l.created_at = c.request_created_at
                 WHERE r.id = c.request_id AND r.created_at = c.request_created_at
            )
            SELECT (SELECT count(*) FROM picked) AS matched, (SELECT count(*) FROM queued) AS replayed,
                   count(*) FILTER (WHERE verdict = 'token_invalid') AS token_invalid,
                   count(*) FILTER (WHERE verdict = 'opted_out') AS opted_out,
                   count(*) FILTER (WHERE verdict = 'device_removed') AS device_removed,
                   -- A row judged 'replay' whose id another row of this batch took first is already replayed.
                   (SELECT count(*) FROM picked) - (SELECT count(*) FROM queued)
                     - count(*) FILTER (WHERE verdict IN ('token_invalid', 'opted_out', 'device_removed',
                                                          'partner_revoked')) AS already_replayed,
                   count(*) FILTER (WHERE verdict = 'partner_revoked') AS partner_revoked,
                   \(last)
              FROM judged
            """
    }
}

// The fixed statements (Sources/Store/Queries/replay.sql).
extension ReplayStore {
    struct PartnerIDs: NamedQuery {
        struct Row: QueryRow {
            let id: UUID
            init(row: PostgresRow) throws { id = try row.uuid("id") }
        }

        static let sql = Queries.Replay.partnerIDs
        let miniAppID: String
        var bindings: [(any PostgresEncodable)?] { [miniAppID] }
    }

    struct CustomPlans: NamedQuery {
        static let sql = Queries.Replay.customPlans
    }
}

extension ReplayCounts {
    /// The counts of one batch's row (`ReplayStore.statement`).
    init(row: PostgresRow) throws {
        self.init()
        matched = try row.int("matched")
        replayed = try row.int("replayed")
        tokenInvalid = try row.int("token_invalid")
        optedOut = try row.int("opted_out")
        deviceRemoved = try row.int("device_removed")
        alreadyReplayed = try row.int("already_replayed")
        partnerRevoked = try row.int("partner_revoked")
    }
}
