import Foundation

/// One row of the admin audit trail.
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

    public init(
        id: Int, at: Date, actor: String, actorDetail: String?, client: String?, action: String, partnerID: UUID?,
        miniAppID: String?, detail: JSONValue
    ) {
        self.id = id
        self.at = at
        self.actor = actor
        self.actorDetail = actorDetail
        self.client = client
        self.action = action
        self.partnerID = partnerID
        self.miniAppID = miniAppID
        self.detail = detail
    }

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
