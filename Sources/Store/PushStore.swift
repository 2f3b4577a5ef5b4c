import Foundation
import HeraldCore
import Postgres

extension RecipientResolution {
    /// From the rows of `PushStore.resolveSQL`, in a stable order.
    init(rows: [PostgresRow]) throws {
        self.init()
        for row in rows { try add(row, kindAt: 0) }
        sort()
    }

    /// One row of `herald_resolve_lines` (sql/functions/resolve_lines.sql) whose kind is column `first`, the
    /// identifier, user, service, environment and opt-out the columns after it.
    mutating func add(_ row: PostgresRow, kindAt first: Int) throws {
        switch try row.string(first) {
        case "e": matchedEmails.insert(try row.string(first + 1))
        case "w": matchedWallets.insert(try row.string(first + 1))
        case "u": users.append(.init(id: try row.string(first + 2), optedOut: try row.bool(first + 5)))
        default:
            devices.append(.init(
                userID: try row.string(first + 2), deviceID: try row.string(first + 1),
                service: try Self.service(row.string(first + 3)), environment: try row.string(first + 4)))
        }
    }

    static func service(_ text: String) throws -> PushService {
        guard let service = PushService(rawValue: text) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "unknown service \(text)")
        }
        return service
    }
}

/// The answer of `PushStore.admit`.
public struct PushAdmission: Sendable {
    public let stored: IdempotentResponse?
    public let resolution: RecipientResolution
    public let reservation: RateReservation
}

/// The answer of one rate-limit reservation.
public struct RateReservation: Sendable {
    public let admitted: Bool
    public let minuteCount: Int
    public let minuteOldest: Int?
    public let dayCount: Int
    public let dayOldest: Int?
    public let nowSeconds: Int
}

/// A stored idempotency key.
public struct IdempotentResponse: Sendable {
    public let bodyHash: String
    public let response: String
    /// The HTTP status the first answer had (202 for a push, 201 or 200 for an activity).
    public let status: Int
}

/// A push request's audit row, as `GET .../push/{id}` shows it.
public struct PushRequestSummary: Sendable {
    public let id: UUID
    public let partnerID: UUID
    public let createdAt: Date
    public let recipients: Int
    public let deliveries: Int
    /// The users who had opted out of the mini-app when the push was accepted (they got no delivery).
    public let suppressed: Int
    /// The deliveries suppressed since: an opt-out after acceptance, or the host's cap per user (`user_cap`).
    public let suppressedDeliveries: Int
    public let sent: Int
    public let failed: Int
    /// Pending deliveries waiting for their user's quiet hours to end.
    public let held: Int
    public let sendAt: Date?
    public let missingJSON: String

    public init(id: UUID, partnerID: UUID, createdAt: Date, recipients: Int, deliveries: Int, suppressed: Int,
                suppressedDeliveries: Int, sent: Int, failed: Int, held: Int, sendAt: Date?, missingJSON: String) {
        self.id = id
        self.partnerID = partnerID
        self.createdAt = createdAt
        self.recipients = recipients
        self.deliveries = deliveries
        self.suppressed = suppressed
        self.suppressedDeliveries = suppressedDeliveries
        self.sent = sent
        self.failed = failed
        self.held = held
        self.sendAt = sendAt
        self.missingJSON = missingJSON
    }

    /// The deliveries with a final outcome: sent, failed, or suppressed after acceptance.
    public var finished: Int { sent + failed + suppressedDeliveries }
    /// The deliveries without an outcome yet (`held` among them).
    public var pending: Int { max(0, deliveries - finished) }
}

/// The queries of the push endpoint.
public struct PushStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// What the intake needs to decide on a validated push, in ONE round trip (pipeline mode):
    /// the stored response of its Idempotency-Key if any, the recipients, and a rate-limit
    /// reservation. The reservation goes last, so its per-partner lock is held only until the
    /// pipeline's commit. A caller that finds a stored response refunds the reservation.
    public func admit(partner: PartnerProfile, idempotencyKey: String?, now: Date, emails: [String],
                      wallets: [String]) throws -> PushAdmission {
        // One transaction (the pipeline's), like the write below: a deadlock with a batch of the intake's
        // writer over the same key or partner is retried, not answered 500.
        let admission = try retryingDeadlocks {
            try Self.admission(on: pool, partner: partner, idempotencyKey: idempotencyKey, now: now,
                               lookup: (Self.resolveSQL, [partner.tenantID, emails, wallets, partner.miniAppID]))
        }
        return PushAdmission(stored: admission.stored, resolution: try RecipientResolution(rows: admission.lookup!.rows),
                             reservation: admission.reservation)
    }

    /// The admission of every keyed partner write, in ONE round trip (pipeline mode): the stored response of its
    /// Idempotency-Key if any, the rows of `lookup` (what the write needs: recipients, an audience, the record it
    /// changes), and a rate-limit reservation. The reservation goes last, so its per-partner lock is held only
    /// until the pipeline's commit. A caller that finds a stored response refunds the reservation.
    public static func admission(on pool: PostgresPool, partner: PartnerProfile, idempotencyKey: String?, now: Date,
                                 lookup: (sql: String, parameters: [(any PostgresEncodable)?])?) throws
        -> (stored: IdempotentResponse?, lookup: PostgresResult?, reservation: RateReservation) {
        var statements: [(sql: String, parameters: [(any PostgresEncodable)?])] = []
        if let idempotencyKey {
            statements.append((idempotentResponseSQL, [partner.id, idempotencyKey, now]))
        }
        if let lookup { statements.append(lookup) }
        statements.append((reserveRateSQL, [partner.id, partner.rateLimitPerMinute, partner.rateLimitPerDay]))
        let results = try pool.withConnection { try $0.pipeline(statements) }
        return (stored: try idempotencyKey == nil ? nil : results[0].first.map(idempotentResponse),
                lookup: lookup == nil ? nil : results[results.count - 2],
                reservation: try reservation(results[results.count - 1].first!))
    }

    static func reservation(_ row: PostgresRow) throws -> RateReservation {
        RateReservation(
            admitted: try row.bool(0), minuteCount: try row.int(1), minuteOldest: try row.optionalInt(2),
            dayCount: try row.int(3), dayOldest: try row.optionalInt(4), nowSeconds: try row.int(5))
    }

    static func idempotentResponse(_ row: PostgresRow) throws -> IdempotentResponse {
        IdempotentResponse(bodyHash: try row.string(0), response: try row.string(1), status: try row.int(2))
    }

    public func refundRate(partnerID: UUID, seconds: Int) throws {
        try pool.withConnection { connection in
            try connection.query("SELECT herald_rate_refund($1, $2)", [partnerID, seconds])
        }
    }

    /// The stored response for a key used within the 24 hours before `now`. `now` is the intake's
    /// clock, the same one that stamped the key, so the window does not shift with clock skew.
    public func idempotentResponse(partnerID: UUID, key: String, now: Date) throws -> IdempotentResponse? {
        try pool.withConnection { connection in
            try connection.query(Self.idempotentResponseSQL, [partnerID, key, now]).first.map(Self.idempotentResponse)
        }
    }

    /// Writes the idempotency key, the audit row and every delivery in ONE statement (so one
    /// transaction and one round trip). Returns false, writing nothing, when another request
    /// holds the idempotency key; a concurrent holder is waited for by the unique index. `write` carries what its
    /// resolution found (`PushPreparation.prepare`).
    public func enqueue(_ write: OutboxWrite) throws -> Bool {
        guard let resolved = write.resolved else { throw HeraldError.internalError }
        let d = write.deliveries
        let row = try retryingDeadlocks { try pool.withConnection { connection in
            try connection.query(
                Self.enqueueSQL,
                [write.partnerID, write.idempotencyKey, write.bodyHash, write.requestID, resolved.response,
                 write.createdAt, write.miniAppID, write.title, write.body, write.deepLink, write.dataJSON,
                 write.sendAt, write.ttlSeconds, write.lane, resolved.recipients, resolved.suppressed,
                 resolved.missingJSON, resolved.senderUserIDs, d.map(\.id), d.map(\.service.rawValue),
                 d.map(\.userID), d.map(\.deviceID), d.map(\.environment), d.map(\.payload),
                 write.interruptionLevel?.rawValue]).first!
        } }
        return try row.int(0) == 1
    }

    /// A request by id, created within the millisecond of `createdAt` (an id's own time, `UUIDv7`, is
    /// exact to the microsecond only for ids the intake made since it kept the fraction): the bounds
    /// name the partition, so one partition is searched.
    public func find(requestID: UUID, createdAt: Date) throws -> PushRequestSummary? {
        // The millisecond in integers, from whole microseconds (as Postgres keeps them), so no Double
        // rounding can move an instant on a millisecond's edge to the one before.
        let millis = Int64((createdAt.timeIntervalSince1970 * 1_000_000).rounded()) / 1000
        let from = Date(timeIntervalSince1970: Double(millis) / 1000)
        let to = Date(timeIntervalSince1970: Double(millis + 1) / 1000)
        return try pool.withConnection { connection in
            try connection.query(Self.findSQL, [requestID, from, to]).first.map(Self.summary)
        }
    }

    /// The summaries of several requests in one query (the intake's `Prefer: wait` thread), by id;
    /// requests that do not exist are absent.
    public func summaries(of requests: [(id: UUID, createdAt: Date)]) throws -> [UUID: PushRequestSummary] {
        guard !requests.isEmpty else { return [:] }
        let ids = requests.map(\.id)
        let created = requests.map(\.createdAt)
        return try pool.withConnection { connection in
            var result: [UUID: PushRequestSummary] = [:]
            for row in try connection.query(Self.summariesSQL, [ids, created]).rows {
                let summary = try Self.summary(row)
                result[summary.id] = summary
            }
            return result
        }
    }

    private static func summary(_ row: PostgresRow) throws -> PushRequestSummary {
        PushRequestSummary(
            id: try row.uuid("id"), partnerID: try row.uuid("partner_id"), createdAt: try row.date("created_at"),
            recipients: try row.int("recipients"), deliveries: try row.int("deliveries"),
            suppressed: try row.int("suppressed"), suppressedDeliveries: try row.int("suppressed_deliveries"),
            sent: try row.int("sent"), failed: try row.int("failed"), held: try row.int("held"),
            sendAt: try row.optionalDate("send_at"), missingJSON: try row.string("missing"))
    }
}

// The statements of the push endpoint, named so tests can EXPLAIN exactly what runs.
extension PushStore {
    /// $1 tenant, $2 emails, $3 wallets, $4 mini-app: identifiers, users with opt-out state, and live devices, as
    /// one line of the batch resolver (sql/functions/resolve_lines.sql, whose query Postgres inlines here).
    public static let resolveSQL = """
        SELECT kind, ident, user_id, service, environment, opted_out
          FROM herald_resolve_lines(ARRAY[$1::text], ARRAY[$4::text], array_fill(1, ARRAY[cardinality($2::text[])]),
                                    $2::text[], array_fill(1, ARRAY[cardinality($3::text[])]), $3::text[])
        """

    /// $1 partner, $2 per minute, $3 per day: one reservation (sql/functions/rate_reserve.sql).
    public static let reserveRateSQL = "SELECT * FROM herald_rate_reserve($1, $2, $3)"

    /// $1 partner, $2 key, $3 now: the stored response of a key used in the 24 hours before now.
    public static let idempotentResponseSQL = """
        SELECT body_hash, response, status FROM idempotency_keys
         WHERE partner_id = $1 AND key = $2 AND created_at > $3::timestamptz - interval '24 hours'
        """

    /// The whole accepted push in one statement; see `enqueue`. The deliveries by the outbox's one writer
    /// (sql/functions/outbox_write.sql): 16 or more to one (service, environment) are written as group rows of at
    /// most 50, of even sizes (sql/016_delivery_groups.sql); fewer, or a group of one, as single rows. It runs once
    /// for the row of `go` (LATERAL), so nothing is written when the key is another request's.
    public static let enqueueSQL = """
        WITH idem AS (
            INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at)
            SELECT $1, $2, $3, $4, $5, $6 WHERE $2::text IS NOT NULL
            ON CONFLICT (partner_id, key) DO UPDATE
               SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id,
                   response = EXCLUDED.response, created_at = EXCLUDED.created_at
             WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours'
            RETURNING 1
        ), go AS (
            SELECT $14::integer AS lane WHERE $2::text IS NULL OR EXISTS (SELECT 1 FROM idem)
        ), audit AS (
            INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body,
                deep_link, data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed,
                missing)
            SELECT $4, $6, $1, $7, $2, $8, $9, $10, $11::jsonb, $12, $13,
                   herald_push_expiry(coalesce($12::timestamptz, $6::timestamptz), $13::integer), go.lane, $15,
                   cardinality($19::uuid[]), $16, $17::jsonb
              FROM go
            RETURNING 1
        ), senders AS (
            INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
            SELECT u, $7, $6 FROM go, unnest($18::text[]) AS u
            ON CONFLICT DO NOTHING
        ), outbox AS (
            SELECT w.r_id
              FROM go CROSS JOIN LATERAL herald_outbox_write(
                       go.lane, ARRAY[$4::uuid], ARRAY[$6::timestamptz], ARRAY[$1::uuid],
                       ARRAY[coalesce($12::timestamptz, $6::timestamptz)], ARRAY[$13::integer], ARRAY[$25::text],
                       array_fill(1, ARRAY[cardinality($19::uuid[])]), $19::uuid[], $20::text[], $21::text[],
                       $22::text[], $23::text[], $24::text[], p_group_from => 16) AS w
        )
        SELECT (SELECT count(*) FROM audit), (SELECT count(*) FROM outbox)
        """

    /// $1 id, $2 created_at (from the UUIDv7 id): one audit row, one partition.
    /// $1 ids, $2 their creation times (same order): each pair finds its row by the primary key,
    /// in its partition.
    public static let summariesSQL = """
        SELECT p.id, p.partner_id, p.created_at, p.recipients, p.deliveries, p.suppressed, p.suppressed_deliveries,
               p.sent, p.failed, \(heldSQL("p.id")) AS held, p.send_at, p.missing::text AS missing
          FROM unnest($1::uuid[], $2::timestamptz[]) AS w(id, created_at)
          JOIN push_requests p ON p.id = w.id AND p.created_at = w.created_at
        """

    public static let findSQL = """
        SELECT p.id, p.partner_id, p.created_at, p.recipients, p.deliveries, p.suppressed, p.suppressed_deliveries,
               p.sent, p.failed, \(heldSQL("p.id")) AS held, p.send_at, p.missing::text AS missing
          FROM push_requests p WHERE p.id = $1 AND p.created_at >= $2 AND p.created_at < $3
        """

    /// The request `request`'s rows held for their user's quiet hours, as an int8 expression: a count in the
    /// partial index deliveries_held_request (sql/052_user_guards_visible.sql), which holds only held rows, so a
    /// request with none costs one probe. A held row is always a single row: a group's held member is split off.
    public static func heldSQL(_ request: String) -> String {
        """
        (SELECT count(*) FROM deliveries d
                  WHERE d.request_id = \(request) AND d.last_error = 'quiet_hours' AND d.state = 'pending')
        """
    }
}
