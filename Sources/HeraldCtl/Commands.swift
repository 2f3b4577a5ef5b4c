import Foundation
import HeraldCore
import HeraldCrypto
import PartnerIcons
import Postgres
import Store

enum Commands {
    /// heraldctl as the audit trail names it (sql/047_admin_audit.sql): with the OS user running it.
    static var actor: AdminActor { AdminActor(.heraldctl, detail: NSUserName()) }

    /// `--partner` as given: a partner id, or a mini-app id and every partner (revoked ones too) that had it; nil when
    /// the option is absent. Fails (1) for a mini-app id no partner had.
    static func partnerIDs(_ arguments: Arguments, pool: PostgresPool) throws -> [UUID]? {
        guard let partner = arguments.option("partner") else { return nil }
        if let id = UUID(uuidString: partner) { return [id] }
        let miniAppID = try PartnerRules.miniAppID(partner)
        let ids = try ReplayStore(pool: pool).partnerIDs(miniAppID: miniAppID)
        guard !ids.isEmpty else { throw CommandFailure(message: "no partner has mini-app id \(miniAppID)") }
        return ids
    }

    /// A replay in the audit trail (no audit trigger sees the rows it changes): the selectors as given and the counts.
    static func auditReplay(
        _ action: String, pool: PostgresPool, partnerIDs: [UUID], arguments: Arguments,
        matched: Int, replayed: Int
    ) throws {
        try AdminAuditStore(pool: pool).record(
            action, partnerID: partnerIDs.count == 1 ? partnerIDs[0] : nil,
            detail: .object([
                ("arguments", arguments.auditJSON), ("matched", .number(Double(matched))),
                ("replayed", .number(Double(replayed))),
            ]),
            by: actor)
    }

    static func migrate(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        try arguments.allowOnly(["json"])
        let applied = try pool.withConnection { try Migrator.bundled().migrate($0) }
        printer.emit(.object([("applied", .array(applied.map { .string($0) }))])) {
            applied.isEmpty ? "schema is up to date" : "applied " + applied.joined(separator: ", ")
        }
    }

    /// One sweep of the Live Activities (what every worker's activity sweeper runs each second), until none is due:
    /// the scheduled starts whose time came, then the TTL's ends.
    static func expire(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        try arguments.allowOnly(["json"])
        let store = ActivityStore(pool: pool)
        let starts = try store.startAllDue(now: Date())
        let expired = try store.expireAll()
        printer.emit(
            .object([
                ("expired", .number(Double(expired))), ("started", .number(Double(starts.started))),
                ("refused", .number(Double(starts.refused))),
            ])
        ) {
            "expired \(expired) live activit\(expired == 1 ? "y" : "ies"); scheduled starts: \(starts.started) sent, "
                + "\(starts.refused) refused"
        }
    }

    static func partitions(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        try arguments.allowOnly(["json", "months-ahead", "retention-days", "list"])
        let maintenance = MaintenanceStore(pool: pool)
        let monthsAhead = try arguments.integer("months-ahead") ?? 3
        guard (0...36).contains(monthsAhead) else { throw UsageError(message: "--months-ahead must be 0-36") }
        try maintenance.ensurePartitions(monthsAhead: monthsAhead)
        var dropped: [String] = []
        if let days = try arguments.integer("retention-days") {
            guard days >= 31 else { throw UsageError(message: "--retention-days must be at least 31") }
            dropped = try maintenance.dropPartitions(retentionDays: days)
        }
        let partitions = try maintenance.listPartitions()
        printer.emit(
            .object([
                ("dropped", .array(dropped.map { .string($0) })),
                (
                    "partitions",
                    .array(
                        partitions.map {
                            .object([
                                ("table", .string($0.table)), ("partition", .string($0.partition)),
                                ("bounds", .string($0.bounds)),
                            ])
                        })
                ),
            ])
        ) { text in
            var parts = dropped.map { "dropped \($0)" }
            if arguments.flag("list") {
                parts.append(
                    text.table(
                        ["TABLE", "PARTITION", "BOUNDS"], partitions.map { [$0.table, $0.partition, $0.bounds] }))
            } else {
                parts.append("\(partitions.count) partitions, \(monthsAhead) months ahead")
            }
            return parts.joined(separator: "\n")
        }
    }

    /// `signer` is read only when a revocation finds active Live Activities to end.
    static func partners(
        pool: PostgresPool, arguments: Arguments, printer: Printer, defaults: PartnerDefaults,
        signer: () throws -> HMACSigner, iconSource: () throws -> PartnerIconSource
    ) throws {
        let store = PartnerStore(pool: pool).acting(as: actor)
        guard let action = arguments.positional.first else { throw UsageError(message: "partners needs an action") }
        switch action {
        case "create":
            try arguments.allowOnly([
                "json", "mini-app-id", "display-name", "tenant", "rate-limit-per-minute",
                "rate-limit-per-day", "icon-url", "icon-file", "webhook-url", "sound", "silent",
                "allow-time-sensitive",
            ])
            let miniAppID = try PartnerRules.miniAppID(try arguments.requiredOption("mini-app-id"))
            let displayName = try PartnerRules.displayName(try arguments.requiredOption("display-name"))
            let tenant = try PartnerRules.tenantID(arguments.option("tenant") ?? defaults.tenant)
            let perMinute = try positive(arguments, "rate-limit-per-minute") ?? defaults.perMinute
            let perDay = try positive(arguments, "rate-limit-per-day") ?? defaults.perDay
            let sound = try sound(arguments) ?? .systemDefault
            let webhook = try arguments.option("webhook-url").map(PartnerRules.webhookURL).map {
                PartnerWebhook(url: $0, secret: try WebhookSignature.generateSecret())
            }
            let icon = try iconChange(arguments, source: iconSource)
            let key = try PartnerAPIKey.generate()
            let record = try store.create(
                NewPartner(
                    miniAppID: miniAppID, displayName: displayName, tenantID: tenant,
                    rateLimitPerMinute: perMinute, rateLimitPerDay: perDay, icon: icon, webhook: webhook,
                    sound: sound, allowTimeSensitive: arguments.flag("allow-time-sensitive")),
                keyHash: PartnerAPIKey.hash(key))
            printer.emit(record.json(apiKey: key, webhookSecret: webhook?.secret)) {
                describe(record) + "\napi key (shown once, hand it over a secure channel): \(key)"
                    + (webhook.map { "\nwebhook secret (shown once): \($0.secret)" } ?? "")
            }
        case "list":
            try arguments.allowOnly(["json"])
            let records = try store.list()
            printer.emit(.object([("partners", .array(records.map { $0.json() }))])) { text in
                records.isEmpty
                    ? "no partners"
                    : text.table(
                        [
                            "ID", "MINI-APP", "NAME", "TENANT", "PER MIN", "PER DAY", "CREATED", "REVOKED",
                            "PREVIOUS KEY UNTIL", "PREVIOUS SECRET UNTIL",
                        ],
                        records.map { record in
                            [
                                record.id.uuidString.lowercased(), record.miniAppID, record.displayName,
                                record.tenantID,
                                String(record.rateLimitPerMinute), String(record.rateLimitPerDay),
                                text.time(record.createdAt),
                                text.time(record.revokedAt), text.time(record.previousKeyExpiresAt),
                                text.time(record.previousWebhookSecretExpiresAt),
                            ]
                        })
            }
        case "update":
            try arguments.allowOnly([
                "json", "display-name", "rate-limit-per-minute", "rate-limit-per-day", "icon-url",
                "icon-file", "no-icon", "webhook-url", "no-webhook", "sound", "silent",
                "allow-time-sensitive", "disallow-time-sensitive",
            ])
            let id = try partnerID(arguments)
            var changes = PartnerChanges(
                displayName: try arguments.option("display-name").map(PartnerRules.displayName),
                rateLimitPerMinute: try positive(arguments, "rate-limit-per-minute"),
                rateLimitPerDay: try positive(arguments, "rate-limit-per-day"),
                sound: try sound(arguments))
            switch (arguments.flag("allow-time-sensitive"), arguments.flag("disallow-time-sensitive")) {
            case (true, true):
                throw UsageError(message: "--allow-time-sensitive cannot go with --disallow-time-sensitive")
            case (true, false): changes.allowTimeSensitive = true
            case (false, true): changes.allowTimeSensitive = false
            case (false, false): break
            }
            if arguments.flag("no-icon") {
                guard arguments.option("icon-url") == nil, arguments.option("icon-file") == nil else {
                    throw UsageError(message: "--no-icon cannot go with --icon-url or --icon-file")
                }
                changes.icon = .remove
            } else {
                changes.icon = try iconChange(arguments, source: iconSource)
            }
            var shownSecret: String?
            if arguments.option("webhook-url") != nil || arguments.flag("no-webhook") {
                guard arguments.option("webhook-url") == nil || !arguments.flag("no-webhook") else {
                    throw UsageError(message: "--no-webhook cannot go with --webhook-url")
                }
                guard let existing = try store.find(id: id) else { throw CommandFailure(message: "no such partner") }
                (changes.webhook, shownSecret) = try PartnerWebhookChange.requested(
                    try arguments.option("webhook-url").map(PartnerRules.webhookURL), for: existing,
                    newSecret: WebhookSignature.generateSecret)
            }
            guard let record = try store.update(id: id, changes) else {
                throw CommandFailure(message: "no such partner")
            }
            printer.emit(record.json(webhookSecret: shownSecret)) {
                describe(record) + (shownSecret.map { "\nwebhook secret (shown once): \($0)" } ?? "")
            }
        case "rotate-key":
            try arguments.allowOnly(["json", "previous-key-valid"])
            let overlap = try overlapSeconds(arguments, "previous-key-valid")
            let key = try PartnerAPIKey.generate()
            guard
                let record = try store.rotateKey(
                    id: try partnerID(arguments), keyHash: PartnerAPIKey.hash(key),
                    previousKeyValidSeconds: overlap)
            else {
                throw CommandFailure(message: "no such active partner")
            }
            printer.emit(record.json(apiKey: key)) { describe(record) + "\nnew api key (shown once): \(key)" }
        case "end-previous-key":
            try arguments.allowOnly(["json"])
            try show(try store.endPreviousKey(id: try partnerID(arguments)), printer, missing: "no such active partner")
        case "rotate-webhook-secret":
            try arguments.allowOnly(["json", "previous-secret-valid"])
            let overlap = try overlapSeconds(arguments, "previous-secret-valid")
            let secret = try WebhookSignature.generateSecret()
            guard
                let record = try store.rotateWebhookSecret(
                    id: try partnerID(arguments), secret: secret,
                    previousSecretValidSeconds: overlap)
            else {
                throw CommandFailure(message: "no such active partner with a webhook")
            }
            printer.emit(record.json(webhookSecret: secret)) {
                describe(record) + "\nnew webhook secret (shown once): \(secret)"
            }
        case "end-previous-webhook-secret":
            try arguments.allowOnly(["json"])
            try show(
                try store.endPreviousWebhookSecret(id: try partnerID(arguments)), printer,
                missing: "no such active partner")
        case "revoke":
            try arguments.allowOnly(["json"])
            try show(
                try store.revoke(id: try partnerID(arguments), signer: signer), printer, missing: "no such partner")
        case "suspend", "resume":
            try arguments.allowOnly(["json"])
            try show(
                try store.setSuspended(id: try partnerID(arguments), action == "suspend"), printer,
                missing: "no such active partner")
        default:
            throw UsageError(message: "unknown partners action \(action)")
        }
    }

    /// `--icon-url URL` (fetched now) or `--icon-file PATH` (read now), rasterised before anything is
    /// written, as the admin API does; nil when neither is given.
    private static func iconChange(_ arguments: Arguments, source: () throws -> PartnerIconSource) throws
        -> PartnerIconChange?
    {
        switch (arguments.option("icon-url"), arguments.option("icon-file")) {
        case (nil, nil):
            return nil
        case (let url?, nil):
            let checked = try PartnerRules.iconURL(url)
            return .replace(try source().fromURL(checked), sourceURL: checked)
        case (nil, let path?):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(message: "cannot read \(path)")
            }
            return .replace(try source().fromUpload(Array(data)), sourceURL: nil)
        default:
            throw UsageError(message: "give --icon-url or --icon-file, not both")
        }
    }

    /// `--sound NAME` (checked as the admin API does) or `--silent`; nil when neither is given.
    private static func sound(_ arguments: Arguments) throws -> NotificationSound? {
        switch (arguments.option("sound"), arguments.flag("silent")) {
        case (nil, false): return nil
        case (let name?, false): return .named(try PartnerRules.soundName(name))
        case (nil, true): return .silent
        default: throw UsageError(message: "--silent cannot go with --sound")
        }
    }

    /// How long a rotated credential keeps working: `--NAME DURATION` (at most 7 days), given once; 0 without it.
    private static func overlapSeconds(_ arguments: Arguments, _ name: String) throws(UsageError) -> Int {
        try arguments.single([name])
        let overlap = try arguments.duration(name) ?? 0
        guard PartnerRules.rotationOverlapSecondsRange.contains(overlap) else {
            throw UsageError(message: "--\(name) must be at most 7d")
        }
        return overlap
    }

    private static func positive(_ arguments: Arguments, _ name: String) throws(UsageError) -> Int? {
        guard let value = try arguments.integer(name) else { return nil }
        guard value > 0 else { throw UsageError(message: "--\(name) must be positive") }
        return value
    }

    private static func partnerID(_ arguments: Arguments) throws(UsageError) -> UUID {
        guard arguments.positional.count == 2, let id = UUID(uuidString: arguments.positional[1]) else {
            throw UsageError(message: "a partner id (UUID) is required")
        }
        return id
    }

    /// The partner an action changed, printed as it now is; `missing` when there was none to change.
    private static func show(_ record: PartnerRecord?, _ printer: Printer, missing: String) throws {
        guard let record else { throw CommandFailure(message: missing) }
        printer.emit(record.json()) { describe(record) }
    }

    static func describe(_ record: PartnerRecord) -> String {
        let overlap =
            (record.previousKeyExpiresAt.map { "  previous key valid until \(ISO8601.format($0))" } ?? "")
            + (record.previousWebhookSecretExpiresAt.map {
                "  previous webhook secret valid until \(ISO8601.format($0))"
            } ?? "")
        let state =
            (record.revokedAt.map { "revoked \(ISO8601.format($0))" }
                ?? record.suspendedAt.map { "suspended \(ISO8601.format($0))" } ?? "active") + overlap
        return
            "\(record.id.uuidString.lowercased())  \(record.miniAppID)  \"\(record.displayName)\"  tenant=\(record.tenantID)  "
            + "\(record.rateLimitPerMinute)/min \(record.rateLimitPerDay)/day  "
            + "sound=\(record.sound.name ?? "(silent)")\(record.allowTimeSensitive ? "  time-sensitive" : "")  \(state)"
    }
}
