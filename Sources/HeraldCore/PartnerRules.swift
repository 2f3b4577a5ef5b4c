import Foundation

/// Rules for the partner fields an admin sets.
public enum PartnerRules {
    public static let rateLimitPerMinuteRange = 1...1_000_000
    public static let rateLimitPerDayRange = 1...100_000_000

    /// 1-64 characters, no control characters, no brackets (the `[name]` prefix must not be
    /// forgeable) and no surrounding spaces.
    public static func displayName(_ text: String) throws(HeraldError) -> String {
        guard (1...64).contains(text.count),
              !TextRules.containsForbidden(text), !text.contains("["), !text.contains("]"),
              text.trimmingCharacters(in: .whitespaces) == text
        else {
            throw .invalidField(
                "displayName",
                "displayName must be 1-64 characters without brackets, control characters or surrounding spaces.")
        }
        return text
    }

    /// The host's PNG of the icon: an https URL of at most 2,048 bytes.
    public static func iconURL(_ text: String) throws(HeraldError) -> String {
        guard text.hasPrefix("https://"), text.utf8.count <= 2048, let url = URL(string: text), url.host != nil,
              !TextRules.containsForbiddenOrWhitespace(text)
        else { throw .invalidField("iconUrl", "iconUrl must be an https URL of at most 2048 bytes.") }
        return text
    }

    public static func miniAppID(_ text: String) throws(HeraldError) -> String {
        guard Identifiers.isValidMiniAppID(text) else {
            throw .invalidField("miniAppId", "miniAppId must be 1-128 of letters, digits, '.', '_' and '-'.")
        }
        return text
    }

    public static func tenantID(_ text: String) throws(HeraldError) -> String {
        guard Identifiers.isValidExternalID(text) else {
            throw .invalidField("tenantId", "tenantId must be 1-128 of letters, digits, '.', '_', ':' and '-'.")
        }
        return text
    }
}
