import Foundation
import HeraldCore

/// The settings every writer of push deliveries shares: the intake and `heraldctl backfill sends`
/// render and sign payloads the same way, so they read the same variables through this one
/// reader (names, defaults and ranges from `Settings`; the rules' defaults are `PushRules`' property values).
public struct PushSettings: Sendable {
    /// `HERALD_SIGNING_KEYS`: kid -> key.
    public var signingKeys: [String: [UInt8]]
    /// `HERALD_SIGNING_KEY_ID`, or the only key.
    public var signingKeyID: String
    /// `HERALD_DEEPLINK_SCHEME`, `HERALD_MAX_RECIPIENTS`, `HERALD_DEFAULT_TTL_SECONDS`, `HERALD_PUBLIC_URL`,
    /// `HERALD_NOTIFICATION_CATEGORIES`.
    public var rules: PushRules

    /// The active signing key.
    public var activeKey: [UInt8] { signingKeys[signingKeyID]! }

    /// Reads and validates the variables; throws naming the first one that is wrong.
    public static func read(_ reader: EnvironmentReader) throws(ConfigurationError) -> PushSettings {
        let keys = try SigningKeys.parse(try reader.required(Settings.signingKeys), variable: Settings.signingKeys.name)
        let activeKey: String
        if let named = reader.optional(Settings.signingKeyID) {
            guard keys[named] != nil else {
                throw ConfigurationError(
                    variable: Settings.signingKeyID.name,
                    problem: "names no key of \(Settings.signingKeys.name)")
            }
            activeKey = named
        } else if keys.count == 1 {
            activeKey = keys.keys.first!
        } else {
            throw ConfigurationError(
                variable: Settings.signingKeyID.name,
                problem: "required when several keys are configured")
        }
        return PushSettings(signingKeys: keys, signingKeyID: activeKey, rules: try rules(reader))
    }

    /// The push rules alone (`heraldctl replay` needs the default TTL, not the signing keys).
    public static func rules(_ reader: EnvironmentReader) throws(ConfigurationError) -> PushRules {
        var rules = PushRules()
        rules.deepLinkScheme =
            try reader.parsed(Settings.deepLinkScheme, problem: "must be a URL scheme like basedapp") { scheme in
                scheme.range(of: "^[a-z][a-z0-9+.-]{0,31}$", options: .regularExpression) != nil ? scheme : nil
            } ?? rules.deepLinkScheme
        rules.maxRecipients = try reader.integer(Settings.maxRecipients)
        rules.defaultTTLSeconds = try reader.integer(Settings.defaultTTLSeconds)
        rules.publicURL =
            try reader.parsed(
                Settings.publicURL, problem: "must be an absolute http(s) URL without query or fragment",
                PartnerIcon.publicBaseURL) ?? rules.publicURL
        if let text = reader.optional(Settings.notificationCategories) {
            do {
                rules.notificationCategories = try NotificationCategories(parsing: text)
            } catch {
                throw ConfigurationError(variable: Settings.notificationCategories.name, problem: error.description)
            }
        }
        return rules
    }
}

/// `HERALD_SIGNING_KEYS`: `kid:base64key,kid:base64key`, each key at least 32 bytes.
public enum SigningKeys {
    public static func parse(_ text: String, variable: String) throws(ConfigurationError) -> [String: [UInt8]] {
        var keys: [String: [UInt8]] = [:]
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 32,
                let key = Data(base64Encoded: String(parts[1]))
            else {
                throw ConfigurationError(variable: variable, problem: "each entry must be kid:base64key")
            }
            guard key.count >= 32 else {
                throw ConfigurationError(variable: variable, problem: "key \(parts[0]) is shorter than 32 bytes")
            }
            keys[String(parts[0])] = [UInt8](key)
        }
        guard !keys.isEmpty else { throw ConfigurationError(variable: variable, problem: "no keys") }
        return keys
    }
}
