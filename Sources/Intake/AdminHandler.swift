import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import PartnerIcons
import ServiceSupport
import Store

/// The admin API: partners and their keys.
struct AdminHandler: Sendable {
    let partners: PartnerStore
    let audits: AdminAuditStore
    /// Fetches and rasterises an `iconUrl` before anything is written.
    let icons: PartnerIconSource
    let logger: Logger
    let defaultTenant: String
    let defaultPerMinute: Int
    let defaultPerDay: Int
    /// Signs the ends a revocation sends the partner's active activities.
    let signer: HMACSigner

    static let routes: [IntakeRoute] = [
        .admin("POST", "/api/admin/mini-app-partners") { try $0.admin.create($1, by: $0.actor($2, $1)) },
        .admin("GET", "/api/admin/mini-app-partners") { try $0.admin.list($1) },
        .admin("PATCH", "/api/admin/mini-app-partners/{id}") { try $0.admin.update($1, by: $0.actor($2, $1)) },
        .admin("DELETE", "/api/admin/mini-app-partners/{id}") { try $0.admin.revoke($1, by: $0.actor($2, $1)) },
        .admin("POST", "/api/admin/mini-app-partners/{id}/suspend") {
            try $0.admin.suspend($1, by: $0.actor($2, $1), true)
        },
        .admin("POST", "/api/admin/mini-app-partners/{id}/resume") {
            try $0.admin.suspend($1, by: $0.actor($2, $1), false)
        },
        .admin("POST", "/api/admin/mini-app-partners/{id}/rotate-key") {
            try $0.admin.rotateKey($1, by: $0.actor($2, $1))
        },
        .admin("DELETE", "/api/admin/mini-app-partners/{id}/previous-key") {
            try $0.admin.endPreviousKey($1, by: $0.actor($2, $1))
        },
        .admin("GET", "/api/admin/audit") { try $0.admin.audit($1) },
        .admin("POST", "/api/admin/mini-app-partners/{id}/rotate-webhook-secret") {
            try $0.admin.rotateWebhookSecret($1, by: $0.actor($2, $1))
        },
        .admin("DELETE", "/api/admin/mini-app-partners/{id}/previous-webhook-secret") {
            try $0.admin.endPreviousWebhookSecret($1, by: $0.actor($2, $1))
        },
    ]

    func create(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let fields = try JSONFields(
            request.jsonBody(),
            allowed: [
                "miniAppId", "displayName", "tenantId", "rateLimitPerMinute", "rateLimitPerDay", "iconUrl",
                "webhookUrl",
                "sound", "allowTimeSensitive",
            ])
        let miniAppID = try PartnerRules.miniAppID(try fields.requiredString("miniAppId"))
        let displayName = try PartnerRules.displayName(try fields.requiredString("displayName"))
        let tenantID = try PartnerRules.tenantID(try fields.string("tenantId") ?? defaultTenant)
        let perMinute =
            try fields.integer("rateLimitPerMinute", range: PartnerRules.rateLimitPerMinuteRange)
            ?? defaultPerMinute
        let perDay = try fields.integer("rateLimitPerDay", range: PartnerRules.rateLimitPerDayRange) ?? defaultPerDay
        let webhookURL = try fields.string("webhookUrl").map(PartnerRules.webhookURL)
        let sound = try Self.sound(fields) ?? .systemDefault
        let allowTimeSensitive = try fields.bool("allowTimeSensitive") ?? false
        let icon = try fields.string("iconUrl").map(PartnerRules.iconURL).map(iconChange)
        let key = try PartnerAPIKey.generate()
        let webhook = try webhookURL.map { PartnerWebhook(url: $0, secret: try WebhookSignature.generateSecret()) }
        let record = try partners.acting(as: actor).create(
            NewPartner(
                miniAppID: miniAppID, displayName: displayName, tenantID: tenantID,
                rateLimitPerMinute: perMinute, rateLimitPerDay: perDay, icon: icon, webhook: webhook,
                sound: sound, allowTimeSensitive: allowTimeSensitive),
            keyHash: PartnerAPIKey.hash(key))
        audit("partner created", record)
        return Reply.json(201, record.json(apiKey: key, webhookSecret: webhook?.secret))
    }

    /// `GET /api/admin/audit`: the audit trail newest first (`?partner=<id>`, `?before=<id>`, `?limit=1..1000`,
    /// default 100), with `next` to pass as `before` for the older page (null at the end).
    func audit(_ request: RoutedRequest) throws -> HTTPResponse {
        let query = ConsoleQuery(values: request.http.query)
        let limit = try query.integer("limit", range: 1...1_000) ?? 100
        let before = try query.integer("before", range: 1...Int.max)
        let entries = try audits.list(partnerID: try query.uuid("partner"), before: before, limit: limit)
        return Reply.json(
            200,
            .object([
                ("entries", .array(entries.map(\.json))),
                ("next", entries.count == limit ? entries.last.map { .number(Double($0.id)) } ?? .null : .null),
            ]))
    }

    func list(_ request: RoutedRequest) throws -> HTTPResponse {
        Reply.json(200, .object([("partners", .array(try partners.list().map { $0.json() }))]))
    }

    func update(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let id = try Self.partnerID(request)
        let fields = try JSONFields(
            request.jsonBody(),
            allowed: [
                "displayName", "rateLimitPerMinute", "rateLimitPerDay", "iconUrl", "webhookUrl", "sound",
                "allowTimeSensitive",
            ])
        var changes = PartnerChanges()
        changes.displayName = try fields.string("displayName").map(PartnerRules.displayName)
        changes.rateLimitPerMinute = try fields.integer(
            "rateLimitPerMinute", range: PartnerRules.rateLimitPerMinuteRange)
        changes.rateLimitPerDay = try fields.integer("rateLimitPerDay", range: PartnerRules.rateLimitPerDayRange)
        changes.sound = try Self.sound(fields)
        changes.allowTimeSensitive = try fields.bool("allowTimeSensitive")
        let iconURL =
            fields.has("iconUrl") ? Optional.some(try fields.string("iconUrl").map(PartnerRules.iconURL)) : nil
        let webhookURL =
            fields.has("webhookUrl")
            ? Optional.some(try fields.string("webhookUrl").map(PartnerRules.webhookURL)) : nil
        // A revoked partner is kept for the audit trail, not for editing (as for rotate-key):
        // changing it would look like a live partner's settings in the admin's view.
        guard let existing = try partners.find(id: id) else { throw HeraldError.notFound }
        guard existing.revokedAt == nil else { throw Self.partnerRevoked }
        // `"iconUrl": null` removes the icon; a URL is fetched now, so a bad one changes nothing.
        if let iconURL { changes.icon = try iconURL.map(iconChange) ?? .remove }
        // A new webhook URL gets a new secret, shown in this answer only; the old secret stops signing at once.
        var newSecret: String?
        if let webhookURL {
            (changes.webhook, newSecret) = try PartnerWebhookChange.requested(
                webhookURL, for: existing,
                newSecret: WebhookSignature.generateSecret)
        }
        guard let record = try partners.acting(as: actor).update(id: id, changes) else { throw HeraldError.notFound }
        audit("partner updated", record)
        return Reply.json(200, record.json(webhookSecret: newSecret))
    }

    /// A new webhook secret, shown once. The old one stops signing at once, or signs events too for
    /// `previousSecretValidSeconds` (an optional JSON body) so the partner can deploy the new secret first.
    func rotateWebhookSecret(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let id = try Self.partnerID(request)
        let overlap = try Self.overlapSeconds(request, field: "previousSecretValidSeconds")
        let secret = try WebhookSignature.generateSecret()
        let store = partners.acting(as: actor)
        guard let record = try store.rotateWebhookSecret(id: id, secret: secret, previousSecretValidSeconds: overlap)
        else {
            guard let existing = try partners.find(id: id) else { throw HeraldError.notFound }
            guard existing.revokedAt == nil else { throw Self.partnerRevoked }
            throw HeraldError(status: 409, code: "no_webhook", message: "The partner has no webhookUrl.")
        }
        audit("partner webhook secret rotated", record)
        return Reply.json(200, record.json(webhookSecret: secret))
    }

    /// The webhook secret before the last rotation stops signing now (the partner has moved, or it leaked).
    func endPreviousWebhookSecret(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let id = try Self.partnerID(request)
        guard let record = try partners.acting(as: actor).endPreviousWebhookSecret(id: id) else {
            throw try notActive(id)
        }
        audit("partner previous webhook secret ended", record)
        return Reply.json(200, record.json())
    }

    /// A new key, shown once. The old one is refused at once, or keeps working `previousKeyValidSeconds` (an optional
    /// JSON body) so the partner can deploy the new key first.
    func rotateKey(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let id = try Self.partnerID(request)
        let overlap = try Self.overlapSeconds(request, field: "previousKeyValidSeconds")
        let key = try PartnerAPIKey.generate()
        guard
            let record = try partners.acting(as: actor).rotateKey(
                id: id, keyHash: PartnerAPIKey.hash(key),
                previousKeyValidSeconds: overlap)
        else {
            throw try notActive(id)
        }
        audit("partner key rotated", record)
        return Reply.json(200, record.json(apiKey: key))
    }

    /// The key before the last rotation stops working now (the partner has moved, or it leaked).
    func endPreviousKey(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let id = try Self.partnerID(request)
        guard let record = try partners.acting(as: actor).endPreviousKey(id: id) else { throw try notActive(id) }
        audit("partner previous key ended", record)
        return Reply.json(200, record.json())
    }

    func revoke(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        guard
            let record = try partners.acting(as: actor).revoke(
                id: try Self.partnerID(request),
                signer: { signer })
        else {
            throw HeraldError.notFound
        }
        audit("partner revoked", record)
        return Reply.json(200, record.json())
    }

    /// `POST .../{id}/suspend` and `.../resume`: nothing of the partner is sent while it is suspended; resuming sends
    /// what is still within its TTL.
    func suspend(_ request: RoutedRequest, by actor: AdminActor, _ suspended: Bool) throws -> HTTPResponse {
        let id = try Self.partnerID(request)
        guard let record = try partners.acting(as: actor).setSuspended(id: id, suspended) else {
            throw try notActive(id)
        }
        audit(suspended ? "partner suspended" : "partner resumed", record)
        return Reply.json(200, record.json())
    }

    /// How long a rotated credential keeps working: the one member `field` of an optional JSON body; no body, or
    /// null, is 0 (it stops at once).
    private static func overlapSeconds(_ request: RoutedRequest, field: String) throws -> Int {
        guard !request.http.body.isEmpty else { return 0 }
        let fields = try JSONFields(request.jsonBody(), allowed: [field])
        return try fields.integer(field, range: PartnerRules.rotationOverlapSecondsRange) ?? 0
    }

    /// `sound` as sent: nil when absent, `.silent` for JSON null, else a checked file name.
    private static func sound(_ fields: JSONFields) throws(HeraldError) -> NotificationSound? {
        guard let member = fields.members.first(where: { $0.key == "sound" }) else { return nil }
        return try PartnerRules.sound(member.value)
    }

    /// The images of an `iconUrl`, fetched and rasterised before anything is written.
    private func iconChange(_ url: String) throws -> PartnerIconChange {
        .replace(try icons.fromURL(url), sourceURL: url)
    }

    /// Why a change to an active partner found none: 404 for no such partner, 409 `partner_revoked` for a revoked one.
    private func notActive(_ id: UUID) throws -> HeraldError {
        try partners.find(id: id) == nil ? .notFound : Self.partnerRevoked
    }

    static let partnerRevoked = HeraldError(
        status: 409, code: "partner_revoked",
        message: "The partner is revoked: its key cannot be rotated nor its settings changed.")

    private static func partnerID(_ request: RoutedRequest) throws(HeraldError) -> UUID {
        try request.uuid("id")
    }

    /// Admin changes are logged at info with ids only (never the key).
    private func audit(_ message: String, _ record: PartnerRecord) {
        logger.info(
            message,
            [
                ("partner", .string(record.id.uuidString.lowercased())), ("miniAppId", .string(record.miniAppID)),
                ("rateLimitPerMinute", .number(Double(record.rateLimitPerMinute))),
                ("rateLimitPerDay", .number(Double(record.rateLimitPerDay))),
                ("sound", record.sound.name.map { .string($0) } ?? .null),
                ("allowTimeSensitive", .bool(record.allowTimeSensitive)),
                ("previousKeyExpiresAt", record.previousKeyExpiresAt.map { .string(ISO8601.format($0)) } ?? .null),
                (
                    "previousWebhookSecretExpiresAt",
                    record.previousWebhookSecretExpiresAt.map { .string(ISO8601.format($0)) } ?? .null
                ),
                ("suspendedAt", record.suspendedAt.map { .string(ISO8601.format($0)) } ?? .null),
            ])
    }
}
