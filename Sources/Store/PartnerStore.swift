import Foundation
import HeraldCore
import Postgres

public struct NewPartner: Sendable {
    public var miniAppID: String
    public var displayName: String
    public var tenantID: String
    public var rateLimitPerMinute: Int
    public var rateLimitPerDay: Int
    /// The partner's icon, if it starts with one.
    public var icon: PartnerIconChange?
    /// The partner's webhook, if it starts with one.
    public var webhook: PartnerWebhook?
    public var sound: NotificationSound
    public var allowTimeSensitive: Bool

    public init(miniAppID: String, displayName: String, tenantID: String, rateLimitPerMinute: Int,
                rateLimitPerDay: Int, icon: PartnerIconChange? = nil, webhook: PartnerWebhook? = nil,
                sound: NotificationSound = .systemDefault, allowTimeSensitive: Bool = false) {
        self.miniAppID = miniAppID
        self.displayName = displayName
        self.tenantID = tenantID
        self.rateLimitPerMinute = rateLimitPerMinute
        self.rateLimitPerDay = rateLimitPerDay
        self.icon = icon
        self.webhook = webhook
        self.sound = sound
        self.allowTimeSensitive = allowTimeSensitive
    }
}

/// Where a partner's delivery webhooks go and the secret that signs them.
public struct PartnerWebhook: Sendable, Equatable {
    public var url: String
    public var secret: String
    public init(url: String, secret: String) {
        self.url = url
        self.secret = secret
    }
}

/// What an admin change does to a partner's webhook.
public enum PartnerWebhookChange: Sendable, Equatable {
    /// A URL; `secret` replaces the stored one when given (a new URL gets a new secret).
    case set(url: String, secret: String?)
    /// No webhook any more (pending events of it are not sent).
    case remove

    /// The change a requested `webhookUrl` (nil: remove) makes to `existing`, and the secret to show the admin
    /// once: every new URL gets a new secret from `newSecret`, at once and without overlap (a new endpoint has no
    /// use for the old secret, and whoever ran the old endpoint should not be able to sign for the new one); the
    /// same URL again keeps the stored one. The admin API and `heraldctl partners update` both decide here.
    public static func requested(_ url: String?, for existing: PartnerRecord, newSecret: () throws -> String) rethrows
        -> (change: PartnerWebhookChange, shownSecret: String?)
    {
        guard let url else { return (.remove, nil) }
        let secret = existing.webhookURL == url ? nil : try newSecret()
        return (.set(url: url, secret: secret), secret)
    }
}

public struct PartnerChanges: Sendable {
    public var displayName: String?
    public var rateLimitPerMinute: Int?
    public var rateLimitPerDay: Int?
    /// nil keeps the icon as it is.
    public var icon: PartnerIconChange?
    /// nil keeps the webhook as it is.
    public var webhook: PartnerWebhookChange?
    /// nil keeps the sound as it is; `.silent` removes it.
    public var sound: NotificationSound?
    /// nil keeps the permission as it is.
    public var allowTimeSensitive: Bool?
    public init(displayName: String? = nil, rateLimitPerMinute: Int? = nil, rateLimitPerDay: Int? = nil,
                icon: PartnerIconChange? = nil, webhook: PartnerWebhookChange? = nil, sound: NotificationSound? = nil,
                allowTimeSensitive: Bool? = nil) {
        self.displayName = displayName
        self.rateLimitPerMinute = rateLimitPerMinute
        self.rateLimitPerDay = rateLimitPerDay
        self.icon = icon
        self.webhook = webhook
        self.sound = sound
        self.allowTimeSensitive = allowTimeSensitive
    }
}

/// Queries on `partners`. Every change is audited (sql/047_admin_audit.sql) as made by `actor`; without one,
/// as `database`.
public struct PartnerStore: Sendable {
    public let pool: PostgresPool
    public private(set) var actor: AdminActor?
    public init(pool: PostgresPool) { self.pool = pool }

    /// The same store, its changes audited as made by `actor`.
    public func acting(as actor: AdminActor) -> PartnerStore {
        var store = self
        store.actor = actor
        return store
    }

    /// A change in its own transaction, named for the audit trail.
    private func change<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try pool.withTransaction { connection in
            try actor?.apply(on: connection)
            return try body(connection)
        }
    }

    static let columns = """
        id, mini_app_id, display_name, tenant_id, rate_limit_per_minute, rate_limit_per_day, icon_url, \
        created_at, revoked_at, icon_updated_at, webhook_url, sound, allow_time_sensitive, \
        CASE WHEN previous_key_expires_at > now() AND revoked_at IS NULL THEN previous_key_expires_at END \
            AS previous_key_expires_at, \
        suspended_at, \
        CASE WHEN previous_webhook_secret_expires_at > now() AND revoked_at IS NULL \
             THEN previous_webhook_secret_expires_at END AS previous_webhook_secret_expires_at
        """

    /// Inserts a partner whose key hashes to `keyHash`. Throws 409 `mini_app_taken` when an active
    /// partner already has the mini-app.
    public func create(_ partner: NewPartner, keyHash: String) throws -> PartnerRecord {
        do {
            return try change { connection in
                try connection.query("INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING", [partner.tenantID])
                let id = UUID()
                let icon = partner.icon.map(Self.iconColumns)
                let row = try connection.query("""
                    INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                          rate_limit_per_day, icon_url, icon_updated_at, webhook_url, webhook_secret,
                                          sound, allow_time_sensitive)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $9 THEN now() END, $10, $11, $12, $13)
                    RETURNING \(Self.columns)
                    """,
                    [id, partner.miniAppID, partner.displayName, partner.tenantID, keyHash,
                     partner.rateLimitPerMinute, partner.rateLimitPerDay, icon?.url ?? nil, icon?.stored ?? false,
                     partner.webhook?.url, partner.webhook?.secret, partner.sound.name,
                     partner.allowTimeSensitive]).first!
                if let change = partner.icon { try PartnerIconStore.apply(change, partnerID: id, on: connection) }
                return try Self.record(row)
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw HeraldError(status: 409, code: "mini_app_taken",
                              message: "An active partner already exists for this miniAppId.", field: "miniAppId")
        }
    }

    public func list() throws -> [PartnerRecord] {
        try pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM partners ORDER BY created_at, id").rows.map(Self.record)
        }
    }

    public func find(id: UUID) throws -> PartnerRecord? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM partners WHERE id = $1", [id]).first.map(Self.record)
        }
    }

    /// The active partner owning a key, for authentication: its current key, or the key before the last rotation
    /// until that one's overlap ends (`previous` true).
    public func findActive(keyHash: String) throws -> (record: PartnerRecord, previous: Bool)? {
        try pool.withConnection { connection in
            try connection.query(Self.findActiveSQL, [keyHash]).first.map { (try Self.record($0), try $0.bool("previous")) }
        }
    }

    /// Two unique-index lookups (`PartnerQueryPlanTests`): a query ORing the two columns would need a bitmap of both.
    public static let findActiveSQL = """
        SELECT \(columns), false AS previous FROM partners WHERE key_hash = $1 AND revoked_at IS NULL
        UNION ALL
        SELECT \(columns), true FROM partners
         WHERE previous_key_hash = $1 AND previous_key_expires_at > now() AND revoked_at IS NULL
        LIMIT 1
        """

    /// Applies the changes given; nil when no such partner.
    /// The partner row and its icon change together, in one transaction.
    public func update(id: UUID, _ changes: PartnerChanges) throws -> PartnerRecord? {
        try change { connection in
            let icon = changes.icon.map(Self.iconColumns)
            guard let row = try connection.query("""
                UPDATE partners SET
                    display_name = coalesce($2, display_name),
                    rate_limit_per_minute = coalesce($3, rate_limit_per_minute),
                    rate_limit_per_day = coalesce($4, rate_limit_per_day),
                    icon_url = CASE WHEN $5 THEN $6 ELSE icon_url END,
                    icon_updated_at = CASE WHEN $5 THEN CASE WHEN $7 THEN now() END ELSE icon_updated_at END,
                    webhook_url = CASE WHEN $8 THEN $9 ELSE webhook_url END,
                    webhook_secret = CASE WHEN $8 AND $9::text IS NULL THEN NULL ELSE coalesce($10, webhook_secret) END,
                    previous_webhook_secret = CASE WHEN $14 THEN NULL ELSE previous_webhook_secret END,
                    previous_webhook_secret_expires_at = CASE WHEN $14 THEN NULL
                                                              ELSE previous_webhook_secret_expires_at END,
                    sound = CASE WHEN $11 THEN $12 ELSE sound END,
                    allow_time_sensitive = coalesce($13, allow_time_sensitive),
                    updated_at = now()
                WHERE id = $1
                RETURNING \(Self.columns)
                """,
                [id, changes.displayName, changes.rateLimitPerMinute, changes.rateLimitPerDay, icon != nil,
                 icon?.url ?? nil, icon?.stored ?? false, changes.webhook != nil, Self.webhookURL(changes.webhook),
                 Self.webhookSecret(changes.webhook), changes.sound != nil, changes.sound?.name,
                 changes.allowTimeSensitive, Self.endsPreviousWebhookSecret(changes.webhook)]
            ).first else { return nil }
            if let change = changes.icon { try PartnerIconStore.apply(change, partnerID: id, on: connection) }
            return try Self.record(row)
        }
    }

    private static func webhookURL(_ change: PartnerWebhookChange?) -> String? {
        if case .set(let url, _) = change { return url }
        return nil
    }

    private static func webhookSecret(_ change: PartnerWebhookChange?) -> String? {
        if case .set(_, let secret) = change { return secret }
        return nil
    }

    /// A new secret (a new URL) or no webhook ends the overlap of the last rotation at once: the old secret was for
    /// the old endpoint.
    private static func endsPreviousWebhookSecret(_ change: PartnerWebhookChange?) -> Bool {
        switch change {
        case .set(_, let secret): secret != nil
        case .remove: true
        case nil: false
        }
    }

    /// Replaces the webhook secret of an active partner that has a webhook; nil when there is none such. With
    /// `previousSecretValidSeconds` > 0 the replaced secret signs events too for that long (a secret from an earlier
    /// rotation does not: one previous secret at most); with 0 it stops at once.
    public func rotateWebhookSecret(id: UUID, secret: String, previousSecretValidSeconds: Int = 0) throws
        -> PartnerRecord? {
        try change { connection in
            try connection.query("""
                UPDATE partners SET
                    previous_webhook_secret = CASE WHEN $3::integer > 0 THEN webhook_secret END,
                    previous_webhook_secret_expires_at = CASE WHEN $3::integer > 0
                                                              THEN now() + make_interval(secs => $3::integer) END,
                    webhook_secret = $2, updated_at = now()
                WHERE id = $1 AND revoked_at IS NULL AND webhook_url IS NOT NULL
                RETURNING \(Self.columns)
                """, [id, secret, previousSecretValidSeconds]).first.map(Self.record)
        }
    }

    /// Ends the previous webhook secret's overlap at once: events are signed with the current secret only. Nil when
    /// no such active partner.
    public func endPreviousWebhookSecret(id: UUID) throws -> PartnerRecord? {
        try change { connection in
            try connection.query("""
                UPDATE partners SET previous_webhook_secret = NULL, previous_webhook_secret_expires_at = NULL,
                                    updated_at = now()
                 WHERE id = $1 AND revoked_at IS NULL
                RETURNING \(Self.columns)
                """, [id]).first.map(Self.record)
        }
    }

    /// The partner row's side of an icon change: its source URL and whether images are stored.
    private static func iconColumns(_ change: PartnerIconChange) -> (url: String?, stored: Bool) {
        switch change {
        case .replace(let images, let sourceURL): (sourceURL, !images.isEmpty)
        case .remove: (nil, false)
        }
    }

    /// Replaces the key of an active partner; nil when no such active partner. With `previousKeyValidSeconds` > 0
    /// the replaced key is still accepted that long (a key from an earlier rotation is not: one previous key at
    /// most); with 0 it is refused at once.
    public func rotateKey(id: UUID, keyHash: String, previousKeyValidSeconds: Int = 0) throws -> PartnerRecord? {
        try change { connection in
            try connection.query("""
                UPDATE partners SET
                    previous_key_hash = CASE WHEN $3::integer > 0 THEN key_hash END,
                    previous_key_expires_at = CASE WHEN $3::integer > 0
                                                   THEN now() + make_interval(secs => $3::integer) END,
                    key_hash = $2, updated_at = now()
                WHERE id = $1 AND revoked_at IS NULL
                RETURNING \(Self.columns)
                """, [id, keyHash, previousKeyValidSeconds]).first.map(Self.record)
        }
    }

    /// Ends the previous key's overlap at once; nil when no such active partner.
    public func endPreviousKey(id: UUID) throws -> PartnerRecord? {
        try change { connection in
            try connection.query("""
                UPDATE partners SET previous_key_hash = NULL, previous_key_expires_at = NULL, updated_at = now()
                 WHERE id = $1 AND revoked_at IS NULL
                RETURNING \(Self.columns)
                """, [id]).first.map(Self.record)
        }
    }

    /// Soft-revokes, and in the same transaction stops everything of the partner not yet sent
    /// (functions/partner_revoke.sql): its queued, scheduled and retrying deliveries are cancelled by the next claim,
    /// its reminders cancelled, its broadcast channels closed, and its active activities ended at once on every
    /// device with the ends `RevocationEnds` renders, dismissed at `now` and signed by `signer`, which is asked
    /// for only when the partner has an active activity to end. Revoking twice keeps the first time and finds
    /// nothing more to stop. Nil when no such partner.
    public func revoke(id: UUID, now: Date = Date(), signer: () throws -> any PayloadSigner) throws -> PartnerRecord? {
        try change { connection in
            guard let row = try connection.query("""
                UPDATE partners SET revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE id = $1
                RETURNING \(Self.columns)
                """, [id]).first else { return nil }
            let record = try Self.record(row)
            let active = try connection.query(Self.revokeSQL, [id]).rows.map { row in
                (activity: StoredLiveActivity(
                    id: try row.uuid("id"), template: try row.string("template"),
                    attributesJSON: try row.string("attributes"), stateJSON: try row.string("state"),
                    lastTimestamp: try row.int("last_timestamp"), createdAt: try row.date("created_at"),
                    expiresAt: try row.date("expires_at")),
                 followsChannel: try row.bool("follows_channel"))
            }
            let ends = try RevocationEnds(active, miniAppID: record.miniAppID, displayName: record.displayName,
                                          now: now, signer: signer)
            if !ends.isEmpty {
                try connection.query(Self.endActivitiesSQL, [id, ends.ids, ends.apns, ends.fcm, ends.timestamps])
            }
            return record
        }
    }

    /// $1 partner. Its active activities, as `revoke` ends them.
    public static let revokeSQL = "SELECT * FROM herald_partner_revoke($1)"
    /// $1 partner, $2 activities, $3/$4 their ends' APNs and FCM payloads, $5 the ends' timestamps.
    public static let endActivitiesSQL = """
        SELECT herald_partner_end_activities($1, $2::uuid[], $3::text[], $4::text[], $5::bigint[])
        """

    /// Suspends an active partner (its key is refused with 403 `partner_suspended` within the key cache's seconds, and
    /// no worker claims its rows: they stay queued, attempts unspent), or resumes it (`suspended` false): its rows
    /// are claimed again, those past their TTL as expired. Suspending twice keeps the first time. Nil when no such
    /// active partner.
    public func setSuspended(id: UUID, _ suspended: Bool) throws -> PartnerRecord? {
        try change { connection in
            let record = try connection.query("""
                UPDATE partners SET suspended_at = CASE WHEN $2 THEN coalesce(suspended_at, now()) END,
                                    updated_at = now()
                 WHERE id = $1 AND revoked_at IS NULL
                RETURNING \(Self.columns)
                """, [id, suspended]).first.map(Self.record)
            // Workers waiting on the queue take the resumed rows now rather than at their next poll.
            if record != nil, !suspended { try DeliveryStore.notifyDue(on: connection) }
            return record
        }
    }

    static func record(_ row: PostgresRow) throws -> PartnerRecord {
        PartnerRecord(
            id: try row.uuid("id"), miniAppID: try row.string("mini_app_id"),
            displayName: try row.string("display_name"), tenantID: try row.string("tenant_id"),
            rateLimitPerMinute: try row.int("rate_limit_per_minute"), rateLimitPerDay: try row.int("rate_limit_per_day"),
            iconURL: try row.optionalString("icon_url"), iconUpdatedAt: try row.optionalDate("icon_updated_at"),
            webhookURL: try row.optionalString("webhook_url"), createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at"), sound: NotificationSound(name: try row.optionalString("sound")),
            allowTimeSensitive: try row.bool("allow_time_sensitive"),
            previousKeyExpiresAt: try row.optionalDate("previous_key_expires_at"),
            suspendedAt: try row.optionalDate("suspended_at"),
            previousWebhookSecretExpiresAt: try row.optionalDate("previous_webhook_secret_expires_at"))
    }
}
