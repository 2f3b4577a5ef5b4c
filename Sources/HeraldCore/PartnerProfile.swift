import Foundation

/// A mini-app partner as the intake needs it on every request.
public struct PartnerProfile: Sendable, Equatable {
    public let id: UUID
    public let miniAppID: String
    public let displayName: String
    public let tenantID: String
    /// Where the intake serves the partner's icon at the payload size (`PartnerIcon.path`); nil when
    /// none is stored.
    public let iconPath: String?
    public let rateLimitPerMinute: Int
    public let rateLimitPerDay: Int
    /// `aps.sound` of the partner's pushes.
    public let sound: NotificationSound
    /// Whether the partner may send `interruptionLevel: time-sensitive`.
    public let allowTimeSensitive: Bool

    public init(
        id: UUID, miniAppID: String, displayName: String, tenantID: String, iconPath: String?,
        rateLimitPerMinute: Int, rateLimitPerDay: Int, sound: NotificationSound = .systemDefault,
        allowTimeSensitive: Bool = false
    ) {
        self.id = id
        self.miniAppID = miniAppID
        self.displayName = displayName
        self.tenantID = tenantID
        self.iconPath = iconPath
        self.rateLimitPerMinute = rateLimitPerMinute
        self.rateLimitPerDay = rateLimitPerDay
        self.sound = sound
        self.allowTimeSensitive = allowTimeSensitive
    }
}
