import Foundation
import HeraldCore
import Postgres

/// One stored media file: re-encoded bytes with no metadata, their type and SHA-256 (hex), which is their ETag.
public struct StoredMediaFile: Sendable, Equatable {
    public let contentType: String
    public let bytes: [UInt8]
    public let sha256: String
    /// When it stops being served.
    public let expiresAt: Date
}

/// Queries on `media` (sql/060_media.sql): a partner's uploads, served to phones and named by pushes.
public struct MediaStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// A new media file of `partnerID`, live for `lifetimeSeconds`; its expiry, or nil when the partner already
    /// holds `maxLive` live ones.
    public func insert(
        id: UUID, partnerID: UUID, contentType: String, bytes: [UInt8], sha256: String, lifetimeSeconds: Int,
        maxLive: Int
    ) throws -> Date? {
        try pool.withConnection { connection in
            try connection.row(
                Insert(
                    id: id, partnerID: partnerID, contentType: contentType, bytes: bytes, sha256: sha256,
                    lifetimeSeconds: lifetimeSeconds, maxLive: maxLive)
            )?.expiresAt
        }
    }

    /// The live media `id`, whoever owns it; nil once it has expired or its partner is revoked.
    public func find(id: UUID) throws -> StoredMediaFile? {
        try pool.withConnection { connection in
            try connection.row(Queries.Media.Find(id: id)).map {
                StoredMediaFile(
                    contentType: $0.contentType, bytes: $0.bytes, sha256: $0.sha256, expiresAt: $0.expiresAt)
            }
        }
    }

    /// The content type of `partnerID`'s live media `id`, kept at least until `until` (a push's expiry); nil for an
    /// unknown, expired or another partner's id.
    public func attach(id: UUID, partnerID: UUID, until: Date) throws -> String? {
        try pool.withConnection { connection in
            try connection.row(Queries.Media.Attach(id: id, partnerID: partnerID, until: until))?.contentType
        }
    }
}

extension MediaStore {
    /// A media file as `find` (Queries/media.sql) returns it.
    struct StoredMedia: QueryRow, Decodable {
        let contentType: String
        let bytes: [UInt8]
        let sha256: String
        let expiresAt: Date
    }

    /// What `attach` returns.
    struct AttachedMedia: QueryRow, Decodable {
        let contentType: String
    }

    /// What `insert` returns.
    struct InsertedMedia: QueryRow, Decodable {
        let expiresAt: Date
    }

    /// Written by hand: a bytea parameter has no generated form.
    struct Insert: NamedQuery {
        typealias Row = InsertedMedia
        static let sql = Queries.Media.insert
        let id: UUID
        let partnerID: UUID
        let contentType: String
        let bytes: [UInt8]
        let sha256: String
        let lifetimeSeconds: Int
        let maxLive: Int
        var bindings: [(any PostgresEncodable)?] {
            [id, partnerID, contentType, PostgresBytea(bytes), sha256, lifetimeSeconds, maxLive]
        }
    }
}
