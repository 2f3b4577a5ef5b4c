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
            try connection.row(Queries.PartnerIcons.Find(miniAppID: miniAppID, size: size)).map {
                PartnerIconImage(size: size, png: $0.png, sha256: $0.sha256)
            }
        }
    }

    /// Applies `change` to the partner's stored images, in the caller's transaction (the partner row's
    /// `icon_url` and `icon_updated_at` are the caller's statement).
    static func apply(_ change: PartnerIconChange, partnerID: UUID, on connection: PostgresConnection) throws {
        try connection.run(Queries.PartnerIcons.DeleteAll(partnerID: partnerID))
        guard case .replace(let images, _) = change, !images.isEmpty else { return }
        try connection.run(Insert(partnerID: partnerID, images: images))
    }
}

extension PartnerIconStore {
    /// An icon as `find` (Queries/partner_icons.sql) returns it.
    struct StoredIcon: QueryRow, Decodable {
        let png: [UInt8]
        let sha256: String
    }

    struct Insert: NamedQuery {
        static let sql = Queries.PartnerIcons.insert
        let partnerID: UUID
        let images: [PartnerIconImage]
        var bindings: [(any PostgresEncodable)?] {
            [partnerID, images.map(\.size), images.map { PostgresBytea($0.png) }, images.map(\.sha256)]
        }
    }
}
