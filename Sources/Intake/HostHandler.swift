import Foundation
import HTTPServer
import HeraldCore
import Store

/// The host API (SPEC 4): users, identifiers, devices, sessions, opt-outs, senders.
struct HostHandler: Sendable {
    let directory: DirectoryStore
    /// Identifiers per user and kind; a directory row, not a mailing list.
    static let maxIdentifiers = 100

    func putUser(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        let fields = try JSONFields(request.jsonBody(), allowed: ["tenantId", "emails", "wallets"])
        let tenantID = try PartnerRules.tenantID(try fields.requiredString("tenantId"))
        let emails = try Self.normalized(fields.stringArray("emails", maxCount: Self.maxIdentifiers), field: "emails",
                                         Identifiers.normalizedEmail)
        let wallets = try Self.normalized(fields.stringArray("wallets", maxCount: Self.maxIdentifiers), field: "wallets",
                                          Identifiers.normalizedWallet)
        let created = try directory.putUser(id: userID, tenantID: tenantID, emails: emails, wallets: wallets)
        return Reply.json(created ? 201 : 200, .object([
            ("userId", .string(userID)), ("tenantId", .string(tenantID)),
            ("emails", .array(emails.map { .string($0) })), ("wallets", .array(wallets.map { .string($0) })),
        ]))
    }

    func putDevice(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        let deviceID = try Self.externalID(request, "deviceId")
        let fields = try JSONFields(request.jsonBody(), allowed: [
            "platform", "environment", "apnsToken", "apnsPushToStartToken", "fcmToken", "bundleId",
        ])
        let platform = try fields.requiredString("platform")
        guard platform == "ios" || platform == "android" else {
            throw HeraldError.invalidField("platform", "platform must be ios or android.")
        }
        let environment = try fields.requiredString("environment")
        guard environment == "production" || environment == "sandbox" else {
            throw HeraldError.invalidField("environment", "environment must be production or sandbox.")
        }
        let bundleID = try fields.string("bundleId")
        if let bundleID, !Identifiers.isValidBundleID(bundleID) {
            throw HeraldError.invalidField("bundleId", "bundleId must be 1-155 of letters, digits, '.' and '-'.")
        }
        var device = DeviceRegistration(platform: platform, environment: environment, bundleID: bundleID,
                                        apnsToken: nil, apnsPushToStartToken: nil, fcmToken: nil)
        if platform == "ios" {
            if fields.has("fcmToken") { throw HeraldError.invalidField("fcmToken", "fcmToken is for android devices.") }
            device.apnsToken = try Self.apnsToken(fields, "apnsToken")
            device.apnsPushToStartToken = try Self.apnsToken(fields, "apnsPushToStartToken")
            guard device.apnsToken != nil || device.apnsPushToStartToken != nil else {
                throw HeraldError.missingField("apnsToken")
            }
        } else {
            for name in ["apnsToken", "apnsPushToStartToken"] where fields.has(name) {
                throw HeraldError.invalidField(name, "\(name) is for ios devices.")
            }
            guard let token = try fields.string("fcmToken") else { throw HeraldError.missingField("fcmToken") }
            guard Identifiers.isValidFCMToken(token) else {
                throw HeraldError.invalidField("fcmToken", "fcmToken is not a valid FCM registration token.")
            }
            device.fcmToken = token
        }
        let created = try directory.putDevice(userID: userID, deviceID: deviceID, device)
        // Tokens are secrets: the answer says which are registered, never their values.
        return Reply.json(created ? 201 : 200, .object([
            ("userId", .string(userID)), ("deviceId", .string(deviceID)), ("platform", .string(platform)),
            ("environment", .string(environment)), ("bundleId", bundleID.map { .string($0) } ?? .null),
            ("tokens", .object([
                ("apns", .bool(device.apnsToken != nil)), ("apnsPushToStart", .bool(device.apnsPushToStartToken != nil)),
                ("fcm", .bool(device.fcmToken != nil)),
            ])),
        ]))
    }

    func deleteDevice(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        let deviceID = try Self.externalID(request, "deviceId")
        guard try directory.deleteDevice(userID: userID, deviceID: deviceID) else { throw HeraldError.notFound }
        return Reply.noContent()
    }

    func putSession(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        let miniAppID = try Self.miniAppID(request)
        let seen = try directory.touchSession(userID: userID, miniAppID: miniAppID)
        return Reply.json(200, .object([
            ("userId", .string(userID)), ("miniAppId", .string(miniAppID)), ("lastSeenAt", .string(ISO8601.format(seen))),
        ]))
    }

    func putOptOut(_ request: RoutedRequest) throws -> HTTPResponse {
        try directory.optOut(userID: try Self.externalID(request, "userId"), miniAppID: try Self.miniAppID(request))
        return Reply.noContent()
    }

    func deleteOptOut(_ request: RoutedRequest) throws -> HTTPResponse {
        try directory.optIn(userID: try Self.externalID(request, "userId"), miniAppID: try Self.miniAppID(request))
        return Reply.noContent()
    }

    func senders(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        guard try directory.userExists(userID) else { throw DirectoryStore.userNotFound }
        let senders = try directory.senders(userID: userID).map { entry -> JSONValue in
            .object([
                ("miniAppId", .string(entry.miniAppID)),
                ("displayName", entry.displayName.map { .string($0) } ?? .null),
                ("iconUrl", entry.iconURL.map { .string($0) } ?? .null),
                ("firstSentAt", entry.firstSentAt.map { .string(ISO8601.format($0)) } ?? .null),
                ("optedOut", .bool(entry.optedOut)),
            ])
        }
        return Reply.json(200, .object([("userId", .string(userID)), ("senders", .array(senders))]))
    }

    private static func externalID(_ request: RoutedRequest, _ name: String) throws(HeraldError) -> String {
        let value = request.parameter(name)
        guard Identifiers.isValidExternalID(value) else {
            throw .invalidField(name, "\(name) must be 1-128 of letters, digits, '.', '_', ':' and '-'.")
        }
        return value
    }

    private static func miniAppID(_ request: RoutedRequest) throws(HeraldError) -> String {
        let value = request.parameter("miniAppId")
        guard Identifiers.isValidMiniAppID(value) else { throw .invalidField("miniAppId", "miniAppId is not valid.") }
        return value
    }

    private static func apnsToken(_ fields: JSONFields, _ name: String) throws(HeraldError) -> String? {
        guard let raw = try fields.string(name) else { return nil }
        guard let token = Identifiers.normalizedAPNsToken(raw) else {
            throw .invalidField(name, "\(name) must be 64 to 200 hexadecimal digits.")
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
