import Foundation
import HeraldCore
import Postgres

/// One stored size of a partner's icon: a square PNG and its SHA-256 (hex), which is its ETag.
public struct PartnerIconImage: Sendable, Equatable {
    public let size: Int
    public let png: [UInt8]
    public let sha256: String
    public init(size: Int, png: [UInt8], sha256: String) {
        self.size = size
        self.png = png
        self.sha256 = sha256
    }
}

/// What an admin change does to a partner's icon.
public enum PartnerIconChange: Sendable {
    /// New images; `sourceURL` is the https URL they were fetched from (nil for an upload).
    case replace([PartnerIconImage], sourceURL: String?)
    /// No icon any more: payloads carry no imageUrl.
    case remove
}

/// Queries on `partner_icons` (sql/019_partner_icons.sql).
public struct PartnerIconStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The active partner's icon of `miniAppID` at `size`, with its hash; nil when there is none.
    /// Probes partners_active_mini_app, then partner_icons' key (QueryPlanTests).
    public func find(miniAppID: String, size: Int) throws -> PartnerIconImage? {
        try pool.withConnection { connection in
            try connection.query(Self.findQuery, [miniAppID, size]).first.map { row in
                PartnerIconImage(size: size, png: try row.bytea(0), sha256: try row.string(1))
            }
        }
    }

    public static let findQuery = """
        SELECT i.png, i.sha256
          FROM partners p
          JOIN partner_icons i ON i.partner_id = p.id AND i.size = $2
         WHERE p.mini_app_id = $1 AND p.revoked_at IS NULL
        """

    /// Applies `change` to the partner's stored images, in the caller's transaction (the partner row's
    /// `icon_url` and `icon_updated_at` are the caller's statement).
    static func apply(_ change: PartnerIconChange, partnerID: UUID, on connection: PostgresConnection) throws {
        try connection.query("DELETE FROM partner_icons WHERE partner_id = $1", [partnerID])
        guard case .replace(let images, _) = change, !images.isEmpty else { return }
        try connection.query("""
            INSERT INTO partner_icons (partner_id, size, png, sha256)
            SELECT $1, s.size, s.png, s.sha256
              FROM unnest($2::integer[], $3::bytea[], $4::text[]) AS s (size, png, sha256)
            """,
            [partnerID, images.map(\.size), images.map { PostgresBytea($0.png) }, images.map(\.sha256)])
    }
}
