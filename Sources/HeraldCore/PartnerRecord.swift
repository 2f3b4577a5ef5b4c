import Foundation

/// A partner as stored (Store's `PartnerStore` reads it) and as the admin API and heraldctl show it
/// (`json`): never the key or its hash, nor the webhook secret.
public struct PartnerRecord: Sendable, Equatable, Decodable {
    public let id: UUID
    public let miniAppID: String
    public let displayName: String
    public let tenantID: String
    public let rateLimitPerMinute: Int
    public let rateLimitPerDay: Int
    /// The https URL the stored icon was fetched from (nil for an upload, or no icon).
    public let iconURL: String?
    /// When the stored icon was last set; nil when the partner has none.
    public let iconUpdatedAt: Date?
    /// Where delivery webhooks go; its secret is never part of the record.
    public let webhookURL: String?
    public let createdAt: Date
    public let revokedAt: Date?
    /// `aps.sound` of the partner's pushes.
    public let sound: NotificationSound
    /// Whether its pushes may ask for `interruptionLevel: time-sensitive`.
    public let allowTimeSensitive: Bool
    /// Until when the key before the last rotation is still accepted; nil when it is not.
    public let previousKeyExpiresAt: Date?
    /// Since when the partner is suspended (its key refused with 403, nothing of it sent); nil when it is not.
    public let suspendedAt: Date?
    /// Until when the webhook secret before the last rotation still signs events too; nil when it does not.
    public let previousWebhookSecretExpiresAt: Date?

    public var profile: PartnerProfile {
        PartnerProfile(
            id: id, miniAppID: miniAppID, displayName: displayName, tenantID: tenantID,
            iconPath: iconUpdatedAt.map { _ in
                PartnerIcon.path(miniAppID: miniAppID, size: PartnerIcon.payloadSize)
            },
            rateLimitPerMinute: rateLimitPerMinute, rateLimitPerDay: rateLimitPerDay, sound: sound,
            allowTimeSensitive: allowTimeSensitive)
    }
}
