import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

@testable import Simulator

/// Android 16 Live Updates end to end: the partner's start and update through the intake, the worker's send and
/// the simulator's record of each FCM message, which carries what the app needs to promote the notification,
/// signed with the rest.
@Suite(.requiresDatabase, .serialized)
struct AndroidLiveUpdateFlowTests {
    /// The data of the FCM messages the Pixel received, oldest first.
    static func messages(_ harness: LiveActivityHarness, _ token: String) -> [JSONValue] {
        harness.fcmMessages(to: token).compactMap(LiveActivityHarness.data)
    }

    /// Whether `sig` is the HMAC of every other pair as received (the check the app makes).
    static func signatureHolds(_ data: JSONValue) throws -> Bool {
        let members = try #require(data.objectMembers)
        let signed = members.filter { $0.key != "kid" && $0.key != "sig" }.map { ($0.key, $0.value.stringValue ?? "") }
        let mac = Digest.hmacSHA256(
            key: LiveActivityHarness.signingKey, message: SignedEnvelope.canonicalBytes(signed))
        return data["sig"]?.stringValue == Base64URL.encode(mac)
    }

    @Test func aStatusActivitysChipTextReachesThePixelSigned() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(iphone: false, sessionWith: [partner.miniApp])
        let fcm = try #require(user.fcmToken)
        try harness.workers.startWorker()
        let id = try harness.activityID(
            harness.start(
                partner, user, template: "status",
                state: #"{"statusLabel":"Waiting for confirmations","statusVariant":"pending"}"#))
        try await harness.workers.waitUntil("the start on the Pixel") { Self.messages(harness, fcm).count == 1 }
        try harness.expect(harness.update(partner, id, #"{"state":{"statusLabel":"Paid"}}"#), [200])
        try await harness.workers.waitUntil("the update on the Pixel") { Self.messages(harness, fcm).count == 2 }

        let (start, update) = (Self.messages(harness, fcm)[0], Self.messages(harness, fcm)[1])
        #expect(start["event"]?.stringValue == "start")
        #expect(start["shortCriticalText"]?.stringValue == "Waitin…")
        #expect(update["event"]?.stringValue == "update")
        #expect(update["shortCriticalText"]?.stringValue == "Paid")
        #expect(update["whenEpochMillis"] == nil && update["progressSegments"] == nil)
        #expect(try Self.signatureHolds(start) && Self.signatureHolds(update))
        #expect(harness.fcmMessages(to: fcm).allSatisfy { $0.status == 200 })
        // Silent, so NORMAL: a HIGH message must end in a visible notification (docs/live-activities.md).
        #expect(harness.fcmMessages(to: fcm).last?.payload?["message"]?["android"]?["priority"] == .string("NORMAL"))
    }

    @Test func progressAndCountdownCarryTheBarAndTheChronometer() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let other = try harness.partner()
        let user = try harness.user(iphone: false, sessionWith: [partner.miniApp, other.miniApp])
        let fcm = try #require(user.fcmToken)
        try harness.workers.startWorker()
        let progress = try harness.activityID(harness.start(partner, user))
        let deadline = "2030-01-01T00:00:00Z"
        _ = try harness.activityID(
            harness.start(other, user, template: "countdown", state: #"{"deadline":"\#(deadline)"}"#))
        try await harness.workers.waitUntil("both starts on the Pixel") { Self.messages(harness, fcm).count == 2 }
        try harness.expect(harness.update(partner, progress, #"{"state":{"currentStage":1,"progress":0.5}}"#), [200])
        try await harness.workers.waitUntil("the update on the Pixel") { Self.messages(harness, fcm).count == 3 }

        let messages = Self.messages(harness, fcm)
        let countdown = try #require(messages.first { $0["template"]?.stringValue == "countdown" })
        #expect(countdown["whenEpochMillis"]?.stringValue == "1893456000000")
        #expect(countdown["chronometerCountDown"]?.stringValue == "true")
        #expect(countdown["shortCriticalText"] == nil)
        let update = try #require(messages.last)
        #expect(update["activityId"]?.stringValue == progress)
        #expect(update["shortCriticalText"]?.stringValue == "2/3")
        #expect(
            update["progressSegments"]?.stringValue == #"[{"length":100},{"length":100},{"length":100}]"#)
        #expect(update["progressValue"]?.stringValue == "150")
        #expect(update["progressMax"]?.stringValue == "300")
        #expect(try messages.allSatisfy(Self.signatureHolds))
    }
}
