import APNs
import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Synchronization

@testable import Simulator

/// An in-process simulator over real TLS HTTP/2 with the test credentials, a client for it, and
/// helpers that build valid APNs and FCM requests (each test then breaks one thing).
final class SimulatorHarness: Sendable {
    static let deviceToken = String(repeating: "ab", count: 32)
    static let payload = Array(#"{"aps":{"alert":{"title":"Hello","body":"From the simulator"}}}"#.utf8)

    /// A JSON object payload of exactly `bytes` bytes.
    static func payload(bytes: Int) -> [UInt8] {
        let head = #"{"aps":{},"x":""#
        return Array((head + String(repeating: "x", count: bytes - head.utf8.count - 2) + #""}"#).utf8)
    }

    let credentials = TestCredentials.shared
    let clock: TestClock
    let simulator: Simulator
    let client: HTTP2Client
    /// A client of the channel management port, when the harness serves one (`channels: true`).
    let channelClient: HTTP2Client?
    /// A valid provider token (iat: the clock's now at start).
    let jwt: String

    static let apnsKey: ES256SigningKey = {
        do {
            return try ES256SigningKey(pem: String(contentsOfFile: TestCredentials.shared.apnsKeyFile, encoding: .utf8))
        } catch {
            fatalError("cannot read the test APNs key: \(error)")
        }
    }()

    static let serviceAccountKey: RS256SigningKey = {
        do {
            return try RS256SigningKey(
                pem: String(contentsOfFile: TestCredentials.shared.fcmPrivateKeyFile, encoding: .utf8))
        } catch {
            fatalError("cannot read the test service-account key: \(error)")
        }
    }()

    /// The other project's service account (`TestCredentials.fcmOtherCredentialsFile`).
    static let otherServiceAccountKey: RS256SigningKey = {
        do {
            return try RS256SigningKey(
                pem: String(
                    contentsOfFile: TestCredentials.shared.fcmOtherPrivateKeyFile,
                    encoding: .utf8))
        } catch {
            fatalError("cannot read the other test service-account key: \(error)")
        }
    }()

    static let clientEmail = "herald@herald-sim.iam.gserviceaccount.com"
    static let otherClientEmail = "herald@herald-sim-other.iam.gserviceaccount.com"

    /// `connectionCount` 1 keeps every request on one connection (provider-token rules are per
    /// connection). `fcmAccounts`: the service accounts the simulator knows (the test credentials' first, and
    /// with `.both` the other project's too; `.none` is the lenient simulator).
    init(
        recordLimit: Int = 100_000, clock: TestClock = TestClock(), tls: Bool = true, connectionCount: Int = 1,
        requestTimeout: Duration = .seconds(10), apnsTopics: [String]? = nil,
        apnsEnvironment: APNsEnvironment = .production, apnsKeyEnvironments: [String: APNsEnvironment] = [:],
        fcmAccounts: FCMAccounts = .first,
        fcmTokenProject: String? = nil, channels: Bool = false, channelLimit: Int = 10_000,
        latency: SimulatorLatency = .zero
    ) throws {
        let credentials = TestCredentials.shared
        self.clock = clock
        simulator = try Simulator(
            configuration: SimulatorConfiguration(
                tlsCertificateFile: tls ? credentials.serverCertificateFile : nil,
                tlsKeyFile: tls ? credentials.serverKeyFile : nil,
                apnsKeyFile: credentials.apnsKeyFile,
                fcmCredentialsFile: fcmAccounts == .none ? nil : credentials.fcmCredentialsFile,
                fcmAdditionalCredentialsFiles: fcmAccounts == .both ? [credentials.fcmOtherCredentialsFile] : [],
                fcmTokenProject: fcmTokenProject,
                apnsTopics: apnsTopics, apnsEnvironment: apnsEnvironment, apnsKeyEnvironments: apnsKeyEnvironments,
                channelPort: channels ? 0 : nil,
                channelLimit: channelLimit, recordLimit: recordLimit, clock: clock, latency: latency))
        try simulator.start()
        client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: simulator.url, caFile: credentials.caFile, connectionCount: connectionCount,
                requestTimeout: requestTimeout))
        channelClient = try simulator.channelURL.map { url in
            try HTTP2Client(
                configuration: HTTP2ClientConfiguration(
                    url: url, caFile: credentials.caFile, connectionCount: 1, requestTimeout: requestTimeout))
        }
        jwt = try Self.mint(issuedAt: clock.now)
    }

    deinit {
        client.shutdown()
        channelClient?.shutdown()
        simulator.stop()
    }

    enum FCMAccounts {
        case none, first, both
    }

    static func mint(
        issuedAt: Date, keyID: String = "SIMKEY0001", teamID: String = "SIMTEAM001",
        key: ES256SigningKey = apnsKey
    ) throws -> String {
        try ProviderTokenMint.mint(key: key, keyID: keyID, teamID: teamID, issuedAt: issuedAt)
    }

    /// The headers of a valid alert push.
    func apnsHeaders(jwt: String? = nil) -> [HTTP2Header] {
        [
            HTTP2Header("authorization", "bearer \(jwt ?? self.jwt)"), HTTP2Header("apns-topic", "app.herald.demo"),
            HTTP2Header("apns-push-type", "alert"), HTTP2Header("apns-priority", "10"),
        ]
    }

    /// Sends an APNs request: the valid headers with `replacing` applied (a nil value removes
    /// the header), plus `adding`.
    func apns(
        token: String = deviceToken, method: String = "POST", path: String? = nil,
        replacing: [String: String?] = [:], adding: [HTTP2Header] = [], body: [UInt8] = payload,
        jwt: String? = nil
    ) async throws -> HTTP2Response {
        var headers = apnsHeaders(jwt: jwt).compactMap { header -> HTTP2Header? in
            guard let replacement = replacing[header.name] else { return header }
            return replacement.map { HTTP2Header(header.name, $0) }
        }
        for (name, value) in replacing where value != nil && !headers.contains(where: { $0.name == name }) {
            headers.append(HTTP2Header(name, value!))
        }
        headers += adding
        return try await client.send(
            HTTP2Request(
                method: method, path: path ?? "/3/device/\(token)",
                headers: headers, body: body))
    }

    // MARK: FCM

    /// A service-account assertion (`other`: the other project's account's, signed with its key); every claim
    /// can be overridden (nil removes it).
    static func assertion(
        now: Date, overrides: [String: JSONValue?] = [:], tamper: Bool = false,
        other: Bool = false
    ) throws -> String {
        let seconds = now.timeIntervalSince1970.rounded(.down)
        let key = other ? otherServiceAccountKey : serviceAccountKey
        var claims: [(key: String, value: JSONValue)] = [
            ("iss", .string(other ? otherClientEmail : clientEmail)),
            ("scope", .string("https://www.googleapis.com/auth/firebase.messaging")),
            ("aud", .string("https://127.0.0.1:8443/token")), ("iat", .number(seconds)),
            ("exp", .number(seconds + 3600)),
        ]
        for (key, value) in overrides {
            claims.removeAll { $0.key == key }
            if let value { claims.append((key, value)) }
        }
        return try JSONWebToken.encode(
            header: .object([("alg", .string("RS256")), ("typ", .string("JWT"))]), claims: .object(claims)
        ) { input throws(CryptoError) in
            var signature = try key.sign(input)
            if tamper { signature[0] ^= 1 }
            return signature
        }
    }

    func tokenRequest(
        assertion: String, grantType: String = "urn:ietf:params:oauth:grant-type:jwt-bearer",
        path: String = "/token"
    ) async throws -> HTTP2Response {
        let form =
            "grant_type=\(grantType.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            + "&assertion=\(assertion)"
        return try await client.send(
            HTTP2Request(
                path: path, headers: [HTTP2Header("content-type", "application/x-www-form-urlencoded")],
                body: Array(form.utf8)))
    }

    /// An access token from the simulator's token endpoint (`other`: for the other project's account).
    func accessToken(other: Bool = false) async throws -> String {
        let response = try await tokenRequest(assertion: try Self.assertion(now: clock.now, other: other))
        guard response.status == 200, let token = try JSONParser.parse(response.body)["access_token"]?.stringValue
        else {
            throw HarnessError(
                "token endpoint answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return token
    }

    func fcm(message: String, project: String = "herald-sim", accessToken: String?) async throws -> HTTP2Response {
        var headers = [HTTP2Header("content-type", "application/json")]
        if let accessToken { headers.append(HTTP2Header("authorization", "Bearer \(accessToken)")) }
        return try await client.send(
            HTTP2Request(
                path: "/v1/projects/\(project)/messages:send", headers: headers,
                body: Array(message.utf8)))
    }

    // MARK: Control API

    func control(_ method: String, _ path: String, body: String = "") async throws -> (status: Int, json: JSONValue) {
        let response = try await client.send(HTTP2Request(method: method, path: path, body: Array(body.utf8)))
        return (response.status, try JSONParser.parse(response.body))
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension HTTP2Response {
    /// The APNs `reason` or the FCM `error.details[0].errorCode` of an error body.
    var reason: String? {
        guard let json = try? JSONParser.parse(body) else { return nil }
        return json["reason"]?.stringValue ?? json["error"]?["details"]?.arrayValue?.first?["errorCode"]?.stringValue
    }

    var json: JSONValue? { try? JSONParser.parse(body) }
}
