import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

@testable import Simulator

extension SimulatorHarness {
    static let bundleID = "app.herald.demo"
    static let createBody = #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#

    /// A channel management request on the channel port: `authorization` from the harness's token (or `jwt`, or
    /// none with `""`), plus `headers`.
    func channelRequest(
        _ method: String, _ resource: String = "channels", bundleID: String = bundleID,
        path: String? = nil, channelID: String? = nil, requestID: String? = nil,
        headers extra: [HTTP2Header] = [], body: String = "",
        jwt: String? = nil
    ) async throws -> HTTP2Response {
        var headers: [HTTP2Header] = []
        let token = jwt ?? self.jwt
        if !token.isEmpty { headers.append(HTTP2Header("authorization", "bearer \(token)")) }
        if let channelID { headers.append(HTTP2Header("apns-channel-id", channelID)) }
        if let requestID { headers.append(HTTP2Header("apns-request-id", requestID)) }
        headers += extra
        guard let client = channelClient else { throw HarnessError("the harness serves no channel port") }
        return try await client.send(
            HTTP2Request(
                method: method, path: path ?? "/1/apps/\(bundleID)/\(resource)",
                headers: headers, body: Array(body.utf8)))
    }

    /// Creates a channel and returns its id.
    func createChannel(policy: Int = 1, bundleID: String = bundleID) async throws -> String {
        let response = try await channelRequest(
            "POST", bundleID: bundleID, body: #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#)
        guard response.status == 201, let id = response.header("apns-channel-id") else {
            throw HarnessError("create answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return id
    }
}

/// Apple's channel management API on the simulator's channel port: create, read, list, delete, the per-app
/// limit, and every refusal, over real HTTP/2 and TLS.
@Suite("Channel management")
struct ChannelManagementTests {
    static let requestID = "0190a6e4-8f4c-4cc1-b3a1-2f3b9e0c1d2e"

    @Test func createReadListDelete() async throws {
        let harness = try SimulatorHarness(channels: true)
        let created = try await harness.channelRequest(
            "POST", requestID: Self.requestID,
            body: SimulatorHarness.createBody)
        #expect(created.status == 201)
        #expect(created.header("apns-request-id") == Self.requestID)
        let id = try #require(created.header("apns-channel-id"))
        #expect(id.utf8.count == 24)
        #expect(Data(base64Encoded: id)?.count == 16)
        #expect(created.body.isEmpty)

        let list = try await harness.channelRequest("GET", "all-channels")
        #expect(list.status == 200)
        #expect(list.json == .object([("channels", .array([.string(id)]))]))

        let read = try await harness.channelRequest("GET", channelID: id)
        #expect(read.status == 200)
        #expect(read.json == .object([("message-storage-policy", .number(1)), ("push-type", .string("LiveActivity"))]))

        let listed = try await harness.control("GET", "/sim/channels")
        #expect(listed.json[SimulatorHarness.bundleID]?.arrayValue?.first?["channelId"] == .string(id))
        #expect(listed.json[SimulatorHarness.bundleID]?.arrayValue?.first?["messageStoragePolicy"] == .number(1))
        #expect(harness.simulator.channels().map(\.id) == [id])

        let deleted = try await harness.channelRequest("DELETE", channelID: id)
        #expect(deleted.status == 204)
        #expect(deleted.body.isEmpty)
        let gone = try await harness.channelRequest("GET", channelID: id)
        #expect(gone.status == 400)
        #expect(gone.reason == "ChannelNotRegistered")
        #expect(try await harness.channelRequest("DELETE", channelID: id).reason == "ChannelNotRegistered")
        #expect(try await harness.channelRequest("GET", "all-channels").json == .object([("channels", .array([]))]))

        let records = harness.simulator.received()
        #expect(
            records.map(\.kind) == [
                .channelCreate, .channelList, .channelRead, .channelDelete, .channelRead,
                .channelDelete, .channelList,
            ])
        #expect(records.map(\.token) == [id, "", id, id, id, id, ""])
        #expect(records.map(\.status) == [201, 200, 200, 204, 400, 400, 200])
        #expect(records.allSatisfy { $0.service == .apns })
        #expect(records.first?.id == Self.requestID)
        #expect(records.first?.header("authorization") == "<redacted>")
        #expect(records[4].reason == "ChannelNotRegistered")
        #expect(harness.simulator.statistics.apns[201] == 1)
    }

    @Test("apns-request-id: echoed when well formed, made when absent; a malformed one is BadMessageId")
    func requestIDs() async throws {
        let harness = try SimulatorHarness(channels: true)
        let made = try #require(try await harness.channelRequest("GET", "all-channels").header("apns-request-id"))
        #expect(Identifiers.isLowercaseUUID(made))
        let bad = try await harness.channelRequest("GET", "all-channels", requestID: "not-a-uuid")
        #expect(bad.status == 400)
        #expect(bad.reason == "BadMessageId")
        #expect(bad.header("apns-request-id").map(Identifiers.isLowercaseUUID) == true)
        #expect(bad.header("apns-request-id") != made)
    }

    @Test func theLimitIsPerApp() async throws {
        let harness = try SimulatorHarness(channels: true, channelLimit: 2)
        let first = try await harness.createChannel()
        _ = try await harness.createChannel(policy: 0)
        let refused = try await harness.channelRequest("POST", body: SimulatorHarness.createBody)
        #expect(refused.status == 400)
        #expect(refused.reason == "CannotCreateChannelConfig")
        #expect(refused.header("apns-channel-id") == nil)
        // Another app has room of its own; a deleted channel makes room again.
        _ = try await harness.createChannel(bundleID: "app.herald.other")
        #expect(try await harness.channelRequest("DELETE", channelID: first).status == 204)
        _ = try await harness.createChannel()
        #expect(harness.simulator.channels().count == 3)
        #expect(
            harness.simulator.received(token: "").filter { $0.kind == .channelCreate }.map(\.reason)
                == ["CannotCreateChannelConfig"])
    }

    @Test(arguments: [
        ("", "BadRequestPayload"), ("{", "BadRequestPayload"), ("[]", "BadRequestPayload"),
        (#"{"message-storage-policy":1,"push-type":"LiveActivity","name":"x"}"#, "BadRequestParams"),
        (#"{"message-storage-policy":1}"#, "MissingPushType"),
        (#"{"message-storage-policy":1,"push-type":"Alert"}"#, "InvalidPushType"),
        (#"{"push-type":"LiveActivity"}"#, "MissingChannelQueueSize"),
        (#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, "MissingChannelQueueSize"),
        (#"{"message-storage-policy":"1","push-type":"LiveActivity"}"#, "MissingChannelQueueSize"),
    ])
    func createBodies(_ body: String, _ reason: String) async throws {
        let harness = try SimulatorHarness(channels: true)
        let response = try await harness.channelRequest("POST", body: body)
        #expect(response.status == 400)
        #expect(response.reason == reason)
        #expect(harness.simulator.channels().isEmpty)
        #expect(harness.simulator.received().map(\.reason) == [reason])
    }

    @Test("push-type is LiveActivity in any case, as Apple spells it several ways; the read answers its own spelling")
    func pushTypeCase() async throws {
        let harness = try SimulatorHarness(channels: true)
        let created = try await harness.channelRequest(
            "POST", body: #"{"push-type":"liveactivity","message-storage-policy":0}"#)
        #expect(created.status == 201)
        let id = try #require(created.header("apns-channel-id"))
        let read = try await harness.channelRequest("GET", channelID: id)
        #expect(read.json == .object([("message-storage-policy", .number(0)), ("push-type", .string("LiveActivity"))]))
    }

    @Test func channelIDs() async throws {
        let harness = try SimulatorHarness(channels: true)
        let other = try await harness.createChannel(bundleID: "app.herald.other")
        for method in ["GET", "DELETE"] {
            #expect(try await harness.channelRequest(method).reason == "MissingChannelId")
            #expect(try await harness.channelRequest(method, channelID: "").reason == "MissingChannelId")
            #expect(try await harness.channelRequest(method, channelID: "not base64!").reason == "BadChannelId")
            #expect(try await harness.channelRequest(method, channelID: "YWJj").status == 400)
            #expect(try await harness.channelRequest(method, channelID: "YWJj").reason == "ChannelNotRegistered")
            let long = Data(repeating: 7, count: 60).base64EncodedString()
            #expect(try await harness.channelRequest(method, channelID: long).reason == "BadChannelId")
            // Another app's channel does not exist for this one.
            #expect(try await harness.channelRequest(method, channelID: other).reason == "ChannelNotRegistered")
        }
        #expect(harness.simulator.channels().map(\.id) == [other])
    }

    @Test func pathsAndMethods() async throws {
        let harness = try SimulatorHarness(channels: true)
        let cases: [(method: String, path: String, status: Int, reason: String)] = [
            ("GET", "/1/apps/app.herald.demo/other", 404, "BadPath"),
            ("GET", "/1/apps//channels", 404, "BadPath"),
            ("GET", "/1/apps/app.herald.demo/channels/extra", 404, "BadPath"),
            ("POST", "/3/device/\(SimulatorHarness.deviceToken)", 404, "BadPath"),
            ("GET", "/sim/received", 404, "BadPath"),
            ("PUT", "/1/apps/app.herald.demo/channels", 405, "MethodNotAllowed"),
            ("POST", "/1/apps/app.herald.demo/all-channels", 405, "MethodNotAllowed"),
            ("DELETE", "/1/apps/app.herald.demo/all-channels", 405, "MethodNotAllowed"),
        ]
        for item in cases {
            let response = try await harness.channelRequest(
                item.method, path: item.path,
                body: SimulatorHarness.createBody)
            #expect(response.status == item.status, "\(item.method) \(item.path)")
            #expect(response.reason == item.reason, "\(item.method) \(item.path)")
            #expect(response.header("apns-request-id") != nil)
        }
        #expect(harness.simulator.received().map(\.kind) == Array(repeating: .channel, count: cases.count))
        let duplicate = try await harness.channelRequest(
            "GET", "all-channels", requestID: Self.requestID,
            headers: [HTTP2Header("apns-request-id", Self.requestID)])
        #expect(duplicate.reason == "DuplicateHeaders")
    }

    @Test func providerTokens() async throws {
        let clock = TestClock()
        let harness = try SimulatorHarness(clock: clock, channels: true)
        let missing = try await harness.channelRequest("GET", "all-channels", jwt: "")
        #expect(missing.status == 403)
        #expect(missing.reason == "MissingProviderToken")
        // Signed by another key (the server's TLS key is an EC P-256 key too).
        let otherKey = try ES256SigningKey(
            pem: String(
                contentsOfFile: harness.credentials.serverKeyFile,
                encoding: .utf8))
        let forged = try SimulatorHarness.mint(issuedAt: clock.now, key: otherKey)
        #expect(
            try await harness.channelRequest("POST", body: SimulatorHarness.createBody, jwt: forged).reason
                == "InvalidProviderToken")
        #expect(try await harness.channelRequest("GET", "all-channels").status == 200)
        clock.advance(by: 3601)
        #expect(try await harness.channelRequest("GET", "all-channels").reason == "ExpiredProviderToken")
        #expect(harness.simulator.channels().isEmpty)
    }

    @Test("the path's bundle id: a push-type suffix is TopicDisallowed; with --apns-topics another is TopicMismatch")
    func bundleIDs() async throws {
        let harness = try SimulatorHarness(apnsTopics: ["app.herald.demo"], channels: true)
        let suffixed = try await harness.channelRequest(
            "POST", bundleID: "app.herald.demo.push-type.liveactivity",
            body: SimulatorHarness.createBody)
        #expect(suffixed.status == 400)
        #expect(suffixed.reason == "TopicDisallowed")
        let other = try await harness.channelRequest("GET", "all-channels", bundleID: "app.someone.else")
        #expect(other.status == 403)
        #expect(other.reason == "TopicMismatch")
        _ = try await harness.createChannel()
    }

    @Test func controlCallsListAndForgetChannels() async throws {
        let harness = try SimulatorHarness(channels: true)
        let one = try await harness.createChannel(policy: 0)
        let two = try await harness.createChannel(bundleID: "app.herald.other")
        let listed = try await harness.control("GET", "/sim/channels")
        #expect(listed.status == 200)
        let members = try #require(listed.json.objectMembers)
        #expect(members.map(\.key) == ["app.herald.demo", "app.herald.other"])
        let first = try #require(listed.json["app.herald.demo"]?.arrayValue?.first)
        #expect(first["channelId"] == .string(one))
        #expect(first["messageStoragePolicy"] == .number(0))
        #expect(first["pushType"] == .string("LiveActivity"))
        #expect(first["createdAt"]?.stringValue?.hasSuffix("Z") == true)
        #expect(listed.json["app.herald.other"]?.arrayValue?.first?["channelId"] == .string(two))
        #expect(try await harness.control("PUT", "/sim/channels").status == 405)
        #expect(try await harness.control("DELETE", "/sim/channels").json == .object([("cleared", .number(2))]))
        #expect(try await harness.control("GET", "/sim/channels").json == .object([]))
        #expect(try await harness.channelRequest("GET", channelID: one).reason == "ChannelNotRegistered")
    }

    @Test func withoutAChannelPortNoneIsServed() async throws {
        let harness = try SimulatorHarness()
        #expect(harness.simulator.channelPort == nil)
        #expect(harness.simulator.channelURL == nil)
        let response = try await harness.broadcast(channelID: "YWJj", body: BroadcastTests.update)
        #expect(response.reason == "ChannelNotRegistered")
    }
}
