import Foundation
import HeraldCore
import Postgres

/// An identifier of a push and the user it resolved to, in the push's tenant, with that user's locale.
public struct ResolvedIdentifier: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case email, wallet
    }

    public let kind: Kind
    /// As the directory stores it (lower-cased; an email in NFC).
    public let identifier: String
    public let userID: String
    /// The user's `locale` (sql/063_user_locale.sql); nil: none.
    public let locale: String?

    public init(kind: Kind, identifier: String, userID: String, locale: String? = nil) {
        self.kind = kind
        self.identifier = identifier
        self.userID = userID
        self.locale = locale
    }
}

/// What `herald_intake_push` decided for one push.
public enum IntakePushOutcome: Sendable {
    /// Written and committed: the 202 body (also stored for replays) and the deliveries queued.
    case accepted(response: String, deliveries: Int)
    /// The key's stored answer (within its 24 hours); nothing was counted or written.
    case replay(IdempotentResponse)
    /// A window is full; nothing was written.
    case limited(RateReservation)
    /// A device no slot fits: no slot was signed for its user, or its user has more devices than slots. `resolved`
    /// says who the push's identifiers resolved to, so the handler can render slots for those users and send the
    /// push again, or take the two-round-trip path (`PushStore.admit`, then `enqueue`). Nothing was counted or
    /// written.
    case render(resolved: [ResolvedIdentifier])
}

/// Group commit for the push endpoint: handler threads hand their push to `submit` and wait; one
/// of them at a time (the leader) sends every push waiting at that moment (at most `maxBatch`) to
/// `herald_intake_push` in ONE statement and ONE transaction, then answers each. Under load a
/// batch holds the pushes that arrived while the previous one was committing, so the commit,
/// the round trip and the per-partner lock are paid once per batch instead of once per push;
/// alone, a push is written at once by its own handler thread (no timer, no added wait).
///
/// The leader is a handler, not a writer thread of its own: a push that finds nobody writing costs no
/// hand-over between threads (two thread wake-ups, a large share of a lone push's CPU in the intake). A
/// leader that has written its own push hands the lead to the oldest push still waiting.
///
/// Under load (the lead was handed over: pushes queued while the last batch committed) a leader first waits up
/// to `batchWindow` for more, unless a full batch waits already. A call of `herald_intake_push` costs Postgres
/// about as much as four of its pushes whatever its size, so a fraction of a millisecond's wait makes larger,
/// cheaper batches under load (figures: docs/performance.md); a lone push never waits.
public final class IntakeWriter: @unchecked Sendable {
    private final class Slot {
        let push: EncodedPush
        var result: Result<IntakePushOutcome, any Error>?
        /// Set (under the writer's lock) when the slot's thread is to write the next batch.
        var leads = false
        let woken = DispatchSemaphore(value: 0)
        init(_ push: EncodedPush) { self.push = push }
    }

    private let pool: PostgresPool
    private let maxBatch: Int
    private let batchWindow: Duration
    private let notify: (@Sendable () -> DeliveryWakeUp)?
    private let condition = NSCondition()
    private var pending: [Slot] = []
    /// A leader is writing, or the lead is being handed to a waiting push.
    private var writing = false
    private var stopping = false
    /// A leader is waiting out the batch window (submitters wake it when a full batch waits).
    private var collecting = false
    /// Batches and pushes written (for tests and the benchmark's profile).
    private var batchCount = 0
    private var pushCount = 0

    /// `notify`: the channel each batch's transaction notifies when it accepts deliveries due now (the worker
    /// whose turn it is, `DeliveryNotifier.wakeUpForWrite`), with the lease its due rows are written under, asked
    /// once a batch; nil: the batch notifies nobody. `batchWindow`: how long a leader under load waits for more
    /// pushes (zero: never; the intake's setting is `IntakeConfiguration.pushBatchWindow`).
    public init(
        pool: PostgresPool, maxBatch: Int = 128, batchWindow: Duration = .zero,
        notify: (@Sendable () -> DeliveryWakeUp)? = nil
    ) {
        self.pool = pool
        self.maxBatch = max(1, maxBatch)
        self.batchWindow = max(.zero, batchWindow)
        self.notify = notify
    }

    /// Refuses new pushes and returns once every push already submitted is answered.
    public func stop() {
        condition.lock()
        stopping = true
        // A leader waiting out the window writes at once.
        condition.broadcast()
        while writing || !pending.isEmpty { condition.wait() }
        condition.unlock()
    }

    /// (batches, pushes) sent so far.
    public var counts: (batches: Int, pushes: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (batchCount, pushCount)
    }

    /// Pushes queued for the next batch.
    public var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count
    }

    /// Queues `push` for the next batch and waits until that batch has committed (or failed: the
    /// batch's error is thrown to every push in it), writing it itself when nobody else is.
    public func submit(_ push: IntakePush) throws -> IntakePushOutcome {
        let slot = Slot(EncodedPush(push))  // encoded here, on the handler's thread
        condition.lock()
        if stopping {
            condition.unlock()
            throw PostgresError(code: .connectionLost, serverMessage: "the intake is stopping")
        }
        pending.append(slot)
        if collecting && pending.count >= maxBatch {
            // Broadcast: stop() may be waiting on the same condition.
            condition.broadcast()
        }
        if writing {
            condition.unlock()
            // Answered by the leader's batch, or handed the lead.
            slot.woken.wait()
            condition.lock()
            guard slot.leads else {
                condition.unlock()
                return try slot.result!.get()
            }
        }
        // Handed the lead: pushes were waiting when the last batch committed, so more are likely on their way.
        var underLoad = slot.leads
        writing = true
        while slot.result == nil {
            if underLoad { collectBatch() }
            underLoad = true
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            condition.unlock()
            let result = Result { try write(batch.map(\.push)) as [IntakePushOutcome] }
            condition.lock()
            batchCount += 1
            pushCount += batch.count
            for (index, written) in batch.enumerated() {
                written.result = result.map { $0[index] }
                if written !== slot { written.woken.signal() }
            }
        }
        if let next = pending.first {
            next.leads = true
            next.woken.signal()
        } else {
            writing = false
            condition.broadcast()
        }
        condition.unlock()
        return try slot.result!.get()
    }

    /// Waits (the lock held, released while waiting) until a full batch is pending, the window has passed, or
    /// the writer is stopping.
    private func collectBatch() {
        guard batchWindow > .zero, pending.count < maxBatch, !stopping else { return }
        let deadline = Date(timeIntervalSinceNow: batchWindow / .seconds(1))
        collecting = true
        while pending.count < maxBatch, !stopping, condition.wait(until: deadline) {}
        collecting = false
    }

    /// One call of `herald_intake_push` for `pushes`, outcomes in the same order.
    public func write(_ pushes: [IntakePush]) throws -> [IntakePushOutcome] {
        try write(pushes.map(EncodedPush.init))
    }

    private func write(_ pushes: [EncodedPush]) throws -> [IntakePushOutcome] {
        let parameters = Self.parameters(pushes, notify: notify?())
        // One transaction: a batch that lost a deadlock to a push of the two-round-trip path with
        // the same key (or rows) is sent again, rather than failing every push in it.
        let answers = try retryingDeadlocks {
            try pool.withConnection { try $0.rows(WriteBatch(bindings: parameters)) }
        }
        var outcomes = [IntakePushOutcome?](repeating: nil, count: pushes.count)
        for answer in answers {
            guard outcomes.indices.contains(answer.item - 1) else {
                throw PostgresError(
                    code: .decodingFailed,
                    serverMessage: "herald_intake_push named push \(answer.item)")
            }
            outcomes[answer.item - 1] = answer.outcome
        }
        return try outcomes.map { outcome in
            guard let outcome else {
                throw PostgresError(code: .decodingFailed, serverMessage: "herald_intake_push skipped a push")
            }
            return outcome
        }
    }

    /// A 'render' answer's identifiers: a JSON array of `[kind, identifier, user, locale]`, kind `e` or `w`, the
    /// locale null when the user has none.
    static func resolved(_ text: String?) throws -> [ResolvedIdentifier] {
        guard let text else { return [] }
        guard case .array(let items) = try? JSONParser.parse(Array(text.utf8)) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_intake_push's resolved identifiers")
        }
        return try items.map { item in
            guard case .array(let fields) = item, fields.count == 4, let kind = fields[0].stringValue,
                let identifier = fields[1].stringValue, let userID = fields[2].stringValue,
                fields[3] == .null || fields[3].stringValue != nil
            else {
                throw PostgresError(code: .decodingFailed, serverMessage: "herald_intake_push's resolved identifier")
            }
            return ResolvedIdentifier(
                kind: kind == "e" ? .email : .wallet, identifier: identifier, userID: userID,
                locale: fields[3].stringValue)
        }
    }

    static func parameters(_ pushes: [IntakePush], notify: DeliveryWakeUp? = nil) -> [(any PostgresEncodable)?] {
        parameters(pushes.map(EncodedPush.init), notify: notify)
    }

    /// The statement's 29 array parameters from pushes encoded on their handlers' threads (the leader only
    /// joins bytes: the one serial step of the intake's push path), the channel to notify and the lease.
    static func parameters(_ pushes: [EncodedPush], notify: DeliveryWakeUp?) -> [(any PostgresEncodable)?] {
        var arrays = [ArrayLiteral](repeating: ArrayLiteral(), count: EncodedPush.fieldCount)
        var emailLines = ArrayLiteral(), walletLines = ArrayLiteral(), slotEnds = ArrayLiteral()
        var slotEnd = 0
        for (index, push) in pushes.enumerated() {
            push.bytes.withUnsafeBufferPointer { bytes in
                for field in 0..<EncodedPush.fieldCount {
                    arrays[field].append(
                        UnsafeBufferPointer(rebasing: bytes[push.bounds[field]..<push.bounds[field + 1]]))
                }
            }
            let line = String(index + 1)
            for _ in 0..<push.emailCount { emailLines.append(ascii: line) }
            for _ in 0..<push.walletCount { walletLines.append(ascii: line) }
            slotEnd += push.slotCount
            slotEnds.append(ascii: String(slotEnd))
        }
        let f = arrays.map(\.text)
        // Order of herald_intake_push's arguments: each email and wallet follows the number of its push (1-based), the
        // slot lists their end offsets.
        return [
            f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15],
            emailLines.text, f[16], f[17], walletLines.text, f[18], f[19], slotEnds.text, f[20], f[21], f[22],
            f[23], notify?.channel, notify?.lease?.worker, notify?.lease?.seconds,
            notify?.lease.map { Int($0.listener) }, f[24],
            // NULL when no push has a collapse key: the statement then skips superseding altogether.
            pushes.contains(where: \.hasCollapseKey) ? f[25] : nil,
            // NULL when no push has localized variants: the statement then reads no locale.
            pushes.contains(where: \.isLocalized) ? f[26] : nil,
        ]
    }
}

extension IntakeWriter {
    /// A batch's call of `herald_intake_push`; its bindings are `parameters(_:notify:)`.
    struct WriteBatch: NamedQuery {
        typealias Row = Answer
        static let sql = Queries.IntakePushes.write
        let bindings: [(any PostgresEncodable)?]
    }

    /// One row of `herald_intake_push`: the push it answers (1-based) and what was decided for it.
    struct Answer: QueryRow {
        let item: Int
        let outcome: IntakePushOutcome

        init(row: PostgresRow) throws {
            try self.init(row: row, columns: Columns(position: row.column))
        }

        /// The columns' positions found by name once for the result, not for every row (the intake's hot path).
        static func rows(of result: PostgresResult) throws -> [Answer] {
            guard !result.rows.isEmpty else { return [] }
            let columns = try Columns(position: result.column)
            return try result.rows.map { try Answer(row: $0, columns: columns) }
        }

        private init(row: PostgresRow, columns c: Columns) throws {
            item = try row.int(c.item)
            switch try row.string(c.outcome) {
            case "accepted":
                outcome = .accepted(response: try row.string(c.response), deliveries: try row.int(c.deliveries))
            case "replay":
                outcome = .replay(
                    IdempotentResponse(
                        bodyHash: try row.string(c.bodyHash), response: try row.string(c.response),
                        status: try row.int(c.status)))
            case "limited":
                outcome = .limited(
                    RateReservation(
                        admitted: false, minuteCount: try row.int(c.minuteCount),
                        minuteOldest: try row.optionalInt(c.minuteOldest), dayCount: try row.int(c.dayCount),
                        dayOldest: try row.optionalInt(c.dayOldest), nowSeconds: try row.int(c.nowSeconds)))
            default:
                outcome = .render(resolved: try IntakeWriter.resolved(row.optionalString(c.resolved)))
            }
        }

        /// Where the answer's columns stand in its result, found by their names.
        private struct Columns {
            let item, outcome, bodyHash, response, status, minuteCount, minuteOldest, dayCount, dayOldest, nowSeconds,
                deliveries, resolved: Int

            init(position: (String) throws -> Int) throws {
                item = try position("r_item")
                outcome = try position("r_outcome")
                bodyHash = try position("r_body_hash")
                response = try position("r_response")
                status = try position("r_status")
                minuteCount = try position("r_minute_count")
                minuteOldest = try position("r_minute_oldest")
                dayCount = try position("r_day_count")
                dayOldest = try position("r_day_oldest")
                nowSeconds = try position("r_now_seconds")
                deliveries = try position("r_deliveries")
                resolved = try position("r_resolved")
            }
        }
    }
}

/// One push's array elements, encoded once on the thread that submits it: each field quoted
/// and escaped for an array literal (or NULL), back to back in one buffer. The email, wallet and
/// slot fields hold every element of the push, comma-separated (empty when there is none).
struct EncodedPush {
    static let fieldCount = 27
    var bytes: [UInt8] = []
    /// Start of each field in `bytes`, and the end of the last.
    var bounds: [Int] = []
    let emailCount: Int
    let walletCount: Int
    let slotCount: Int
    let hasCollapseKey: Bool
    /// Whether its slots carry their users' locales (a push with `localized` variants).
    let isLocalized: Bool

    init(_ push: IntakePush) {
        emailCount = push.emails.count
        walletCount = push.wallets.count
        slotCount = push.slots.count
        hasCollapseKey = push.write.collapseKey != nil
        isLocalized = push.slots.contains { $0.locale != nil }
        let slotBytes = push.slots.reduce(0) { $0 + 52 + $1.userID.utf8.count + $1.apns.count + $1.fcm.count }
        bytes.reserveCapacity(
            256 + slotBytes + push.write.title.utf8.count + push.write.body.utf8.count
                + push.write.dataJSON.utf8.count)
        bounds.reserveCapacity(Self.fieldCount + 1)
        let write = push.write
        field { $0.uuid(push.partner.id) }
        field { $0.ascii(String(push.partner.rateLimitPerMinute)) }
        field { $0.ascii(String(push.partner.rateLimitPerDay)) }
        field { $0.text(push.partner.tenantID) }
        field { $0.text(push.partner.miniAppID) }
        field { $0.timestamp(push.now) }
        field { $0.text(write.idempotencyKey) }
        field { $0.text(write.bodyHash) }
        field { $0.uuid(write.requestID) }
        field { $0.timestamp(write.createdAt) }
        field { $0.text(write.title) }
        field { $0.text(write.body) }
        field { $0.text(write.deepLink) }
        field { $0.text(write.dataJSON) }
        field { encoder in
            if let sendAt = write.sendAt { encoder.timestamp(sendAt) } else { encoder.null() }
        }
        field { $0.ascii(String(write.ttlSeconds)) }
        field { encoder in encoder.list(push.emails) { $0.text($1) } }
        field { encoder in
            encoder.list(push.emails) { encoder, email in encoder.text(JSONWriter.string(.string(email))) }
        }
        field { encoder in encoder.list(push.wallets) { $0.text($1) } }
        field { encoder in
            encoder.list(push.wallets) { encoder, wallet in encoder.text(JSONWriter.string(.string(wallet))) }
        }
        field { encoder in encoder.list(push.slots) { $0.uuid($1.id) } }
        field { encoder in encoder.list(push.slots) { $0.bytes($1.apns) } }
        field { encoder in encoder.list(push.slots) { $0.bytes($1.fcm) } }
        field { encoder in encoder.list(push.slots) { $0.text($1.userID) } }
        field { $0.text(write.interruptionLevel?.rawValue) }
        field { $0.text(write.collapseKey) }
        field { encoder in encoder.list(push.slots) { $0.text($1.locale) } }
        bounds.append(bytes.count)
    }

    private mutating func field(_ encode: (inout ElementEncoder) -> Void) {
        bounds.append(bytes.count)
        var encoder = ElementEncoder(out: bytes)
        bytes = []
        encode(&encoder)
        bytes = encoder.out
    }
}

/// Writes array-literal elements: quoted, with `"` and `\` escaped, or NULL.
struct ElementEncoder {
    var out: [UInt8]

    mutating func null() { out.append(contentsOf: "NULL".utf8) }

    mutating func text(_ value: String?) {
        guard var value else { return null() }
        value.withUTF8 { quoted($0) }
    }

    mutating func bytes(_ value: [UInt8]) { value.withUnsafeBufferPointer { quoted($0) } }

    /// Digits, signs and the like: nothing to escape.
    mutating func ascii(_ value: String) {
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: value.utf8)
        out.append(UInt8(ascii: "\""))
    }

    mutating func uuid(_ value: UUID) { value.appendQuotedArrayElement(to: &out) }

    mutating func timestamp(_ value: Date) {
        out.append(UInt8(ascii: "\""))
        PostgresTimestamp.append(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Several elements of one push, comma-separated.
    mutating func list<Value>(_ values: [Value], _ element: (inout ElementEncoder, Value) -> Void) {
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            element(&self, value)
        }
    }

    private mutating func quoted(_ buffer: UnsafeBufferPointer<UInt8>) {
        PostgresArrayLiteral.appendQuoted(buffer, to: &out)
    }
}

/// A one-dimensional array literal assembled from encoded elements (empty fragments skipped, so
/// a push without emails adds nothing to the emails array).
struct ArrayLiteral {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var empty = true

    mutating func append(_ fragment: UnsafeBufferPointer<UInt8>) {
        guard !fragment.isEmpty else { return }
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(contentsOf: fragment)
    }

    mutating func append(ascii value: String) {
        var value = value
        value.withUTF8 { append($0) }
    }

    var text: String {
        var out = bytes
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
