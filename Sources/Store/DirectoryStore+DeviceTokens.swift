import Foundation
import HeraldCore
import Postgres

extension DirectoryStore {
    /// The user's devices with their tokens' health, by device id; nil when there is no such user.
    public func deviceStates(userID: String) throws -> [DeviceTokenStates]? {
        try pool.withConnection { connection in
            let rows = try connection.result(Queries.DeviceTokens.UserDevices(userID: userID)).rows
            guard !rows.isEmpty else { return nil }
            // A user without devices is one row of NULLs (the LEFT JOIN).
            return try rows.filter { try !$0.isNull("device_id") }.map { try DeviceRow(row: $0).states() }
        }
    }

    /// One device with its tokens' health; nil when the user has no such device.
    public func deviceState(userID: String, deviceID: String) throws -> DeviceTokenStates? {
        try pool.withConnection { try $0.row(Queries.DeviceTokens.Device(userID: userID, deviceID: deviceID)) }?
            .states()
    }

    /// A device row as `deviceColumns` (Queries/device_tokens.sql) returns it.
    struct DeviceRow: QueryRow, Decodable {
        let deviceID: String
        let platform: String
        let environment: String
        let bundleID: String?
        let hasApnsToken: Bool
        let apnsTokenInvalidatedAt: Date?
        let apnsTokenInvalidReason: String?
        let hasApnsPushToStartToken: Bool
        let apnsPushToStartInvalidatedAt: Date?
        let apnsPushToStartInvalidReason: String?
        let hasFcmToken: Bool
        let fcmTokenInvalidatedAt: Date?
        let fcmTokenInvalidReason: String?
        let registeredAt: Date?
        let updatedAt: Date
        /// `[[template, invalidated (UNIX seconds) or null, reason or null], ...]`, or NULL.
        let pushToStartTemplates: String?

        func states() throws -> DeviceTokenStates {
            DeviceTokenStates(
                deviceID: deviceID, platform: platform, environment: environment, bundleID: bundleID,
                apns: TokenHealth(
                    hasToken: hasApnsToken, invalidatedAt: apnsTokenInvalidatedAt, reason: apnsTokenInvalidReason),
                apnsPushToStart: TokenHealth(
                    hasToken: hasApnsPushToStartToken, invalidatedAt: apnsPushToStartInvalidatedAt,
                    reason: apnsPushToStartInvalidReason),
                fcm: TokenHealth(
                    hasToken: hasFcmToken, invalidatedAt: fcmTokenInvalidatedAt, reason: fcmTokenInvalidReason),
                apnsPushToStartTemplates: try templates(), registeredAt: registeredAt, updatedAt: updatedAt)
        }

        private func templates() throws -> [(template: String, health: TokenHealth)] {
            guard let pushToStartTemplates else { return [] }
            guard let entries = try? JSONParser.parse(Array(pushToStartTemplates.utf8)).arrayValue else {
                throw PostgresError(code: .decodingFailed, serverMessage: "unexpected push-to-start templates")
            }
            return try entries.map { entry in
                guard let fields = entry.arrayValue, fields.count == 3, let template = fields[0].stringValue else {
                    throw PostgresError(code: .decodingFailed, serverMessage: "unexpected push-to-start template")
                }
                let invalidatedAt = fields[1].numberValue.map { Date(timeIntervalSince1970: $0) }
                return (
                    template, TokenHealth(hasToken: true, invalidatedAt: invalidatedAt, reason: fields[2].stringValue)
                )
            }
        }
    }
}
