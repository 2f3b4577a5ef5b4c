import Foundation

/// A mini-app partner as the intake needs it on every request.
public struct PartnerProfile: Sendable, Equatable {
    public let id: UUID
    public let miniAppID: String
    public let displayName: String
    public let tenantID: String
    public let iconURL: String?
    public let rateLimitPerMinute: Int
    public let rateLimitPerDay: Int

    public init(id: UUID, miniAppID: String, displayName: String, tenantID: String, iconURL: String?,
                rateLimitPerMinute: Int, rateLimitPerDay: Int) {
        self.id = id
        self.miniAppID = miniAppID
        self.displayName = displayName
        self.tenantID = tenantID
        self.iconURL = iconURL
        self.rateLimitPerMinute = rateLimitPerMinute
        self.rateLimitPerDay = rateLimitPerDay
    }
}
