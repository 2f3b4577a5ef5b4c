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

    public init(
        miniAppID: String, displayName: String, tenantID: String, rateLimitPerMinute: Int,
        rateLimitPerDay: Int, icon: PartnerIconChange? = nil, webhook: PartnerWebhook? = nil,
        sound: NotificationSound = .systemDefault, allowTimeSensitive: Bool = false
    ) {
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
    public init(
        displayName: String? = nil, rateLimitPerMinute: Int? = nil, rateLimitPerDay: Int? = nil,
        icon: PartnerIconChange? = nil, webhook: PartnerWebhookChange? = nil, sound: NotificationSound? = nil,
        allowTimeSensitive: Bool? = nil
    ) {
        self.displayName = displayName
        self.rateLimitPerMinute = rateLimitPerMinute
        self.rateLimitPerDay = rateLimitPerDay
        self.icon = icon
        self.webhook = webhook
        self.sound = sound
        self.allowTimeSensitive = allowTimeSensitive
    }
}

/// Queries on `partners`. Every change is audited (sql/functions/partners_audit.sql) as made by `actor`; without one,
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

    /// Inserts a partner whose key hashes to `keyHash`. Throws 409 `mini_app_taken` when an active
    /// partner already has the mini-app.
    public func create(_ partner: NewPartner, keyHash: String) throws -> PartnerRecord {
        do {
            return try change { connection in
                try connection.run(Queries.Partners.CreateTenant(tenantID: partner.tenantID))
                let id = UUID()
                let record = try connection.row(Create(id: id, partner: partner, keyHash: keyHash))!
                if let change = partner.icon { try PartnerIconStore.apply(change, partnerID: id, on: connection) }
                return record
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw HeraldError(
                status: 409, code: "mini_app_taken",
                message: "An active partner already exists for this miniAppId.", field: "miniAppId")
        }
    }

    public func list() throws -> [PartnerRecord] {
        try pool.withConnection { connection in
            try connection.rows(Queries.Partners.List())
        }
    }

    public func find(id: UUID) throws -> PartnerRecord? {
        try pool.withConnection { connection in
            try connection.row(Queries.Partners.Find(id: id))
        }
    }

    /// The active partner owning a key, for authentication: its current key, or the key before the last rotation
    /// until that one's overlap ends (`previous` true).
    public func findActive(keyHash: String) throws -> (record: PartnerRecord, previous: Bool)? {
        try pool.withConnection { connection in
            try connection.row(Queries.Partners.FindActive(keyHash: keyHash)).map { ($0.record, $0.previous) }
        }
    }

    /// Applies the changes given; nil when no such partner.
    /// The partner row and its icon change together, in one transaction.
    public func update(id: UUID, _ changes: PartnerChanges) throws -> PartnerRecord? {
        try change { connection in
            guard let record = try connection.row(Update(id: id, changes: changes)) else { return nil }
            if let change = changes.icon { try PartnerIconStore.apply(change, partnerID: id, on: connection) }
            return record
        }
    }

    /// Replaces the webhook secret of an active partner that has a webhook; nil when there is none such. With
    /// `previousSecretValidSeconds` > 0 the replaced secret signs events too for that long (a secret from an earlier
    /// rotation does not: one previous secret at most); with 0 it stops at once.
    public func rotateWebhookSecret(id: UUID, secret: String, previousSecretValidSeconds: Int = 0) throws
        -> PartnerRecord?
    {
        try change { connection in
            try connection.row(
                Queries.Partners.RotateWebhookSecret(
                    id: id, secret: secret, overlapSeconds: previousSecretValidSeconds))
        }
    }

    /// Ends the previous webhook secret's overlap at once: events are signed with the current secret only. Nil when
    /// no such active partner.
    public func endPreviousWebhookSecret(id: UUID) throws -> PartnerRecord? {
        try change { connection in
            try connection.row(Queries.Partners.EndPreviousWebhookSecret(id: id))
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
            try connection.row(
                Queries.Partners.RotateKey(id: id, keyHash: keyHash, overlapSeconds: previousKeyValidSeconds))
        }
    }

    /// Ends the previous key's overlap at once; nil when no such active partner.
    public func endPreviousKey(id: UUID) throws -> PartnerRecord? {
        try change { connection in
            try connection.row(Queries.Partners.EndPreviousKey(id: id))
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
            guard let record = try connection.row(Queries.Partners.MarkRevoked(id: id)) else { return nil }
            let active = try connection.rows(Queries.Partners.Revoke(partnerID: id))
                .map { ($0.activity, $0.followsChannel) }
            let ends = try RevocationEnds(
                active, miniAppID: record.miniAppID, displayName: record.displayName,
                now: now, signer: signer)
            if !ends.isEmpty {
                try connection.run(
                    Queries.Partners.EndActivities(
                        partnerID: id, activities: ends.ids, apns: ends.apns, fcm: ends.fcm, timestamps: ends.timestamps
                    ))
            }
            return record
        }
    }

    /// Suspends an active partner (its key is refused with 403 `partner_suspended` within the key cache's seconds, and
    /// no worker claims its rows: they stay queued, attempts unspent), or resumes it (`suspended` false): its rows
    /// are claimed again, those past their TTL as expired. Suspending twice keeps the first time. Nil when no such
    /// active partner.
    public func setSuspended(id: UUID, _ suspended: Bool) throws -> PartnerRecord? {
        try change { connection in
            let record = try connection.row(Queries.Partners.SetSuspended(id: id, suspended: suspended))
            // Workers waiting on the queue take the resumed rows now rather than at their next poll.
            if record != nil, !suspended { try DeliveryStore.notifyDue(on: connection) }
            return record
        }
    }
}

extension PartnerRecord: QueryRow {}

extension PartnerStore {

    struct Create: NamedQuery {
        typealias Row = PartnerRecord
        static let sql = Queries.Partners.create
        let id: UUID
        let partner: NewPartner
        let keyHash: String
        var bindings: [(any PostgresEncodable)?] {
            let icon = partner.icon.map(PartnerStore.iconColumns)
            return [
                id, partner.miniAppID, partner.displayName, partner.tenantID, keyHash,
                partner.rateLimitPerMinute, partner.rateLimitPerDay, icon?.url ?? nil, icon?.stored ?? false,
                partner.webhook?.url, partner.webhook?.secret, partner.sound.name, partner.allowTimeSensitive,
            ]
        }
    }

    /// The partner owning a key, and whether the key is its previous one (`findActive`, Queries/partners.sql).
    struct KeyMatch: QueryRow {
        let record: PartnerRecord
        let previous: Bool
        init(row: PostgresRow) throws {
            record = try PartnerRecord(row: row)
            previous = try row.bool("previous")
        }
    }

    struct Update: NamedQuery {
        typealias Row = PartnerRecord
        static let sql = Queries.Partners.update
        let id: UUID
        let changes: PartnerChanges
        var bindings: [(any PostgresEncodable)?] {
            let icon = changes.icon.map(PartnerStore.iconColumns)
            return [
                id, changes.displayName, changes.rateLimitPerMinute, changes.rateLimitPerDay, icon != nil,
                icon?.url ?? nil, icon?.stored ?? false, changes.webhook != nil,
                changes.webhook?.url, changes.webhook?.secret, changes.sound != nil, changes.sound?.name,
                changes.allowTimeSensitive, changes.webhook?.endsPreviousSecret ?? false,
            ]
        }
    }

    /// The revoked partner's active activities, as `revoke` ends them.
    struct RevokedActivity: QueryRow {
        let activity: StoredLiveActivity
        let followsChannel: Bool
        init(row: PostgresRow) throws {
            activity = try StoredLiveActivity(row: row)
            followsChannel = try row.bool("follows_channel")
        }
    }

}
