import Foundation
import HeraldCore
import HeraldCrypto
import ServiceSupport
import Store

/// `backfill sends`: each line is a push body (docs/api.md) plus `partner` (mini-app id) and `key`.
/// Every partner rule of the push endpoint applies, through the intake's own code
/// (`PushPreparation`): tenant, brand prefix, deep-link namespace, data, payload size, opt-outs,
/// sendAt and ttlSeconds with HERALD_DEFAULT_TTL_SECONDS, interruptionLevel against the partner's
/// time-sensitive permission, the partner's sound, category against HERALD_NOTIFICATION_CATEGORIES. The partner's
/// rate limits do not: the operator's backfill goes to the bulk lane, behind partner traffic, instead.
struct SendsBackfill {
    let store: BackfillStore
    let settings: PushSettings
    let signer: HMACSigner
    let batchSize: Int
    /// Marks the keys this run writes, so a key used twice in the file tells itself from a rerun.
    let runID = UUID()
    private var partners: [String: BackfillPartner] = [:]
    private var summary = SendsSummary()
    /// The batch being written while the next is prepared, and what its outcomes decide.
    private var inFlight: Written?
    private let writer = BackfillWriter<[Int: BackfillOutcome]>()

    struct Written {
        let sends: [BackfillSend]
        let repeats: [(line: Int, first: Int)]
        let taken: [Int: BackfillOutcome]
    }

    init(store: BackfillStore, settings: PushSettings, batchSize: Int) {
        self.store = store
        self.settings = settings
        self.signer = HMACSigner(keyID: settings.signingKeyID, key: settings.activeKey)
        self.batchSize = batchSize
    }

    /// A line that passed every check that needs no database.
    struct Pending {
        let line: Int
        let partner: PartnerProfile
        let key: String
        let checked: CheckedPush
    }

    mutating func load(_ input: LineReader) throws -> SendsSummary {
        let progress = Progress(label: "backfill sends", totalBytes: input.size)
        var batch: [Pending] = []
        var batchKeys: [String: Int] = [:]
        // Later lines of the batch with the key of an earlier one: decided with that line's outcome.
        var repeats: [(line: Int, first: Int)] = []
        var now = Date()
        while !Interruption.requested, let bytes = try input.next() {
            if BackfillLine.isBlank(bytes) { continue }
            summary.lines += 1
            let line = input.lineNumber
            switch try check(bytes, line: line, now: now) {
            case .failure(let rejected):
                summary.rejected.append(rejected)
            case .success(let pending):
                let batchKey = pending.partner.id.uuidString + "\u{0}" + pending.key
                if let first = batchKeys[batchKey] {
                    repeats.append((line, first))
                    continue
                }
                batchKeys[batchKey] = line
                batch.append(pending)
            }
            if batch.count >= batchSize {
                try flush(batch, repeats: repeats, now: now)
                batch.removeAll(keepingCapacity: true)
                batchKeys.removeAll(keepingCapacity: true)
                repeats.removeAll(keepingCapacity: true)
                progress.update(lines: summary.lines, bytes: input.bytesRead)
                now = Date()
            }
        }
        // The batch read last commits even when interrupted: its lines were read and checked.
        try flush(batch, repeats: repeats, now: now)
        try collect()
        writer.stop()
        summary.interrupted = Interruption.requested
        summary.rejected.sort { $0.line < $1.line }
        progress.finish(lines: summary.lines, bytes: input.bytesRead, interrupted: summary.interrupted)
        return summary
    }

    static func duplicateKey(_ line: Int, first: Int) -> RejectedLine {
        RejectedLine(line: line, code: "duplicate_key", message: "key was already used by line \(first) of this file.")
    }

    /// JSON, partner, key, then the push endpoint's checks (fields, payload size).
    private mutating func check(_ bytes: [UInt8], line: Int, now: Date) throws -> Result<Pending, RejectedLine> {
        let json: JSONValue
        switch BackfillLine.parse(bytes, line: line) {
        case .failure(let rejected): return .failure(rejected)
        case .success(let value): json = value
        }
        let members = json.objectMembers!
        guard let partnerValue = json["partner"] else {
            return .failure(.of(line, .missingField("partner")))
        }
        guard let miniAppID = partnerValue.stringValue, Identifiers.isValidMiniAppID(miniAppID) else {
            return .failure(.of(line, .invalidField("partner", "partner must be a partner's miniAppId.")))
        }
        guard let keyValue = json["key"] else { return .failure(.of(line, .missingField("key"))) }
        guard let key = keyValue.stringValue, Identifiers.isValidIdempotencyKey(key) else {
            return .failure(.of(line, .invalidField("key", "key must be 1-255 printable ASCII characters.")))
        }
        let partner: PartnerProfile
        switch try lookup(miniAppID) {
        case .active(let profile): partner = profile
        case .revoked:
            return .failure(
                RejectedLine(line: line, code: "partner_revoked", message: "Partner \(miniAppID) is revoked."))
        case .unknown:
            return .failure(
                RejectedLine(line: line, code: "unknown_partner", message: "No partner has miniAppId \(miniAppID)."))
        }
        let body = JSONValue.object(members.filter { $0.key != "partner" && $0.key != "key" })
        do throws(HeraldError) {
            let checked = try PushPreparation.check(
                body, partner: partner, rules: settings.rules, signer: signer, now: now)
            return .success(Pending(line: line, partner: partner, key: key, checked: checked))
        } catch {
            return .failure(.of(line, error))
        }
    }

    private mutating func lookup(_ miniAppID: String) throws -> BackfillPartner {
        if let known = partners[miniAppID] { return known }
        let found = try store.partner(miniAppID: miniAppID)
        partners[miniAppID] = found
        return found
    }

    /// One batch: recipients and taken keys in one round trip, the intake's rendering, one write.
    /// A repeated key follows the outcome of its first line: written by this run, the repeat is
    /// rejected (`duplicate_key`); written by an earlier run, the repeat is a duplicate as well, so a
    /// rerun reports the same whether the two lines fell into one batch or two.
    private mutating func flush(_ batch: [Pending], repeats: [(line: Int, first: Int)], now: Date) throws {
        guard !batch.isEmpty else { return }
        let (resolutions, taken) = try store.resolve(
            run: runID,
            batch.map {
                ($0.line, $0.partner, $0.key, $0.checked.request.emails, $0.checked.request.wallets)
            })
        var sends: [BackfillSend] = []
        sends.reserveCapacity(batch.count)
        for pending in batch {
            switch taken[pending.line] {
            case .duplicate?:
                summary.duplicates += 1
                continue
            case .duplicateKey(let first)?:
                summary.rejected.append(Self.duplicateKey(pending.line, first: first))
                continue
            default: break
            }
            let (_, write) = PushPreparation.prepare(
                pending.checked, partner: pending.partner, rules: settings.rules, now: now,
                resolution: resolutions[pending.line]!, idempotencyKey: nil, bodyHash: nil,
                lane: OutboxWrite.bulkLane)
            sends.append(BackfillSend(line: pending.line, key: pending.key, push: write))
        }
        // One write in flight: the previous batch's outcomes first, then this batch goes out.
        try collect()
        let (store, runID, written) = (self.store, self.runID, sends)
        writer.submit { try store.enqueue(run: runID, written) }
        inFlight = Written(sends: sends, repeats: repeats, taken: taken)
    }

    /// Waits for the batch in flight to commit and counts its lines.
    private mutating func collect() throws {
        guard let written = inFlight else { return }
        inFlight = nil
        let outcomes = try writer.wait()
        let (sends, repeats, taken) = (written.sends, written.repeats, written.taken)
        var deliveries = 0
        for send in sends {
            switch outcomes[send.line] {
            case .accepted:
                summary.accepted += 1
                deliveries += send.push.deliveries.count
            case .duplicateKey(let first):
                summary.rejected.append(Self.duplicateKey(send.line, first: first))
            case .duplicate, nil:
                summary.duplicates += 1
            }
        }
        for (line, first) in repeats {
            switch taken[first] ?? outcomes[first] {
            case .duplicate?: summary.duplicates += 1
            case .duplicateKey(let earliest)?: summary.rejected.append(Self.duplicateKey(line, first: earliest))
            default: summary.rejected.append(Self.duplicateKey(line, first: first))
            }
        }
        summary.deliveries += deliveries
        if deliveries > 0 { try? store.notifyWorkers() }
    }
}
