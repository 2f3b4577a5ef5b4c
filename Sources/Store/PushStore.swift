import Foundation
import HeraldCore
import Postgres

/// One line of `herald_resolve_lines` (sql/functions/resolve_lines.sql): an identifier (`e`, `w`) that matched,
/// a user with its opt-out state and locale (`u`), or a live device. Each kind fills only its own columns (NULL
/// elsewhere; a user without a locale has none).
struct ResolutionLine: QueryRow, Decodable {
    let kind: String
    let ident: String?
    let userID: String?
    let service: String?
    let environment: String?
    let optedOut: Bool?
    let locale: String?

    /// The column `value` of this line's kind, which must be set.
    func required<Value>(_ value: Value?, _ column: String) throws -> Value {
        guard let value else {
            throw PostgresError(
                code: .decodingFailed,
                serverMessage: "a resolution line of kind \(kind) has no \(column)")
        }
        return value
    }
}

extension RecipientResolution {
    /// From the lines of `PushStore.Resolve`, in a stable order.
    init(lines: [ResolutionLine]) throws {
        self.init()
        for line in lines { try add(line) }
        sort()
    }

    mutating func add(_ line: ResolutionLine) throws {
        switch line.kind {
        case "e": matchedEmails.insert(try line.required(line.ident, "ident"))
        case "w": matchedWallets.insert(try line.required(line.ident, "ident"))
        case "u":
            users.append(
                .init(
                    id: try line.required(line.userID, "user_id"),
                    optedOut: try line.required(line.optedOut, "opted_out"), locale: line.locale))
        default:
            devices.append(
                .init(
                    userID: try line.required(line.userID, "user_id"), deviceID: try line.required(line.ident, "ident"),
                    service: try Self.service(line.required(line.service, "service")),
                    environment: try line.required(line.environment, "environment")))
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
public struct RateReservation: Sendable, QueryRow, Decodable {
    public let admitted: Bool
    public let minuteCount: Int
    public let minuteOldest: Int?
    public let dayCount: Int
    public let dayOldest: Int?
    public let nowSeconds: Int
}

/// A stored idempotency key.
public struct IdempotentResponse: Sendable, QueryRow, Decodable {
    public let bodyHash: String
    public let response: String
    /// The HTTP status the first answer had (202 for a push, 201 or 200 for an activity).
    public let status: Int
}

/// A push request's audit row, as `GET .../push/{id}` shows it.
public struct PushRequestSummary: Sendable, QueryRow, Decodable {
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
    /// The deliveries a newer push with the same collapse key replaced before they were sent.
    public let superseded: Int
    /// The deliveries a retraction stopped before they went out.
    public let cancelled: Int
    /// The retract messages a retraction wrote: one per device the push reached, or may have.
    public let retracted: Int
    /// When the partner retracted the push.
    public let retractedAt: Date?
    /// Pending deliveries waiting for their user's quiet hours to end.
    public let held: Int
    public let sendAt: Date?
    public let missingJSON: String
    /// The deliveries the host's app reported received, opened and dismissed (sql/061_delivery_events.sql): an open
    /// or a dismissal counts as received too.
    public let received: Int
    public let opened: Int
    public let dismissed: Int

    /// The deliveries with a final outcome: sent, failed, suppressed after acceptance, superseded or cancelled.
    public var finished: Int {
        Self.finished(sent: sent, failed: failed, suppressed: suppressedDeliveries, superseded, cancelled)
    }
    /// The deliveries without an outcome yet (`held` among them).
    public var pending: Int { max(0, deliveries - finished) }

    /// A request's deliveries with a final outcome, from its audit row's counts (the console's rows count alike).
    static func finished(sent: Int, failed: Int, suppressed: Int, _ superseded: Int, _ cancelled: Int) -> Int {
        sent + failed + suppressed + superseded + cancelled
    }
}

/// The queries of the push endpoint.
public struct PushStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// What the intake needs to decide on a validated push, in ONE round trip (pipeline mode):
    /// the stored response of its Idempotency-Key if any, the recipients, and a rate-limit
    /// reservation. The reservation goes last, so its per-partner lock is held only until the
    /// pipeline's commit. A caller that finds a stored response refunds the reservation.
    public func admit(
        partner: PartnerProfile, idempotencyKey: String?, now: Date, emails: [String],
        wallets: [String]
    ) throws -> PushAdmission {
        // One transaction (the pipeline's), like the write below: a deadlock with a batch of the intake's
        // writer over the same key or partner is retried, not answered 500.
        let admission = try retryingDeadlocks {
            try Self.admission(
                on: pool, partner: partner, idempotencyKey: idempotencyKey, now: now,
                lookup: Queries.PushRequests.Resolve(
                    tenantID: partner.tenantID, emails: emails, wallets: wallets,
                    miniAppID: partner.miniAppID))
        }
        return PushAdmission(
            stored: admission.stored, resolution: try RecipientResolution(lines: admission.lookup!),
            reservation: admission.reservation)
    }

    /// The admission of every keyed partner write, in ONE round trip (pipeline mode): the stored response of its
    /// Idempotency-Key if any, the rows of `lookup` (what the write needs: recipients, an audience, the record it
    /// changes), and a rate-limit reservation. The reservation goes last, so its per-partner lock is held only
    /// until the pipeline's commit. A caller that finds a stored response refunds the reservation.
    public static func admission<Lookup: NamedQuery>(
        on pool: PostgresPool, partner: PartnerProfile,
        idempotencyKey: String?, now: Date, lookup: Lookup?
    ) throws
        -> (stored: IdempotentResponse?, lookup: [Lookup.Row]?, reservation: RateReservation)
    {
        var queries: [any NamedQuery] = []
        if let idempotencyKey {
            queries.append(
                Queries.PushRequests.FindIdempotentResponse(partnerID: partner.id, key: idempotencyKey, now: now))
        }
        if let lookup { queries.append(lookup) }
        queries.append(
            Queries.PushRequests.ReserveRate(
                partnerID: partner.id, perMinute: partner.rateLimitPerMinute,
                perDay: partner.rateLimitPerDay))
        let results = try pool.withConnection { try $0.pipeline(queries: queries) }
        guard let reserved = results[results.count - 1].first else {
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_rate_reserve returned no row")
        }
        return (
            stored: try idempotencyKey == nil ? nil : results[0].first.map(IdempotentResponse.init(row:)),
            lookup: try lookup == nil ? nil : Lookup.Row.rows(of: results[results.count - 2]),
            reservation: try RateReservation(row: reserved)
        )
    }

    public func refundRate(partnerID: UUID, seconds: Int) throws {
        try pool.withConnection { connection in
            try connection.run(Queries.PushRequests.RefundRate(partnerID: partnerID, seconds: seconds))
        }
    }

    /// The stored response for a key used within the 24 hours before `now`. `now` is the intake's
    /// clock, the same one that stamped the key, so the window does not shift with clock skew.
    public func idempotentResponse(partnerID: UUID, key: String, now: Date) throws -> IdempotentResponse? {
        try pool.withConnection { connection in
            try connection.row(Queries.PushRequests.FindIdempotentResponse(partnerID: partnerID, key: key, now: now))
        }
    }

    /// Writes the idempotency key, the audit row and every delivery in ONE statement (so one
    /// transaction and one round trip). Returns false, writing nothing, when another request
    /// holds the idempotency key; a concurrent holder is waited for by the unique index. `write` carries what its
    /// resolution found (`PushPreparation.prepare`).
    public func enqueue(_ write: OutboxWrite) throws -> Bool {
        guard let resolved = write.resolved else { throw HeraldError.internalError }
        let row = try retryingDeadlocks {
            try pool.withConnection { connection in
                try connection.row(Enqueue(write: write, resolved: resolved))!
            }
        }
        return row.written == 1
    }

    /// A request by id, created within the millisecond of `createdAt` (an id's own time, `UUIDv7`, is
    /// exact to the microsecond only for ids the intake made since it kept the fraction): the bounds
    /// name the partition, so one partition is searched.
    public func find(requestID: UUID, createdAt: Date) throws -> PushRequestSummary? {
        let (from, to) = Self.millisecond(of: createdAt)
        return try pool.withConnection { connection in
            try connection.row(Queries.PushRequests.Find(requestID: requestID, from: from, to: to))
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
            for summary in try connection.rows(Queries.PushRequests.Summaries(ids: ids, createdAt: created)) {
                result[summary.id] = summary
            }
            return result
        }
    }

}

extension PushStore {
    struct Enqueue: NamedQuery {
        struct Row: QueryRow, Decodable {
            let written: Int
        }

        static let sql = Queries.PushRequests.enqueue
        let write: OutboxWrite
        let resolved: OutboxWrite.Resolved
        var bindings: [(any PostgresEncodable)?] {
            let d = write.deliveries
            return [
                write.partnerID, write.idempotencyKey, write.bodyHash, write.requestID, resolved.response,
                write.createdAt, write.miniAppID, write.title, write.body, write.deepLink, write.dataJSON,
                write.sendAt, write.ttlSeconds, write.lane, resolved.recipients, resolved.suppressed,
                resolved.missingJSON, resolved.senderUserIDs, d.map(\.id), d.map(\.service.rawValue),
                d.map(\.userID), d.map(\.deviceID), d.map(\.environment), d.map(\.payload),
                write.interruptionLevel?.rawValue, write.collapseKey,
            ]
        }
    }
}
