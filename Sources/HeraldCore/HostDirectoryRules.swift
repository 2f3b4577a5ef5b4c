import Foundation

/// A device as the host registers it, validated and with its tokens normalised.
public struct DeviceRegistration: Sendable, Equatable {
    public var platform: String
    public var environment: String
    public var bundleID: String?
    public var apnsToken: String?
    public var apnsPushToStartToken: String?
    /// ActivityKit gives a push-to-start token per `ActivityAttributes` type: the token of each template
    /// that has its own. A start uses its template's token, else `apnsPushToStartToken`.
    public var apnsPushToStartTokens: [LiveActivityTemplate: String] = [:]
    public var fcmToken: String?

    /// The templates with a push-to-start token of their own, in the templates' order.
    public var pushToStartTemplates: [LiveActivityTemplate] {
        LiveActivityTemplate.allCases.filter { apnsPushToStartTokens[$0] != nil }
    }
}

/// A user's directory entry as the host sets it: tenant and identifier sets, normalised
/// and de-duplicated.
public struct UserEntry: Sendable, Equatable {
    public var tenantID: String
    public var emails: [String]
    public var wallets: [String]
}

/// The host API's rules for users and devices, in one place: the intake's host handler and
/// `heraldctl backfill users` both validate through these, so a line of a users file is accepted
/// exactly when the same `PUT` would be.
public enum HostDirectoryRules {
    /// Identifiers per user and kind; a directory row, not a mailing list.
    public static let maxIdentifiers = 100

    /// The fields of `PUT /api/internal/users/{userId}`.
    public static let userFields: Set<String> = ["tenantId", "emails", "wallets"]
    /// The fields of `PUT /api/internal/users/{userId}/devices/{deviceId}`.
    public static let deviceFields: Set<String> = [
        "platform", "environment", "apnsToken", "apnsPushToStartToken", "apnsPushToStartTokens", "fcmToken", "bundleId",
    ]

    /// A user id, device id or other external id (`name` names it in the error).
    public static func externalID(_ value: String, field name: String) throws(HeraldError) -> String {
        guard Identifiers.isValidExternalID(value) else {
            throw .invalidField(name, "\(name) must be 1-128 of letters, digits, '.', '_', ':' and '-'.")
        }
        return value
    }

    /// tenantId, emails and wallets of a user body (the caller decides which other fields it allows).
    public static func user(_ fields: JSONFields) throws(HeraldError) -> UserEntry {
        let tenantID = try PartnerRules.tenantID(try fields.requiredString("tenantId"))
        let emails = try normalized(
            fields.stringArray("emails", maxCount: maxIdentifiers), field: fields.field("emails"),
            Identifiers.normalizedEmail)
        let wallets = try normalized(
            fields.stringArray("wallets", maxCount: maxIdentifiers),
            field: fields.field("wallets"), Identifiers.normalizedWallet)
        return UserEntry(tenantID: tenantID, emails: emails, wallets: wallets)
    }

    /// The device fields of a device body (the caller decides which other fields it allows).
    public static func device(_ fields: JSONFields) throws(HeraldError) -> DeviceRegistration {
        let platform = try fields.requiredString("platform")
        guard platform == "ios" || platform == "android" else {
            throw .invalidField(fields.field("platform"), "platform must be ios or android.")
        }
        let environment = try fields.requiredString("environment")
        guard environment == "production" || environment == "sandbox" else {
            throw .invalidField(fields.field("environment"), "environment must be production or sandbox.")
        }
        let bundleID = try fields.string("bundleId")
        if let bundleID, !Identifiers.isValidBundleID(bundleID) {
            throw .invalidField(fields.field("bundleId"), "bundleId must be 1-155 of letters, digits, '.' and '-'.")
        }
        var device = DeviceRegistration(
            platform: platform, environment: environment, bundleID: bundleID,
            apnsToken: nil, apnsPushToStartToken: nil, fcmToken: nil)
        if platform == "ios" {
            if fields.has("fcmToken") {
                throw .invalidField(fields.field("fcmToken"), "fcmToken is for android devices.")
            }
            device.apnsToken = try apnsToken(fields, "apnsToken")
            device.apnsPushToStartToken = try apnsToken(fields, "apnsPushToStartToken")
            if !fields.isNull("apnsPushToStartTokens"),
                let tokens = try fields.object(
                    "apnsPushToStartTokens",
                    allowed: Set(LiveActivityTemplate.allCases.map(\.rawValue)))
            {
                for template in LiveActivityTemplate.allCases {
                    device.apnsPushToStartTokens[template] = try apnsToken(tokens, template.rawValue)
                }
            }
            guard device.apnsToken != nil || device.apnsPushToStartToken != nil || !device.apnsPushToStartTokens.isEmpty
            else {
                throw .missingField(fields.field("apnsToken"))
            }
        } else {
            for name in ["apnsToken", "apnsPushToStartToken", "apnsPushToStartTokens"] where fields.has(name) {
                throw .invalidField(fields.field(name), "\(name) is for ios devices.")
            }
            guard let token = try fields.string("fcmToken") else { throw .missingField(fields.field("fcmToken")) }
            guard Identifiers.isValidFCMToken(token) else {
                throw .invalidField(fields.field("fcmToken"), "fcmToken is not a valid FCM registration token.")
            }
            device.fcmToken = token
        }
        return device
    }

    private static func apnsToken(_ fields: JSONFields, _ name: String) throws(HeraldError) -> String? {
        guard let raw = try fields.string(name) else { return nil }
        guard let token = Identifiers.normalizedAPNsToken(raw) else {
            throw .invalidField(fields.field(name), "\(fields.field(name)) must be 64 to 200 hexadecimal digits.")
        }
        return token
    }

    private static func normalized(_ values: [String], field: String, _ normalize: (String) -> String?)
        throws(HeraldError) -> [String]
    {
        var seen = Set<String>()
        var result: [String] = []
        for (index, value) in values.enumerated() {
            guard let normalized = normalize(value) else {
                throw .invalidField("\(field)[\(index)]", "\(field)[\(index)] is not valid.")
            }
            if seen.insert(normalized).inserted { result.append(normalized) }
        }
        return result
    }
}
