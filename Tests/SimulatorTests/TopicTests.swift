import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import Simulator

/// `--apns-topics` (TopicDisallowed) and token ownership (DeviceTokenNotForTopic), as APNs answers them.
@Suite("APNs topics and token ownership")
struct TopicTests {
    static let otherToken = String(repeating: "cd", count: 32)
    static let topics = ["app.herald.demo", "app.herald.other"]

    @Test("the team's bundle ids and Apple's push-type topics of them are allowed, nothing else")
    func topicPolicy() {
        let policy = TopicPolicy(bundles: Self.topics)
        #expect(policy.bundle(of: "app.herald.demo") == "app.herald.demo")
        #expect(policy.bundle(of: "app.herald.demo.push-type.liveactivity") == "app.herald.demo")
        #expect(policy.bundle(of: "app.herald.other.push-type.widgets") == "app.herald.other")
        #expect(policy.bundle(of: "app.herald.demo.voip") == "app.herald.demo")
        #expect(policy.bundle(of: "app.herald.demo.voip-ptt") == "app.herald.demo")
        #expect(policy.bundle(of: "app.herald.demo.complication") == "app.herald.demo")
        #expect(policy.bundle(of: "app.herald.demo.pushkit.fileprovider") == "app.herald.demo")
        #expect(policy.bundle(of: "app.herald.demo.location-query") == "app.herald.demo")
        for refused in [
            "app.herald", "app.herald.demo2", "app.herald.demo.extension", "app.herald.demo.push-type.",
            "app.herald.demo.push-type.a.b", "com.elsewhere", "app.herald.demo.voip.x", "",
        ] {
            #expect(policy.bundle(of: refused) == nil, "\(refused)")
        }
        // Without a list every topic is allowed; the bundle is the topic without a push-type suffix.
        let open = TopicPolicy()
        #expect(!open.restricts)
        #expect(open.bundle(of: "com.anything") == "com.anything")
        #expect(open.bundle(of: "com.anything.push-type.liveactivity") == "com.anything")
        #expect(open.bundle(of: "com.anything.voip") == "com.anything")
        #expect(open.bundle(of: ".push-type.liveactivity") == ".push-type.liveactivity")
    }

    @Test("a topic outside --apns-topics is 400 TopicDisallowed, and recorded")
    func topicOutsideTheListIsDisallowed() async throws {
        let harness = try SimulatorHarness(apnsTopics: Self.topics)
        for topic in ["com.someone.else", "app.herald.demo.widget", "app.herald"] {
            let response = try await harness.apns(replacing: ["apns-topic": topic])
            #expect(response.status == 400)
            #expect(response.reason == "TopicDisallowed", "\(topic)")
            #expect(harness.simulator.received().last?.reason == "TopicDisallowed")
        }
        #expect(try await harness.apns().status == 200)
        let liveActivity = try await harness.apns(
            replacing: [
                "apns-push-type": "liveactivity", "apns-topic": "app.herald.demo.push-type.liveactivity",
                "apns-priority": "5",
            ], body: LiveActivityPayloads.body(LiveActivityPayloads.update))
        #expect(liveActivity.status == 200)
    }

    @Test("without --apns-topics every topic is accepted, and tokens are not tied to the first one")
    func withoutAListEveryTopicGoes() async throws {
        let harness = try SimulatorHarness()
        #expect(try await harness.apns(replacing: ["apns-topic": "com.someone.else"]).status == 200)
        #expect(try await harness.apns(replacing: ["apns-topic": "app.herald.demo"]).status == 200)
    }

    @Test("with --apns-topics a token belongs to the bundle of its first accepted request")
    func firstAcceptedRequestBindsTheToken() async throws {
        let harness = try SimulatorHarness(apnsTopics: Self.topics)
        // A refused first request binds nothing.
        #expect(try await harness.apns(replacing: ["apns-topic": "app.herald.other"], body: []).status == 400)
        #expect(try await harness.apns(replacing: ["apns-topic": "app.herald.demo"]).status == 200)
        let wrong = try await harness.apns(replacing: ["apns-topic": "app.herald.other"])
        #expect(wrong.status == 400)
        #expect(wrong.reason == "DeviceTokenNotForTopic")
        // The same app's push-type topics are the same app; the token in upper case is the same token.
        let liveActivity = try await harness.apns(
            token: SimulatorHarness.deviceToken.uppercased(),
            replacing: [
                "apns-push-type": "liveactivity", "apns-topic": "app.herald.demo.push-type.liveactivity",
                "apns-priority": "10",
            ], body: LiveActivityPayloads.body(LiveActivityPayloads.update))
        #expect(liveActivity.status == 200)
        // Another token is free to belong to the other app.
        #expect(
            try await harness.apns(token: Self.otherToken, replacing: ["apns-topic": "app.herald.other"]).status == 200)
        #expect(try await harness.apns(token: Self.otherToken).reason == "DeviceTokenNotForTopic")

        let (status, owners) = try await harness.control("GET", "/sim/tokens")
        #expect(status == 200)
        #expect(owners[SimulatorHarness.deviceToken]?["bundleId"] == .string("app.herald.demo"))
        #expect(owners[SimulatorHarness.deviceToken]?["source"] == .string("first-request"))
        #expect(owners[Self.otherToken]?["bundleId"] == .string("app.herald.other"))
        // Forgetting the owners lets the token start over.
        #expect(try await harness.control("DELETE", "/sim/tokens").json["cleared"] == .number(2))
        #expect(try await harness.apns(replacing: ["apns-topic": "app.herald.other"]).status == 200)
    }

    @Test("PUT /sim/tokens/{token} binds a token to an app, with or without --apns-topics")
    func boundTokenRefusesOtherApps() async throws {
        for topics in [nil, Self.topics] {
            let harness = try SimulatorHarness(apnsTopics: topics)
            let (status, json) = try await harness.control(
                "PUT", "/sim/tokens/\(SimulatorHarness.deviceToken.uppercased())",
                body: #"{"bundleId":"app.herald.other"}"#)
            #expect(status == 200)
            #expect(json["token"] == .string(SimulatorHarness.deviceToken))
            let response = try await harness.apns()
            #expect(response.status == 400)
            #expect(response.reason == "DeviceTokenNotForTopic")
            #expect(harness.simulator.received().last?.reason == "DeviceTokenNotForTopic")
            #expect(try await harness.apns(replacing: ["apns-topic": "app.herald.other"]).status == 200)
            #expect(
                try await harness.control("GET", "/sim/tokens").json[SimulatorHarness.deviceToken]?["source"]
                    == .string("bound"))
            // A token nobody bound still goes anywhere the list allows.
            #expect(try await harness.apns(token: Self.otherToken).status == 200)
            #expect(
                try await harness.control("DELETE", "/sim/tokens/\(SimulatorHarness.deviceToken)").json["cleared"]
                    == .number(1))
            #expect(try await harness.apns(replacing: ["apns-topic": "app.herald.other"]).status == 200)
        }
    }

    @Test("the in-process API binds too")
    func inProcessBinding() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.bindToken(SimulatorHarness.deviceToken, bundleID: "app.herald.other")
        #expect(try await harness.apns().reason == "DeviceTokenNotForTopic")
        harness.simulator.clearTokenOwners()
        #expect(try await harness.apns().status == 200)
    }

    @Test(
        "bad token-binding requests are 400 in the control API's shape",
        arguments: [
            ("PUT", "/sim/tokens/xyz", #"{"bundleId":"app.a"}"#),
            ("PUT", "/sim/tokens/\(String(repeating: "ab", count: 32))", #"{"bundle":"app.a"}"#),
            ("PUT", "/sim/tokens/\(String(repeating: "ab", count: 32))", #"{"bundleId":"app a"}"#),
            ("PUT", "/sim/tokens/\(String(repeating: "ab", count: 32))", #"{"bundleId":"app.a","x":1}"#),
            ("PUT", "/sim/tokens/\(String(repeating: "ab", count: 32))", "not json"),
        ])
    func badBindings(_ method: String, _ path: String, _ body: String) async throws {
        let harness = try SimulatorHarness()
        let (status, json) = try await harness.control(method, path, body: body)
        #expect(status == 400)
        #expect(json["error"]?.stringValue?.isEmpty == false)
        #expect(try await harness.control("GET", "/sim/tokens").json == .object([]))
        #expect(try await harness.control("POST", "/sim/tokens").status == 405)
    }

    @Test("learned owners are bounded")
    func learnedOwnersAreBounded() {
        let owners = TokenOwners(learns: true)
        var refused = 0
        for index in 0..<TokenOwners.maxLearned
        where !owners.admit(token: String(index, radix: 16)[...], bundleID: "app.a") {
            refused += 1
        }
        #expect(refused == 0)
        #expect(!owners.admit(token: "0", bundleID: "app.b"))
        // One more token: the table is full, so every learned owner is forgotten first.
        #expect(owners.admit(token: "new"[...], bundleID: "app.a"))
        #expect(owners.admit(token: "0", bundleID: "app.b"))
        #expect(owners.all().count == 2)
    }
}
