import Foundation
import HeraldCore
import Postgres

/// A partner row as the admin API shows it (never the key or its hash).
public struct PartnerRecord: Sendable, Equatable {
    public let id: UUID
    public let miniAppID: String
    public let displayName: String
    public let tenantID: String
    public let rateLimitPerMinute: Int
    public let rateLimitPerDay: Int
    public let iconURL: String?
    public let createdAt: Date
    public let revokedAt: Date?

    public var profile: PartnerProfile {
        PartnerProfile(id: id, miniAppID: miniAppID, displayName: displayName, tenantID: tenantID, iconURL: iconURL,
                       rateLimitPerMinute: rateLimitPerMinute, rateLimitPerDay: rateLimitPerDay)
    }
}

public struct NewPartner: Sendable {
    public var miniAppID: String
    public var displayName: String
    public var tenantID: String
    public var rateLimitPerMinute: Int
    public var rateLimitPerDay: Int
    public var iconURL: String?

    public init(miniAppID: String, displayName: String, tenantID: String, rateLimitPerMinute: Int,
                rateLimitPerDay: Int, iconURL: String?) {
        self.miniAppID = miniAppID
        self.displayName = displayName
        self.tenantID = tenantID
        self.rateLimitPerMinute = rateLimitPerMinute
        self.rateLimitPerDay = rateLimitPerDay
        self.iconURL = iconURL
    }
}

public struct PartnerChanges: Sendable {
    public var displayName: String?
    public var rateLimitPerMinute: Int?
    public var rateLimitPerDay: Int?
    public var iconURL: String??
    public init(displayName: String? = nil, rateLimitPerMinute: Int? = nil, rateLimitPerDay: Int? = nil,
                iconURL: String?? = nil) {
        self.displayName = displayName
        self.rateLimitPerMinute = rateLimitPerMinute
        self.rateLimitPerDay = rateLimitPerDay
        self.iconURL = iconURL
    }
}

/// Queries on `partners`.
public struct PartnerStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    static let columns = """
        id, mini_app_id, display_name, tenant_id, rate_limit_per_minute, rate_limit_per_day, icon_url, \
        created_at, revoked_at
        """

    /// Inserts a partner whose key hashes to `keyHash`. Throws 409 `mini_app_taken` when an active
    /// partner already has the mini-app.
    public func create(_ partner: NewPartner, keyHash: String) throws -> PartnerRecord {
        do {
            return try pool.withTransaction { connection in
                try connection.query("INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING", [partner.tenantID])
                let row = try connection.query("""
                    INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                          rate_limit_per_day, icon_url)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                    RETURNING \(Self.columns)
                    """,
                    [UUID(), partner.miniAppID, partner.displayName, partner.tenantID, keyHash,
                     partner.rateLimitPerMinute, partner.rateLimitPerDay, partner.iconURL]).first!
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

    /// The active partner owning a key, for authentication.
    public func findActive(keyHash: String) throws -> PartnerRecord? {
        try pool.withConnection { connection in
            try connection.query(
                "SELECT \(Self.columns) FROM partners WHERE key_hash = $1 AND revoked_at IS NULL", [keyHash]
            ).first.map(Self.record)
        }
    }

    /// Applies the changes given; nil when no such partner.
    public func update(id: UUID, _ changes: PartnerChanges) throws -> PartnerRecord? {
        try pool.withConnection { connection in
            let setIcon = changes.iconURL != nil
            return try connection.query("""
                UPDATE partners SET
                    display_name = coalesce($2, display_name),
                    rate_limit_per_minute = coalesce($3, rate_limit_per_minute),
                    rate_limit_per_day = coalesce($4, rate_limit_per_day),
                    icon_url = CASE WHEN $5 THEN $6 ELSE icon_url END,
                    updated_at = now()
                WHERE id = $1
                RETURNING \(Self.columns)
                """,
                [id, changes.displayName, changes.rateLimitPerMinute, changes.rateLimitPerDay, setIcon,
                 changes.iconURL ?? nil]
            ).first.map(Self.record)
        }
    }

    /// Replaces the key of an active partner; nil when no such active partner.
    public func rotateKey(id: UUID, keyHash: String) throws -> PartnerRecord? {
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE partners SET key_hash = $2, updated_at = now() WHERE id = $1 AND revoked_at IS NULL
                RETURNING \(Self.columns)
                """, [id, keyHash]).first.map(Self.record)
        }
    }

    /// Soft-revokes; revoking twice keeps the first time. Nil when no such partner.
    public func revoke(id: UUID) throws -> PartnerRecord? {
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE partners SET revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE id = $1
                RETURNING \(Self.columns)
                """, [id]).first.map(Self.record)
        }
    }

    static func record(_ row: PostgresRow) throws -> PartnerRecord {
        PartnerRecord(
            id: try row.uuid(0), miniAppID: try row.string(1), displayName: try row.string(2),
            tenantID: try row.string(3), rateLimitPerMinute: try row.int(4), rateLimitPerDay: try row.int(5),
            iconURL: row.optionalString(6), createdAt: try row.date(7), revokedAt: try row.optionalDate(8))
    }
}
