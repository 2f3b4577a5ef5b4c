import Foundation
import HeraldCore
import Postgres

/// A sends-file partner as the backfill finds it by mini-app id.
public enum BackfillPartner: Sendable {
    case active(PartnerProfile)
    /// Every partner row of this mini-app is revoked.
    case revoked
    case unknown
}

/// One accepted line of a sends file, ready to write: its line number and key, and the rows the
/// intake would write for the same push (`PushPreparation.prepare`, the bulk lane).
public struct BackfillSend: Sendable {
    public let line: Int
    public let key: String
    public let push: OutboxWrite
    public init(line: Int, key: String, push: OutboxWrite) {
        self.line = line
        self.key = key
        self.push = push
    }
}

/// What happened to a written line.
public enum BackfillOutcome: Sendable, Equatable {
    case accepted
    /// An earlier run holds the key: this line was enqueued before.
    case duplicate
    /// An earlier line of this run holds the key.
    case duplicateKey(firstLine: Int)
}

/// One line of a users file, validated by the host API's rules (`HostDirectoryRules`).
public struct BackfillUser: Sendable {
    public let line: Int
    public let userID: String
    public let entry: UserEntry
    public let devices: [(deviceID: String, device: DeviceRegistration)]
    /// The line's time zone and quiet hours, replacing the user's; nil when the line carries neither: the user's
    /// stay as they are.
    public let guards: UserGuards?
    public init(
        line: Int, userID: String, entry: UserEntry, devices: [(deviceID: String, device: DeviceRegistration)],
        guards: UserGuards? = nil
    ) {
        self.line = line
        self.userID = userID
        self.entry = entry
        self.devices = devices
        self.guards = guards
    }
}

/// The queries of `heraldctl backfill` (sql/functions/backfill_*.sql): a batch of lines per round trip.
public struct BackfillStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The active partner of a mini-app, or why there is none.
    public func partner(miniAppID: String) throws -> BackfillPartner {
        try pool.withConnection { connection in
            let rows = try connection.rows(Queries.Partners.FindByMiniApp(miniAppID: miniAppID))
            if let active = rows.first(where: { $0.revokedAt == nil }) {
                return .active(active.profile)
            }
            return rows.isEmpty ? .unknown : .revoked
        }
    }

    /// One batch's recipients and the keys already written, in ONE round trip (a pipeline of two
    /// statements). `lines` pairs each line number with its partner and push. A taken key says
    /// whether run `run` wrote it itself (at `firstLine`) or an earlier run did.
    public func resolve(
        run: UUID,
        _ lines: [(line: Int, partner: PartnerProfile, key: String, emails: [String], wallets: [String])]
    )
        throws -> (resolutions: [Int: RecipientResolution], taken: [Int: BackfillOutcome])
    {
        // herald_resolve_lines' layout: line i of the call is lines[i - 1], and each identifier names its line.
        var tenants: [String] = [], miniApps: [String] = []
        var emailLines: [Int] = [], emails: [String] = [], walletLines: [Int] = [], wallets: [String] = []
        for (index, entry) in lines.enumerated() {
            tenants.append(entry.partner.tenantID)
            miniApps.append(entry.partner.miniAppID)
            emails += entry.emails
            emailLines += repeatElement(index + 1, count: entry.emails.count)
            wallets += entry.wallets
            walletLines += repeatElement(index + 1, count: entry.wallets.count)
        }
        let results = try pool.withConnection { connection in
            try connection.pipeline(queries: [
                Queries.Backfill.TakenKeys(
                    lines: lines.map(\.line), partnerIDs: lines.map(\.partner.id), keys: lines.map(\.key),
                    run: run),
                Queries.Backfill.ResolveLines(
                    tenants: tenants, miniApps: miniApps, emailLines: emailLines, emails: emails,
                    walletLines: walletLines, wallets: wallets),
            ])
        }
        var taken: [Int: BackfillOutcome] = [:]
        for key in try TakenKey.rows(of: results[0]) {
            taken[key.line] = key.thisRun ? .duplicateKey(firstLine: key.firstLine) : .duplicate
        }
        var resolutions: [Int: RecipientResolution] = [:]
        for entry in lines { resolutions[entry.line] = RecipientResolution() }
        for numbered in try NumberedResolutionLine.rows(of: results[1]) {
            let position = numbered.line
            guard lines.indices.contains(position - 1) else {
                throw PostgresError(code: .decodingFailed, serverMessage: "herald_resolve_lines named line \(position)")
            }
            try resolutions[lines[position - 1].line]?.add(numbered.resolution)
        }
        // The intake's order, so deliveries come out the same.
        for line in resolutions.keys { resolutions[line]!.sort() }
        return (resolutions, taken)
    }

    /// Writes a batch in one transaction: the lines, deliveries and senders COPYed into the
    /// session's staging tables, then ONE statement writes every row (`herald_backfill_apply`).
    /// Returns each line's outcome. `run` identifies this run of the command (a key it wrote itself
    /// is a duplicate line of the file).
    public func enqueue(run: UUID, _ sends: [BackfillSend]) throws -> [Int: BackfillOutcome] {
        guard !sends.isEmpty else { return [:] }
        var lines = PostgresCopyRows(reservingBytes: sends.count * 400)
        var deliveries = PostgresCopyRows(reservingBytes: sends.count * 900)
        var senders = PostgresCopyRows(reservingBytes: sends.count * 60)
        for send in sends {
            let push = send.push
            guard let resolved = push.resolved else { throw HeraldError.internalError }
            for value: (any PostgresEncodable)? in [
                send.line, push.partnerID, send.key, push.requestID, push.createdAt, push.miniAppID, push.title,
                push.body, push.deepLink, push.dataJSON, push.sendAt, push.ttlSeconds, resolved.recipients,
                resolved.suppressed, resolved.missingJSON, push.deliveries.count, push.collapseKey,
            ] { lines.field(value) }
            lines.endRow()
            for user in resolved.senderUserIDs {
                senders.field(push.requestID)
                senders.field(user)
                senders.endRow()
            }
            for d in push.deliveries {
                for value: (any PostgresEncodable)? in [
                    push.requestID, d.id, d.service.rawValue, d.userID, d.deviceID,
                    d.environment, d.payload,
                ] { deliveries.field(value) }
                deliveries.endRow()
            }
        }
        // Two runs writing the same rows at once (tokens taken, user_senders) may deadlock: the batch is
        // one transaction, retried.
        let rows = try retryingDeadlocks {
            try pool.withConnection { connection in
                try connection.transaction { connection in
                    try connection.run(Queries.Backfill.Stage())
                    try connection.copy(Queries.Backfill.copyLines, rows: lines)
                    if deliveries.count > 0 { try connection.copy(Queries.Backfill.copyDeliveries, rows: deliveries) }
                    if senders.count > 0 { try connection.copy(Queries.Backfill.copySenders, rows: senders) }
                    return try connection.rows(Queries.Backfill.Apply(run: run))
                }
            }
        }
        var outcomes: [Int: BackfillOutcome] = [:]
        for row in rows {
            switch row.outcome {
            case "accepted": outcomes[row.line] = .accepted
            case "duplicate_key":
                guard let firstLine = row.firstLine else {
                    throw PostgresError(
                        code: .decodingFailed,
                        serverMessage: "herald_backfill_apply named no first line")
                }
                outcomes[row.line] = .duplicateKey(firstLine: firstLine)
            default: outcomes[row.line] = .duplicate
            }
        }
        return outcomes
    }

    /// Upserts a batch of users and their devices, each line in its own subtransaction; returns
    /// each line's outcome: nil when written (with whether the user was created), else the error.
    public func putUsers(_ users: [BackfillUser]) throws -> [Int: (error: HeraldError?, devices: Int)] {
        guard !users.isEmpty else { return [:] }
        var emailStart: [Int] = [], emailCount: [Int] = [], emails: [String] = []
        var walletStart: [Int] = [], walletCount: [Int] = [], wallets: [String] = []
        var deviceStart: [Int] = [], deviceCount: [Int] = [], deviceIDs: [String] = [], platforms: [String] = []
        var environments: [String] = [], bundles: [String?] = [], apns: [String?] = [], pushToStart: [String?] = []
        var fcm: [String?] = [], templateTokens: [String?] = []
        var timeZones: [String?] = [], quietStarts: [String?] = [], quietEnds: [String?] = []
        for user in users {
            let quiet = user.guards?.quietHours
            timeZones.append(user.guards?.timeZone)
            quietStarts.append(quiet.map { QuietHours.text($0.start) })
            quietEnds.append(quiet.map { QuietHours.text($0.end) })
            emailStart.append(emails.count + 1); emailCount.append(user.entry.emails.count)
            emails.append(contentsOf: user.entry.emails)
            walletStart.append(wallets.count + 1); walletCount.append(user.entry.wallets.count)
            wallets.append(contentsOf: user.entry.wallets)
            deviceStart.append(deviceIDs.count + 1); deviceCount.append(user.devices.count)
            for (id, device) in user.devices {
                deviceIDs.append(id); platforms.append(device.platform); environments.append(device.environment)
                bundles.append(device.bundleID); apns.append(device.apnsToken)
                pushToStart.append(device.apnsPushToStartToken); fcm.append(device.fcmToken)
                templateTokens.append(device.templateTokensParameter)
            }
        }
        let parameters: [(any PostgresEncodable)?] = [
            users.map(\.line), users.map(\.userID), users.map(\.entry.tenantID), emailStart, emailCount, emails,
            walletStart, walletCount, wallets, deviceStart, deviceCount, deviceIDs, platforms, environments,
            NullableTextArray(bundles), NullableTextArray(apns), NullableTextArray(pushToStart), NullableTextArray(fcm),
            NullableTextArray(templateTokens), users.map { $0.guards != nil }, NullableTextArray(timeZones),
            NullableTextArray(quietStarts), NullableTextArray(quietEnds),
        ]
        let rows = try retryingDeadlocks {
            try pool.withConnection { try $0.rows(PutUsers(bindings: parameters)) }
        }
        var outcomes: [Int: (error: HeraldError?, devices: Int)] = [:]
        for row in rows {
            let error: HeraldError? =
                switch row.outcome {
                case "ok": nil
                case "unknown_time_zone": UserGuards.unknownTimeZone()
                default: DirectoryStore.identifierTaken
                }
            outcomes[row.line] = (error, row.devices)
        }
        return outcomes
    }

    /// Wakes the workers (they also poll): one NOTIFY per committed batch.
    public func notifyWorkers() throws {
        try pool.withConnection { try DeliveryStore().notifyWorkers(on: $0) }
    }
}

/// A text[] whose elements may be NULL (`{"a",NULL}`).
struct NullableTextArray: PostgresEncodable {
    let values: [String?]
    init(_ values: [String?]) { self.values = values }
    var postgresText: String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            if let value { value.appendQuotedArrayElement(to: &out) } else { out.append(contentsOf: "NULL".utf8) }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}

// The statements of the backfill (Sources/Store/Queries/backfill.sql) and the rows they return.
extension BackfillStore {
    /// A row of `takenKeys`: a line whose (partner, key) is written already, by this run or an earlier one.
    struct TakenKey: QueryRow, Decodable {
        let line: Int
        let thisRun: Bool
        let firstLine: Int
    }

    /// A row of `resolveLines`: a resolution line and the line of the batch it belongs to (1-based).
    struct NumberedResolutionLine: QueryRow {
        let line: Int
        let resolution: ResolutionLine

        init(row: PostgresRow) throws {
            line = try row.int("line")
            resolution = try ResolutionLine(row: row)
        }
    }

    /// A row of `apply`: a line's outcome.
    struct AppliedLine: QueryRow, Decodable {
        let line: Int
        let outcome: String
        let firstLine: Int?
    }

    /// Its 23 array parameters are built by `putUsers`.
    struct PutUsers: NamedQuery {
        struct Row: QueryRow, Decodable {
            let line: Int
            let outcome: String
            let devices: Int
        }

        static let sql = Queries.Backfill.putUsers
        let bindings: [(any PostgresEncodable)?]
    }
}
