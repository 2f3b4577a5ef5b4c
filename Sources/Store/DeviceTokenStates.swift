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

    /// The columns `init(row:)` reads, in order, of `devices d`.
    static let columns = """
        d.device_id, d.platform, d.environment, d.bundle_id,
        d.apns_token IS NOT NULL, d.apns_token_invalidated_at, d.apns_token_invalid_reason,
        d.apns_push_to_start_token IS NOT NULL, d.apns_push_to_start_invalidated_at, d.apns_push_to_start_invalid_reason,
        d.fcm_token IS NOT NULL, d.fcm_token_invalidated_at, d.fcm_token_invalid_reason,
        d.registered_at, d.updated_at,
        (SELECT json_agg(json_build_array(p.template, extract(epoch FROM p.invalidated_at), p.invalid_reason)
                         ORDER BY p.template)
           FROM device_push_to_start_tokens p WHERE p.user_id = d.user_id AND p.device_id = d.device_id)::text
        """

    init(row: PostgresRow) throws {
        deviceID = try row.string(0)
        platform = try row.string(1)
        environment = try row.string(2)
        bundleID = row.optionalString(3)
        apns = TokenHealth(hasToken: try row.bool(4), invalidatedAt: try row.optionalDate(5), reason: row.optionalString(6))
        apnsPushToStart = TokenHealth(hasToken: try row.bool(7), invalidatedAt: try row.optionalDate(8),
                                      reason: row.optionalString(9))
        fcm = TokenHealth(hasToken: try row.bool(10), invalidatedAt: try row.optionalDate(11), reason: row.optionalString(12))
        registeredAt = try row.optionalDate(13)
        updatedAt = try row.date(14)
        // [[template, invalidated (UNIX seconds) or null, reason or null], ...] or NULL.
        var templates: [(template: String, health: TokenHealth)] = []
        if let text = row.optionalString(15) {
            guard let entries = try? JSONParser.parse(Array(text.utf8)).arrayValue else {
                throw PostgresError(code: .decodingFailed, serverMessage: "unexpected push-to-start templates")
            }
            for entry in entries {
                guard let fields = entry.arrayValue, fields.count == 3, let template = fields[0].stringValue else {
                    throw PostgresError(code: .decodingFailed, serverMessage: "unexpected push-to-start template")
                }
                let invalidatedAt = fields[1].numberValue.map { Date(timeIntervalSince1970: $0) }
                templates.append((template, TokenHealth(hasToken: true, invalidatedAt: invalidatedAt,
                                                        reason: fields[2].stringValue)))
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
            // One statement: the user's existence and devices seen in one snapshot.
            let rows = try connection.query("""
                SELECT \(DeviceTokenStates.columns)
                  FROM users u LEFT JOIN devices d ON d.user_id = u.id
                 WHERE u.id = $1
                 ORDER BY d.device_id
                """, [userID]).rows
            guard !rows.isEmpty else { return nil }
            return try rows.filter { !$0.isNull(0) }.map(DeviceTokenStates.init(row:))
        }
    }

    /// One device with its tokens' health; nil when the user has no such device.
    public func deviceState(userID: String, deviceID: String) throws -> DeviceTokenStates? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(DeviceTokenStates.columns) FROM devices d WHERE d.user_id = $1 AND d.device_id = $2",
                                 [userID, deviceID]).first.map(DeviceTokenStates.init(row:))
        }
    }
}
