import Foundation
import HeraldCore
import Postgres

/// Who makes an admin change, for the audit trail (sql/047_admin_audit.sql). Stores that change partners or console
/// sessions set it as transaction-local settings the audit triggers read; never a token or a key.
public struct AdminActor: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case adminToken = "admin_token"
        case adminTokenPrevious = "admin_token_previous"
        case console
        case heraldctl
    }

    public var kind: Kind
    /// The console session (the first 12 hex digits of its hash) or heraldctl's OS user.
    public var detail: String?
    /// The client's address as the intake resolved it (its peer, or X-Forwarded-For from a trusted proxy).
    public var client: String?

    public init(_ kind: Kind, detail: String? = nil, client: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.client = client
    }

    /// Names the actor for the rest of `connection`'s transaction.
    func apply(on connection: PostgresConnection) throws {
        try connection.run(
            Queries.AdminAudit.SetActor(kind: kind.rawValue, detail: detail ?? "", client: client ?? ""))
    }
}

/// The admin audit trail: what the triggers wrote, read newest first; and the rows of changes no trigger sees
/// (replays).
public struct AdminAuditStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// Records an action in its own transaction (a replay, which changes rows no audit trigger watches).
    public func record(
        _ action: String, partnerID: UUID? = nil, miniAppID: String? = nil, detail: JSONValue,
        by actor: AdminActor
    ) throws {
        try pool.withTransaction { connection in
            try actor.apply(on: connection)
            try connection.run(
                Queries.AdminAudit.Record(
                    action: action, partnerID: partnerID, miniAppID: miniAppID, detailJSON: JSONWriter.string(detail)))
        }
    }

    /// Entries newest first, older than `before` (an id) when given, of one partner when given; at most `limit`.
    public func list(partnerID: UUID?, before: Int?, limit: Int) throws -> [AdminAuditEntry] {
        try pool.withConnection { connection in
            if let partnerID {
                try connection.rows(Queries.AdminAudit.ListPartner(before: before, limit: limit, partnerID: partnerID))
            } else {
                try connection.rows(Queries.AdminAudit.List(before: before, limit: limit))
            }
        }.map { try $0.entry() }
    }
}

extension AdminAuditStore {
    /// An entry as `list` and `listPartner` (Queries/admin_audit.sql) return it: its detail as JSON text.
    struct Entry: QueryRow, Decodable {
        let id: Int
        let at: Date
        let actor: String
        let actorDetail: String?
        let client: String?
        let action: String
        let partnerID: UUID?
        let miniAppID: String?
        let detail: String

        func entry() throws -> AdminAuditEntry {
            AdminAuditEntry(
                id: id, at: at, actor: actor, actorDetail: actorDetail, client: client, action: action,
                partnerID: partnerID, miniAppID: miniAppID, detail: try JSONParser.parse(Array(detail.utf8)))
        }
    }
}
