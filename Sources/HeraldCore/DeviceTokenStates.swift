import Foundation

/// One token's health as the host sees it: never the token itself.
public struct TokenHealth: Sendable, Equatable {
    public enum State: String, Sendable {
        case valid, invalid, absent
    }

    public let state: State
    /// The upstream's reason for an invalid token (`Unregistered`, `BadDeviceToken`, `UNREGISTERED`, ...).
    public let reason: String?
    /// When an invalid token stopped being valid (APNs' 410 timestamp, else the verdict's time).
    public let since: Date?

    public init(hasToken: Bool, invalidatedAt: Date?, reason: String?) {
        if !hasToken {
            (state, self.reason, since) = (.absent, nil, nil)
        } else if let invalidatedAt {
            (state, self.reason, since) = (.invalid, reason, invalidatedAt)
        } else {
            (state, self.reason, since) = (.valid, nil, nil)
        }
    }

    public var json: JSONValue {
        .object([
            ("state", .string(state.rawValue)), ("reason", reason.map { .string($0) } ?? .null),
            ("since", since.map { .string(ISO8601.format($0)) } ?? .null),
        ])
    }
}

/// A device row with the health of each of its tokens.
public struct DeviceTokenStates: Sendable, Equatable {
    public let deviceID: String
    public let platform: String
    public let environment: String
    public let bundleID: String?
    public let apns: TokenHealth
    public let apnsPushToStart: TokenHealth
    public let fcm: TokenHealth
    /// The push-to-start tokens the host registered for one template each, by template.
    public let apnsPushToStartTemplates: [(template: String, health: TokenHealth)]
    /// The host's last registration (PUT) of the device; nil for a device registered before it was recorded.
    public let registeredAt: Date?
    public let updatedAt: Date

    public init(
        deviceID: String, platform: String, environment: String, bundleID: String?, apns: TokenHealth,
        apnsPushToStart: TokenHealth, fcm: TokenHealth,
        apnsPushToStartTemplates: [(template: String, health: TokenHealth)],
        registeredAt: Date?, updatedAt: Date
    ) {
        self.deviceID = deviceID
        self.platform = platform
        self.environment = environment
        self.bundleID = bundleID
        self.apns = apns
        self.apnsPushToStart = apnsPushToStart
        self.fcm = fcm
        self.apnsPushToStartTemplates = apnsPushToStartTemplates
        self.registeredAt = registeredAt
        self.updatedAt = updatedAt
    }

    public static func == (lhs: DeviceTokenStates, rhs: DeviceTokenStates) -> Bool {
        lhs.json == rhs.json
    }

    /// The host API's shape (docs/api-host.md, "Device token health").
    public var json: JSONValue {
        .object([
            ("deviceId", .string(deviceID)), ("platform", .string(platform)), ("environment", .string(environment)),
            ("bundleId", bundleID.map { .string($0) } ?? .null),
            ("apns", apns.json), ("apnsPushToStart", apnsPushToStart.json),
            ("apnsPushToStartTemplates", .object(apnsPushToStartTemplates.map { ($0.template, $0.health.json) })),
            ("fcm", fcm.json),
            ("registeredAt", registeredAt.map { .string(ISO8601.format($0)) } ?? .null),
            ("updatedAt", .string(ISO8601.format(updatedAt))),
        ])
    }
}
