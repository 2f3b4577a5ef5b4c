import Foundation

extension PartnerRecord {
    /// The partner as the admin API and `heraldctl --json` show it; `apiKey` only right after it
    /// was created or rotated, `webhookSecret` only right after it was made or rotated.
    public func json(apiKey: String? = nil, webhookSecret: String? = nil) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(id.uuidString.lowercased())), ("miniAppId", .string(miniAppID)),
            ("displayName", .string(displayName)), ("tenantId", .string(tenantID)),
            ("rateLimitPerMinute", .number(Double(rateLimitPerMinute))),
            ("rateLimitPerDay", .number(Double(rateLimitPerDay))),
            ("iconUrl", iconURL.map { .string($0) } ?? .null),
            (
                "icon",
                iconUpdatedAt.map { updated in
                    .object([
                        ("path", .string(PartnerIcon.path(miniAppID: miniAppID, size: PartnerIcon.payloadSize))),
                        ("sizes", .array(PartnerIcon.sizes.map { .number(Double($0)) })),
                        ("updatedAt", .string(ISO8601.format(updated))),
                    ])
                } ?? .null
            ),
            ("webhookUrl", webhookURL.map { .string($0) } ?? .null),
            ("sound", sound.name.map { .string($0) } ?? .null),
            ("allowTimeSensitive", .bool(allowTimeSensitive)),
            ("createdAt", .string(ISO8601.format(createdAt))),
            ("revokedAt", revokedAt.map { .string(ISO8601.format($0)) } ?? .null),
            ("suspendedAt", suspendedAt.map { .string(ISO8601.format($0)) } ?? .null),
            ("previousKeyExpiresAt", previousKeyExpiresAt.map { .string(ISO8601.format($0)) } ?? .null),
            (
                "previousWebhookSecretExpiresAt",
                previousWebhookSecretExpiresAt.map { .string(ISO8601.format($0)) } ?? .null
            ),
        ]
        if let apiKey { members.append(("apiKey", .string(apiKey))) }
        if let webhookSecret { members.append(("webhookSecret", .string(webhookSecret))) }
        return .object(members)
    }
}
