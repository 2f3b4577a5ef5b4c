import Foundation
import HTTPServer
import HeraldCore
import Store

/// The host API: users, identifiers, devices and their tokens' health, sessions, opt-outs, senders.
struct HostHandler: Sendable {
    let directory: DirectoryStore
    /// HERALD_PUBLIC_URL: the senders' icons are served there.
    let publicURL: String?

    static let routes: [IntakeRoute] = [
        .host("PUT", "/api/internal/users/{userId}") { try $0.host.putUser($1) },
        .host("PUT", "/api/internal/users/{userId}/devices/{deviceId}") { try $0.host.putDevice($1) },
        .host("DELETE", "/api/internal/users/{userId}/devices/{deviceId}") { try $0.host.deleteDevice($1) },
        .host("GET", "/api/internal/users/{userId}/devices") { try $0.host.listDevices($1) },
        .host("GET", "/api/internal/users/{userId}/devices/{deviceId}") { try $0.host.getDevice($1) },
        .host("PUT", "/api/internal/users/{userId}/mini-app-sessions/{miniAppId}") { try $0.host.putSession($1) },
        .host("PUT", "/api/internal/users/{userId}/opt-outs/{miniAppId}") { try $0.host.putOptOut($1) },
        .host("DELETE", "/api/internal/users/{userId}/opt-outs/{miniAppId}") { try $0.host.deleteOptOut($1) },
        .host("GET", "/api/internal/users/{userId}/mini-app-senders") { try $0.host.senders($1) },
    ]

    func putUser(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        let fields = try JSONFields(
            request.jsonBody(),
            allowed: HostDirectoryRules.userFields.union(UserGuards.fields).union([LocaleUpdate.field]))
        let user = try HostDirectoryRules.user(fields)
        let guards = try UserGuards.parse(fields)
        let (created, locale) = try directory.putUser(
            id: userID, tenantID: user.tenantID, emails: user.emails, wallets: user.wallets,
            guards: guards, locale: LocaleUpdate.parse(fields))
        return Reply.json(
            created ? 201 : 200,
            .object([
                ("userId", .string(userID)), ("tenantId", .string(user.tenantID)),
                ("emails", .array(user.emails.map { .string($0) })),
                ("wallets", .array(user.wallets.map { .string($0) })),
                ("timeZone", guards.timeZone.map { .string($0) } ?? .null),
                ("quietHours", guards.quietHours?.json ?? .null),
                // The stored one when the body had none.
                ("locale", locale.map { .string($0) } ?? .null),
            ]))
    }

    func putDevice(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        let deviceID = try Self.externalID(request, "deviceId")
        let device = try HostDirectoryRules.device(
            JSONFields(request.jsonBody(), allowed: HostDirectoryRules.deviceFields))
        let created = try directory.putDevice(userID: userID, deviceID: deviceID, device)
        // Tokens are secrets: the answer says which are registered, never their values.
        return Reply.json(
            created ? 201 : 200,
            .object([
                ("userId", .string(userID)), ("deviceId", .string(deviceID)), ("platform", .string(device.platform)),
                ("environment", .string(device.environment)),
                ("bundleId", device.bundleID.map { .string($0) } ?? .null),
                (
                    "tokens",
                    .object([
                        ("apns", .bool(device.apnsToken != nil)),
                        ("apnsPushToStart", .bool(device.apnsPushToStartToken != nil)),
                        ("apnsPushToStartTemplates", .array(device.pushToStartTemplates.map { .string($0.rawValue) })),
                        ("fcm", .bool(device.fcmToken != nil)),
                    ])
                ),
            ]))
    }

    /// The user's devices and the health of each token (valid, invalid with reason and since, absent).
    func listDevices(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        guard let devices = try directory.deviceStates(userID: userID) else { throw DirectoryStore.userNotFound }
        return Reply.json(200, .object([("userId", .string(userID)), ("devices", .array(devices.map(\.json)))]))
    }

    func getDevice(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try Self.externalID(request, "userId")
        let deviceID = try Self.externalID(request, "deviceId")
        guard let device = try directory.deviceState(userID: userID, deviceID: deviceID) else {
            throw HeraldError.notFound
        }
        return Reply.json(200, device.json)
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
        return Reply.json(
            200,
            .object([
                ("userId", .string(userID)), ("miniAppId", .string(miniAppID)),
                ("lastSeenAt", .string(ISO8601.format(seen))),
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
                // The same PNG payloads point at (HERALD_PUBLIC_URL + its path).
                ("iconUrl", entry.iconPath.flatMap { path in publicURL.map { .string($0 + path) } } ?? .null),
                ("firstSentAt", entry.firstSentAt.map { .string(ISO8601.format($0)) } ?? .null),
                ("optedOut", .bool(entry.optedOut)),
            ])
        }
        return Reply.json(200, .object([("userId", .string(userID)), ("senders", .array(senders))]))
    }

    private static func externalID(_ request: RoutedRequest, _ name: String) throws(HeraldError) -> String {
        try HostDirectoryRules.externalID(request.parameter(name), field: name)
    }

    private static func miniAppID(_ request: RoutedRequest) throws(HeraldError) -> String {
        let value = request.parameter("miniAppId")
        guard Identifiers.isValidMiniAppID(value) else { throw .invalidField("miniAppId", "miniAppId is not valid.") }
        return value
    }
}
