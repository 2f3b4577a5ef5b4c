import APNs
import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import Testing

@testable import Simulator

extension SimulatorHarness {
    /// A broadcast on the APNs port: the headers a valid broadcast carries, with `replacing` applied (a nil value
    /// removes the header), plus `adding`.
    func broadcast(
        channelID: String?, body: [UInt8], bundleID: String = bundleID, method: String = "POST",
        replacing: [String: String?] = [:], adding: [HTTP2Header] = [],
        jwt: String? = nil
    ) async throws -> HTTP2Response {
        var values: [(String, String?)] = [
            ("authorization", "bearer \(jwt ?? self.jwt)"), ("apns-push-type", "liveactivity"),
            ("apns-channel-id", channelID), ("apns-priority", "10"),
        ]
        for (name, value) in replacing {
            if let index = values.firstIndex(where: { $0.0 == name }) {
                values[index].1 = value
            } else {
                values.append((name, value))
            }
        }
        let headers = values.compactMap { name, value in value.map { HTTP2Header(name, $0) } } + adding
        return try await client.send(
            HTTP2Request(
                method: method, path: "/4/broadcasts/apps/\(bundleID)",
                headers: headers, body: body))
    }
}

/// `POST /4/broadcasts/apps/{bundleId}` on the APNs port: accepted and recorded, refused as Apple documents,
/// failed on demand by a fault on the channel id.
@Suite("Broadcasts")
struct BroadcastTests {
    static let update = LiveActivityPayloads.body(LiveActivityPayloads.update)
    static let end = LiveActivityPayloads.body(LiveActivityPayloads.end)
    static let requestID = "0190a6e4-8f4c-4cc1-b3a1-2f3b9e0c1d2e"

    @Test func acceptedAndRecorded() async throws {
        let harness = try SimulatorHarness(channels: true)
        let channel = try await harness.createChannel()
        let response = try await harness.broadcast(
            channelID: channel, body: Self.update,
            replacing: ["apns-request-id": Self.requestID])
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.header("apns-request-id") == Self.requestID)
        // Production, like the device-push answers: no apns-unique-id.
        #expect(response.header("apns-unique-id") == nil)
        let made = try await harness.broadcast(channelID: channel, body: Self.end, replacing: ["apns-priority": "5"])
        #expect(made.status == 200)
        #expect(made.header("apns-request-id").map(Identifiers.isLowercaseUUID) == true)

        let broadcasts = harness.simulator.received().filter { $0.kind == .broadcast }
        #expect(broadcasts.count == 2)
        let record = try #require(broadcasts.first)
        #expect(record.service == .apns)
        #expect(record.token == channel)
        #expect(record.id == Self.requestID)
        #expect(record.status == 200)
        #expect(record.body == Self.update)
        #expect(record.header("apns-channel-id") == channel)
        #expect(record.header("authorization") == "<redacted>")
        #expect(harness.simulator.received(token: channel).map(\.kind) == [.channelCreate, .broadcast, .broadcast])

        let listed = try await harness.control("GET", "/sim/received?service=apns&kind=broadcast")
        let items = try #require(listed.json.arrayValue)
        #expect(items.count == 2)
        #expect(items.first?["kind"] == .string("broadcast"))
        #expect(items.first?["token"] == .string(channel))
        #expect(items.first?["id"] == .string(Self.requestID))
        #expect(items.first?["payload"]?["aps"]?["event"] == .string("update"))
        #expect(try await harness.control("GET", "/sim/received?service=fcm").json == .array([]))
        #expect(try await harness.control("GET", "/sim/received?kind=push").status == 400)
        let creates = try await harness.control("GET", "/sim/received?kind=channel-create")
        #expect(creates.json.arrayValue?.count == 1)
    }

    @Test("a device push's record keeps its shape: no kind")
    func devicePushRecordsHaveNoKind() async throws {
        let harness = try SimulatorHarness(channels: true)
        #expect(try await harness.apns().status == 200)
        let listed = try await harness.control("GET", "/sim/received")
        let keys = try #require(listed.json.arrayValue?.first?.objectMembers?.map(\.key))
        #expect(keys == ["service", "token", "headers", "payload", "status", "id", "receivedAt"])
        #expect(harness.simulator.received().first?.kind == nil)
    }

    @Test func theSandboxAddsAUniqueID() async throws {
        let harness = try SimulatorHarness(apnsEnvironment: .sandbox, channels: true)
        let channel = try await harness.createChannel()
        let response = try await harness.broadcast(channelID: channel, body: Self.update)
        #expect(response.status == 200)
        #expect(response.header("apns-unique-id").map(Identifiers.isLowercaseUUID) == true)
    }

    @Test func unknownAndDeletedChannelsAreNotRegistered() async throws {
        let harness = try SimulatorHarness(channels: true)
        let unknown = try await harness.broadcast(channelID: "dGVzdC1jaGFubmVs", body: Self.update)
        #expect(unknown.status == 400)
        #expect(unknown.reason == "ChannelNotRegistered")
        #expect(unknown.header("apns-request-id") != nil)
        let channel = try await harness.createChannel()
        #expect(try await harness.broadcast(channelID: channel, body: Self.update).status == 200)
        #expect(try await harness.channelRequest("DELETE", channelID: channel).status == 204)
        #expect(try await harness.broadcast(channelID: channel, body: Self.update).reason == "ChannelNotRegistered")
        // A channel belongs to the app it was created for.
        let other = try await harness.createChannel(bundleID: "app.herald.other")
        #expect(try await harness.broadcast(channelID: other, body: Self.update).reason == "ChannelNotRegistered")
        #expect(
            try await harness.broadcast(channelID: other, body: Self.update, bundleID: "app.herald.other").status
                == 200)
        #expect(
            harness.simulator.received().filter { $0.kind == .broadcast }.map(\.status)
                == [400, 200, 400, 400, 200])
    }

    @Test func badPayloadsAreRefused() async throws {
        let harness = try SimulatorHarness(channels: true)
        let channel = try await harness.createChannel()
        let cases: [(body: [UInt8], status: Int, reason: String, detail: String?)] = [
            ([], 400, "PayloadEmpty", nil),
            (Array("not json".utf8), 400, "PayloadEmpty", "the payload must be a JSON object (without duplicate keys)"),
            (
                LiveActivityPayloads.body(LiveActivityPayloads.without(LiveActivityPayloads.update, "content-state")),
                400, "PayloadEmpty", "aps.content-state is required on update"
            ),
            (
                LiveActivityPayloads.body(LiveActivityPayloads.start), 400, "PayloadEmpty",
                "a broadcast cannot start a Live Activity (aps.event must be update or end): start one with a "
                    + "push-to-start token"
            ),
            (
                LiveActivityPayloads.body(LiveActivityPayloads.with(LiveActivityPayloads.update, [("thread-id", "7")])),
                400, "PayloadEmpty", "aps.thread-id must be a string"
            ),
            (Self.payload(bytes: 5121), 413, "PayloadTooLarge", nil),
        ]
        for item in cases {
            let response = try await harness.broadcast(channelID: channel, body: item.body)
            #expect(response.status == item.status)
            #expect(response.reason == item.reason)
        }
        #expect(harness.simulator.received().filter { $0.kind == .broadcast }.map(\.detail) == cases.map(\.detail))
        // Up to 5120 bytes is a broadcast's size.
        #expect(try await harness.broadcast(channelID: channel, body: Self.payload(bytes: 5120)).status == 200)
    }

    /// A valid update padded to exactly `bytes` bytes.
    static func payload(bytes: Int) -> [UInt8] {
        let head = #"{"aps":{"timestamp":1750000060,"event":"update","content-state":{}},"pad":""#
        return Array((head + String(repeating: "x", count: bytes - head.utf8.count - 2) + #""}"#).utf8)
    }

    @Test func headers() async throws {
        let harness = try SimulatorHarness(channels: true)
        let stored = try await harness.createChannel(policy: 1)
        let unstored = try await harness.createChannel(policy: 0)
        let cases: [(channel: String?, replacing: [String: String?], reason: String?)] = [
            (stored, ["apns-push-type": nil], "MissingPushType"),
            (stored, ["apns-push-type": "alert"], "InvalidPushType"),
            (stored, ["apns-push-type": "LiveActivity-x"], "InvalidPushType"),
            // Apple's examples write both spellings.
            (stored, ["apns-push-type": "Liveactivity"], nil),
            (nil, [:], "MissingChannelId"),
            ("", [:], "MissingChannelId"),
            ("%%%", [:], "BadChannelId"),
            (stored, ["apns-priority": "1"], "BadPriority"),
            (stored, ["apns-priority": "11"], "BadPriority"),
            (stored, ["apns-priority": nil], nil),
            (stored, ["apns-priority": "5"], nil),
            (stored, ["apns-expiration": "soon"], "BadExpirationDate"),
            (stored, ["apns-expiration": "1750003600"], nil),
            (unstored, ["apns-expiration": "1750003600"], "BadExpirationDate"),
            (unstored, ["apns-expiration": "0"], nil),
            (unstored, ["apns-expiration": nil], nil),
            (stored, ["apns-request-id": "0190A6E4-8F4C-4CC1-B3A1-2F3B9E0C1D2E"], "BadMessageId"),
            // Not part of a broadcast: ignored.
            (stored, ["apns-topic": "something.else", "apns-id": "nonsense", "apns-collapse-id": "c"], nil),
        ]
        for item in cases {
            let response = try await harness.broadcast(
                channelID: item.channel, body: Self.update,
                replacing: item.replacing)
            #expect(response.status == (item.reason == nil ? 200 : 400), "\(item.replacing)")
            #expect(response.reason == item.reason, "\(item.replacing)")
        }
        let duplicate = try await harness.broadcast(
            channelID: stored, body: Self.update,
            adding: [HTTP2Header("apns-channel-id", stored)])
        #expect(duplicate.reason == "DuplicateHeaders")
    }

    @Test func pathsMethodsAndBundles() async throws {
        let harness = try SimulatorHarness(apnsTopics: ["app.herald.demo"], channels: true)
        let channel = try await harness.createChannel()
        let get = try await harness.broadcast(channelID: channel, body: [], method: "GET")
        #expect(get.status == 405)
        #expect(get.reason == "MethodNotAllowed")
        let path = try await harness.client.send(HTTP2Request(path: "/4/broadcasts/apps/", body: Self.update))
        #expect(path.status == 404)
        #expect(path.reason == "BadPath")
        let nested = try await harness.client.send(HTTP2Request(path: "/4/broadcasts/apps/a/b", body: Self.update))
        #expect(nested.reason == "BadPath")
        let suffixed = try await harness.broadcast(
            channelID: channel, body: Self.update,
            bundleID: "app.herald.demo.push-type.liveactivity")
        #expect(suffixed.status == 400)
        #expect(suffixed.reason == "TopicDisallowed")
        let mismatch = try await harness.broadcast(channelID: channel, body: Self.update, bundleID: "app.someone.else")
        #expect(mismatch.status == 403)
        #expect(mismatch.reason == "TopicMismatch")
        #expect(harness.simulator.received().filter { $0.kind == .broadcast }.count == 5)
    }

    @Test func badProviderTokensAreRefused() async throws {
        let harness = try SimulatorHarness(channels: true)
        let channel = try await harness.createChannel()
        let otherKey = try ES256SigningKey(
            pem: String(
                contentsOfFile: harness.credentials.serverKeyFile,
                encoding: .utf8))
        let forged = try SimulatorHarness.mint(issuedAt: harness.clock.now, key: otherKey)
        let response = try await harness.broadcast(channelID: channel, body: Self.update, jwt: forged)
        #expect(response.status == 403)
        #expect(response.reason == "InvalidProviderToken")
        let missing = try await harness.broadcast(
            channelID: channel, body: Self.update,
            replacing: ["authorization": nil])
        #expect(missing.reason == "MissingProviderToken")
        #expect(harness.simulator.received().last?.kind == .broadcast)
    }

    @Test("device pushes and broadcasts on one connection share its provider token")
    func oneConnectionOneToken() async throws {
        let harness = try SimulatorHarness(channels: true)
        let channel = try await harness.createChannel()
        #expect(try await harness.apns().status == 200)
        #expect(try await harness.broadcast(channelID: channel, body: Self.update).status == 200)
        harness.clock.advance(by: 60)
        let newer = try SimulatorHarness.mint(issuedAt: harness.clock.now)
        let response = try await harness.broadcast(channelID: channel, body: Self.update, jwt: newer)
        #expect(response.status == 429)
        #expect(response.reason == "TooManyProviderTokenUpdates")
    }

    @Test("a fault set for a channel id fails its broadcasts, and only requests that pass every check")
    func faultsApplyToChannelIDs() async throws {
        let harness = try SimulatorHarness(channels: true)
        let channel = try await harness.createChannel()
        let path = "/sim/faults/" + (channel.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? channel)
        #expect(try await harness.control("PUT", path, body: #"{"status":429,"times":1,"retryAfter":3}"#).status == 200)
        #expect(try await harness.broadcast(channelID: channel, body: []).reason == "PayloadEmpty")
        let throttled = try await harness.broadcast(
            channelID: channel, body: Self.update,
            replacing: ["apns-request-id": Self.requestID])
        #expect(throttled.status == 429)
        #expect(throttled.reason == "TooManyRequests")
        #expect(throttled.header("retry-after") == "3")
        #expect(throttled.header("apns-request-id") == Self.requestID)
        #expect(try await harness.broadcast(channelID: channel, body: Self.update).status == 200)

        harness.simulator.setFault(SimulatorFault(status: 400, times: 1), token: channel)
        #expect(try await harness.broadcast(channelID: channel, body: Self.update).reason == "ChannelNotRegistered")
        harness.simulator.setFault(SimulatorFault(status: 500, reason: "InternalServerError", times: 1), token: channel)
        #expect(try await harness.broadcast(channelID: channel, body: Self.update).status == 500)
        #expect(
            harness.simulator.received(token: channel).filter { $0.kind == .broadcast }.map(\.status)
                == [400, 429, 200, 400, 500])
    }
}
