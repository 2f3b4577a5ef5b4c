import Foundation
import HeraldCore
import Postgres

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

    /// A row of Queries/device_tokens.sql (`userDevices`, `device`).
    public init(row: PostgresRow) throws {
        deviceID = try row.string("device_id")
        platform = try row.string("platform")
        environment = try row.string("environment")
        bundleID = try row.optionalString("bundle_id")
        apns = TokenHealth(
            hasToken: try row.bool("has_apns_token"),
            invalidatedAt: try row.optionalDate("apns_token_invalidated_at"),
            reason: try row.optionalString("apns_token_invalid_reason"))
        apnsPushToStart = TokenHealth(
            hasToken: try row.bool("has_apns_push_to_start_token"),
            invalidatedAt: try row.optionalDate("apns_push_to_start_invalidated_at"),
            reason: try row.optionalString("apns_push_to_start_invalid_reason"))
        fcm = TokenHealth(
            hasToken: try row.bool("has_fcm_token"),
            invalidatedAt: try row.optionalDate("fcm_token_invalidated_at"),
            reason: try row.optionalString("fcm_token_invalid_reason"))
        registeredAt = try row.optionalDate("registered_at")
        updatedAt = try row.date("updated_at")
        // [[template, invalidated (UNIX seconds) or null, reason or null], ...] or NULL.
        var templates: [(template: String, health: TokenHealth)] = []
        if let text = try row.optionalString("push_to_start_templates") {
            guard let entries = try? JSONParser.parse(Array(text.utf8)).arrayValue else {
                throw PostgresError(code: .decodingFailed, serverMessage: "unexpected push-to-start templates")
            }
            for entry in entries {
                guard let fields = entry.arrayValue, fields.count == 3, let template = fields[0].stringValue else {
                    throw PostgresError(code: .decodingFailed, serverMessage: "unexpected push-to-start template")
                }
                let invalidatedAt = fields[1].numberValue.map { Date(timeIntervalSince1970: $0) }
                templates.append(
                    (
                        template,
                        TokenHealth(
                            hasToken: true, invalidatedAt: invalidatedAt,
                            reason: fields[2].stringValue)
                    ))
            }
        }
        apnsPushToStartTemplates = templates
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

extension DirectoryStore {
    /// The user's devices with their tokens' health, by device id; nil when there is no such user.
    public func deviceStates(userID: String) throws -> [DeviceTokenStates]? {
        try pool.withConnection { connection in
            let rows = try connection.result(Queries.DeviceTokens.UserDevices(userID: userID)).rows
            guard !rows.isEmpty else { return nil }
            // A user without devices is one row of NULLs (the LEFT JOIN).
            return try rows.filter { try !$0.isNull("device_id") }.map(DeviceTokenStates.init(row:))
        }
    }

    /// One device with its tokens' health; nil when the user has no such device.
    public func deviceState(userID: String, deviceID: String) throws -> DeviceTokenStates? {
        try pool.withConnection { try $0.row(Queries.DeviceTokens.Device(userID: userID, deviceID: deviceID)) }
    }
}

extension DirectoryStore {

}

extension DeviceTokenStates: QueryRow {}
