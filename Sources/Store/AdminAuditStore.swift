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
        try connection.query(Self.applySQL, [kind.rawValue, detail ?? "", client ?? ""])
    }

    static let applySQL = """
        SELECT set_config('herald.actor', $1, true), set_config('herald.actor_detail', $2, true),
               set_config('herald.client', $3, true)
        """
}

/// One row of the audit trail.
public struct AdminAuditEntry: Sendable, Equatable {
    public let id: Int
    public let at: Date
    public let actor: String
    public let actorDetail: String?
    public let client: String?
    public let action: String
    public let partnerID: UUID?
    public let miniAppID: String?
    public let detail: JSONValue

    /// As the admin API and `heraldctl audit --json` show it.
    public var json: JSONValue {
        .object([
            ("id", .number(Double(id))), ("at", .string(ISO8601.format(at))), ("actor", .string(actor)),
            ("actorDetail", actorDetail.map { .string($0) } ?? .null), ("client", client.map { .string($0) } ?? .null),
            ("action", .string(action)), ("partnerId", partnerID.map { .string($0.uuidString.lowercased()) } ?? .null),
            ("miniAppId", miniAppID.map { .string($0) } ?? .null), ("detail", detail),
        ])
    }
}

/// The admin audit trail: what the triggers wrote, read newest first; and the rows of changes no trigger sees
/// (replays).
public struct AdminAuditStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// Records an action in its own transaction (a replay, which changes rows no audit trigger watches).
    public func record(_ action: String, partnerID: UUID? = nil, miniAppID: String? = nil, detail: JSONValue,
                       by actor: AdminActor) throws {
        try pool.withTransaction { connection in
            try actor.apply(on: connection)
            try connection.query("SELECT herald_admin_audit($1, $2, $3, $4::jsonb)",
                                 [action, partnerID, miniAppID, JSONWriter.string(detail)])
        }
    }

    /// Entries newest first, older than `before` (an id) when given, of one partner when given; at most `limit`.
    public func list(partnerID: UUID?, before: Int?, limit: Int) throws -> [AdminAuditEntry] {
        try pool.withConnection { connection in
            try connection.query(partnerID == nil ? Self.listSQL : Self.listPartnerSQL,
                                 partnerID == nil ? [before, limit] : [before, limit, partnerID]).rows.map { row in
                AdminAuditEntry(
                    id: try row.int(0), at: try row.date(1), actor: try row.string(2),
                    actorDetail: row.optionalString(3), client: row.optionalString(4), action: try row.string(5),
                    partnerID: try row.optionalUUID(6),
                    miniAppID: row.optionalString(7), detail: try JSONParser.parse(Array(try row.string(8).utf8)))
            }
        }
    }

    static let columns = "id, at, actor, actor_detail, client, action, partner_id, mini_app_id, detail::text"

    /// $1 before (id, or NULL), $2 limit: newest first by the primary key.
    public static let listSQL = """
        SELECT \(columns) FROM admin_audit
         WHERE ($1::bigint IS NULL OR id < $1::bigint)
         ORDER BY id DESC LIMIT $2
        """

    /// $1 before, $2 limit, $3 partner: through admin_audit_partner.
    public static let listPartnerSQL = """
        SELECT \(columns) FROM admin_audit
         WHERE partner_id = $3 AND ($1::bigint IS NULL OR id < $1::bigint)
         ORDER BY partner_id, id DESC LIMIT $2
        """
}
