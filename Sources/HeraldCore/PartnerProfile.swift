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
}
