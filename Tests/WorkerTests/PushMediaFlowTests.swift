import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing

/// A push's media from the partner's upload through the intake, the outbox and a worker to the simulator: both
/// phones receive the signed `attachmentUrl` (APNs with `mutable-content`, so the notification service extension
/// runs), both envelopes cover it, and the URL answers the re-encoded image from Herald's own origin.
@Suite(.requiresDatabase, .serialized)
struct PushMediaFlowTests {
    static let publicURL = "https://herald.test"

    @Test("a push with mediaId reaches both phones with a signed attachmentUrl that serves the re-encoded image")
    func attachmentReachesBothPhones() async throws {
        let harness = try LiveActivityHarness(configure: { $0.rules.publicURL = Self.publicURL })
        let partner = try harness.partner()
        let user = try harness.user()
        let uploaded = try harness.expect(
            TestHTTPClient.send(
                port: harness.port, method: "POST", path: "/api/partners/media",
                headers: [("Content-Type", "image/png"), ("Authorization", "Bearer \(partner.apiKey)")],
                body: MediaSamples.pngWithText), [201])
        let upload = try JSONParser.parse(uploaded.body)
        let mediaID = try #require(upload["mediaId"]?.stringValue)
        let url = try #require(upload["url"]?.stringValue)
        try harness.workers.startWorker()
        _ = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Receipt","body":"b","#
                    + #""mediaId":"\#(mediaID)"}"#), [202])
        func received(_ service: SimulatorService) -> SimulatorRecord? {
            harness.simulator.received().first { $0.service == service && $0.status == 200 }
        }
        try await harness.workers.waitUntil("the push on both phones") {
            received(.apns) != nil && received(.fcm) != nil
        }
        let (apnsRecord, fcmRecord) = (try #require(received(.apns)), try #require(received(.fcm)))
        let apns = try JSONParser.parse(apnsRecord.body)
        let fcm = try #require(try JSONParser.parse(fcmRecord.body)["message"]?["data"])
        #expect(apns["attachmentUrl"] == .string(url))
        #expect(apns["aps"]?["mutable-content"] == .number(1))
        #expect(fcm["attachmentUrl"] == .string(url))

        // Both envelopes cover the URL: the reference verifier accepts them, and refuses another URL.
        let now = Int(Date().timeIntervalSince1970)
        for (name, payload) in [("apns", apns), ("fcm", fcm)] {
            let genuine = try EnvelopeVerificationTests.verify(payload, user: user.id, now: now)
            #expect(genuine.status == 0 && genuine.output == "v1 ok\nv2 ok\n", "\(name): \(genuine.output)")
            let swapped = EnvelopeVerificationTests.edited(
                payload, ["attachmentUrl"], .string("https://evil.test/tracker.png"))
            let result = try EnvelopeVerificationTests.verify(swapped, user: user.id, now: now)
            #expect(result.status == 1 && result.output.contains("v1 bad signature"), "\(name): \(result.output)")
            #expect(result.output.contains("v2 bad signature"), "\(name): \(result.output)")
        }

        // What the extension downloads: the re-encoded PNG, from the intake, without credentials.
        #expect(url.hasPrefix(Self.publicURL + "/media/\(mediaID)/"))
        let image = try TestHTTPClient.send(
            port: harness.port, method: "GET", path: String(url.dropFirst(Self.publicURL.count)))
        #expect(image.status == 200 && image.headers["content-type"] == "image/png")
        #expect(image.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(!MediaSamples.contains(image.body, MediaSamples.marker))
    }
}
