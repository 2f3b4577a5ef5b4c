import Foundation
import HeraldCore
import Postgres

/// One validated push as `herald_intake_push` (sql/013_intake_push.sql) takes it: the partner's
/// limits, the idempotency key, the audit row's fields, the recipients, and the first delivery
/// rendered for both services (the function picks the one its device needs).
public struct IntakePush: Sendable {
    public var partner: PartnerProfile
    public var now: Date
    public var idempotencyKey: String?
    public var bodyHash: String?
    public var requestID: UUID
    public var createdAt: Date
    public var title: String
    public var body: String
    public var deepLink: String?
    public var dataJSON: String
    public var sendAt: Date?
    public var ttlSeconds: Int
    public var expiresAt: Date
    public var emails: [String]
    public var wallets: [String]
    public var deliveryID: UUID
    public var apnsPayload: [UInt8]
    public var fcmPayload: [UInt8]

    public init(partner: PartnerProfile, now: Date, idempotencyKey: String?, bodyHash: String?, requestID: UUID,
                createdAt: Date, title: String, body: String, deepLink: String?, dataJSON: String, sendAt: Date?,
                ttlSeconds: Int, expiresAt: Date, emails: [String], wallets: [String], deliveryID: UUID,
                apnsPayload: [UInt8], fcmPayload: [UInt8]) {
        self.partner = partner
        self.now = now
        self.idempotencyKey = idempotencyKey
        self.bodyHash = bodyHash
        self.requestID = requestID
        self.createdAt = createdAt
        self.title = title
        self.body = body
        self.deepLink = deepLink
        self.dataJSON = dataJSON
        self.sendAt = sendAt
        self.ttlSeconds = ttlSeconds
        self.expiresAt = expiresAt
        self.emails = emails
        self.wallets = wallets
        self.deliveryID = deliveryID
        self.apnsPayload = apnsPayload
        self.fcmPayload = fcmPayload
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
    /// More than one device: each delivery needs its own signed rendering, so the handler takes
    /// the two-round-trip path (`PushStore.admit`, then `enqueue`). Nothing was counted or written.
    case render
}

/// Group commit for the push endpoint: handler threads hand their push to `submit` and wait; one
/// writer thread sends every push waiting at that moment (at most `maxBatch`) to
/// `herald_intake_push` in ONE statement and ONE transaction, then answers each. Under load a
/// batch holds the pushes that arrived while the previous one was committing, so the commit,
/// the round trip and the per-partner lock are paid once per batch instead of once per push;
/// alone, a push is sent at once (no timer, no added wait).
public final class IntakeWriter: @unchecked Sendable {
    private final class Slot {
        let push: IntakePush
        var result: Result<IntakePushOutcome, any Error>?
        let done = DispatchSemaphore(value: 0)
        init(_ push: IntakePush) { self.push = push }
    }

    private let pool: PostgresPool
    private let maxBatch: Int
    private let condition = NSCondition()
    private var pending: [Slot] = []
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// Batches and pushes written (for tests and the benchmark's profile).
    private var batchCount = 0
    private var pushCount = 0

    public init(pool: PostgresPool, maxBatch: Int = 128) {
        self.pool = pool
        self.maxBatch = max(1, maxBatch)
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "herald-intake-writer"
        self.thread = thread
        thread.start()
    }

    /// Answers the pushes still queued, then ends the writer thread.
    public func stop() {
        condition.lock()
        let started = thread != nil && !stopping
        stopping = true
        condition.broadcast()
        condition.unlock()
        if started { finished.wait() }
    }

    /// (batches, pushes) sent so far.
    public var counts: (batches: Int, pushes: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (batchCount, pushCount)
    }

    /// Queues `push` for the next batch and waits until that batch has committed (or failed: the
    /// batch's error is thrown to every push in it).
    public func submit(_ push: IntakePush) throws -> IntakePushOutcome {
        let slot = Slot(push)
        condition.lock()
        if stopping {
            condition.unlock()
            throw PostgresError(code: .connectionLost, serverMessage: "the intake is stopping")
        }
        pending.append(slot)
        condition.signal()
        condition.unlock()
        slot.done.wait()
        return try slot.result!.get()
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty && !stopping { condition.wait() }
            if pending.isEmpty {
                condition.unlock()
                finished.signal()
                return
            }
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            condition.unlock()
            let result = Result { try write(batch.map(\.push)) }
            condition.lock()
            batchCount += 1
            pushCount += batch.count
            condition.unlock()
            for (index, slot) in batch.enumerated() {
                slot.result = result.map { $0[index] }
                slot.done.signal()
            }
        }
    }

    /// One call of `herald_intake_push` for `pushes`, outcomes in the same order.
    public func write(_ pushes: [IntakePush]) throws -> [IntakePushOutcome] {
        let parameters = Self.parameters(pushes)
        let result = try pool.withConnection { try $0.query(Self.pushSQL, parameters) }
        var outcomes = [IntakePushOutcome?](repeating: nil, count: pushes.count)
        for row in result.rows {
            let index = try row.int(0) - 1
            switch try row.string(1) {
            case "accepted":
                outcomes[index] = .accepted(response: try row.string(3), deliveries: try row.int(10))
            case "replay":
                outcomes[index] = .replay(IdempotentResponse(bodyHash: try row.string(2), response: try row.string(3),
                                                             status: try row.int(4)))
            case "limited":
                outcomes[index] = .limited(RateReservation(
                    admitted: false, minuteCount: try row.int(5), minuteOldest: try row.optionalInt(6),
                    dayCount: try row.int(7), dayOldest: try row.optionalInt(8), nowSeconds: try row.int(9)))
            default:
                outcomes[index] = .render
            }
        }
        return try outcomes.map { outcome in
            guard let outcome else {
                throw PostgresError(code: .decodingFailed, serverMessage: "herald_intake_push skipped a push")
            }
            return outcome
        }
    }

    static func parameters(_ pushes: [IntakePush]) -> [(any PostgresEncodable)?] {
        var emails = TextArray(), emailsJSON = TextArray(), wallets = TextArray(), walletsJSON = TextArray()
        var emailEnds: [Int] = [], walletEnds: [Int] = []
        emailEnds.reserveCapacity(pushes.count)
        walletEnds.reserveCapacity(pushes.count)
        var total = (emails: 0, wallets: 0)
        for push in pushes {
            for email in push.emails {
                emails.append(email)
                emailsJSON.append(Self.jsonString(email))
            }
            for wallet in push.wallets {
                wallets.append(wallet)
                walletsJSON.append(Self.jsonString(wallet))
            }
            total.emails += push.emails.count
            total.wallets += push.wallets.count
            emailEnds.append(total.emails)
            walletEnds.append(total.wallets)
        }
        func texts(_ value: (IntakePush) -> String?) -> TextArray {
            var array = TextArray()
            for push in pushes { array.append(value(push)) }
            return array
        }
        func bytes(_ value: (IntakePush) -> [UInt8]) -> TextArray {
            var array = TextArray()
            for push in pushes { array.append(bytes: value(push)) }
            return array
        }
        return [
            texts { PostgresUUID.format($0.partner.id) },
            pushes.map(\.partner.rateLimitPerMinute), pushes.map(\.partner.rateLimitPerDay),
            texts { $0.partner.tenantID }, texts { $0.partner.miniAppID },
            texts { PostgresTimestamp.format($0.now) }, texts { $0.idempotencyKey }, texts { $0.bodyHash },
            texts { PostgresUUID.format($0.requestID) }, texts { PostgresTimestamp.format($0.createdAt) },
            texts { $0.title }, texts { $0.body }, texts { $0.deepLink }, texts { $0.dataJSON },
            texts { $0.sendAt.map(PostgresTimestamp.format) }, pushes.map(\.ttlSeconds),
            texts { PostgresTimestamp.format($0.expiresAt) },
            emailEnds, emails, emailsJSON, walletEnds, wallets, walletsJSON,
            texts { PostgresUUID.format($0.deliveryID) }, bytes { $0.apnsPayload }, bytes { $0.fcmPayload },
        ]
    }

    private static func jsonString(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        JSONWriter.writeString(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The batch's statement (sql/013_intake_push.sql); its parameters are `parameters(_:)`.
    public static let pushSQL = """
        SELECT * FROM herald_intake_push($1::uuid[], $2::int[], $3::int[], $4::text[], $5::text[],
            $6::timestamptz[], $7::text[], $8::text[], $9::uuid[], $10::timestamptz[], $11::text[], $12::text[],
            $13::text[], $14::text[], $15::timestamptz[], $16::int[], $17::timestamptz[], $18::int[], $19::text[],
            $20::text[], $21::int[], $22::text[], $23::text[], $24::uuid[], $25::text[], $26::text[])
        """
}

/// A one-dimensional text array literal built in one buffer: elements are quoted, `"` and `\`
/// escaped byte by byte (no per-scalar work for the common case), nil is NULL.
struct TextArray: PostgresEncodable {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var count = 0

    mutating func append(_ element: String?) {
        guard var text = element else {
            separate()
            bytes.append(contentsOf: "NULL".utf8)
            return
        }
        text.withUTF8 { append(buffer: $0) }
    }

    mutating func append(bytes element: [UInt8]) {
        element.withUnsafeBufferPointer { append(buffer: $0) }
    }

    private mutating func append(buffer: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        for index in 0..<buffer.count where buffer[index] == UInt8(ascii: "\"") || buffer[index] == UInt8(ascii: "\\") {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
            bytes.append(UInt8(ascii: "\\"))
            start = index
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<buffer.count]))
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func separate() {
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        count += 1
    }

    var postgresText: String {
        var out = bytes
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
