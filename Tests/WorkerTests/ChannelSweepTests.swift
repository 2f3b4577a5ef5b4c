import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// A broadcast channel APNs holds and Herald has no record of (a create whose answer was lost, or one made behind
/// Herald's back) is found by the channel sweep (`GET /1/apps/{bundleId}/all-channels` on the simulator's channel
/// management port) and deleted once a second sweep confirms it; Herald's own channels stay.
@Suite(.requiresDatabase, .serialized)
struct ChannelSweepTests {
    /// Creates a channel for the app on the simulator's channel management port, as another client of the same
    /// key would: Herald never hears of it. Returns its APNs id.
    func createBehindHeraldsBack(_ harness: LiveActivityHarness) async throws -> String {
        let credentials = harness.workers.credentials
        let client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(url: harness.workers.channelURL, caFile: credentials.caFile))
        defer { client.shutdown() }
        let jwt = try ProviderTokenMint.mint(
            keyFile: credentials.apnsKeyFile, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID)
        let response = try await client.send(
            HTTP2Request(
                method: "POST", path: "/1/apps/\(credentials.apnsTopic)/channels",
                headers: [HTTP2Header("authorization", "bearer \(jwt)")],
                body: Array(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8)))
        #expect(response.status == 201)
        return try #require(response.header("apns-channel-id"))
    }

    @Test func aChannelHeraldHasNoRecordOfIsDeletedAndHeraldsOwnStays() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(displayName: "Drops")
        let orphan = try await createBehindHeraldsBack(harness)
        let worker = try harness.workers.startWorker {
            $0.channels.sweep.enabled = true
            $0.channels.sweep.confirmation = .milliseconds(500)
        }

        let opened = try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels", token: partner.apiKey,
                json: LiveChannelTests.openBody, headers: [("Idempotency-Key", "sweep-1")]), [201])
        let id = try #require(try JSONParser.parse(opened.body)["channelId"]?.stringValue)
        try await harness.workers.waitUntil("Herald's channel open") {
            try LiveChannelTests.status(harness, partner, id) == "open"
        }
        let ours = try #require(harness.simulator.channels().first { $0.id != orphan }?.id)

        try await harness.workers.waitUntil("the orphan deleted") { worker.metrics.channelOrphansDeleted == 1 }
        #expect(harness.simulator.channels().map(\.id) == [ours])
        #expect(try LiveChannelTests.status(harness, partner, id) == "open", "Herald's channel is untouched")
        let deletes = harness.simulator.received().filter { $0.kind == .channelDelete }
        #expect(deletes.map(\.token) == [orphan])
        #expect(harness.simulator.received().contains { $0.kind == .channelList })

        // The gauges count what the sweep left: Herald's channel, nothing unknown.
        let metrics = worker.metrics.render()
        #expect(metrics.contains("herald_worker_channel_orphans_deleted_total 1"))
        #expect(metrics.contains("herald_worker_channels_at_apns 1"))
        #expect(metrics.contains("herald_worker_channels_unknown 0"))
    }

    @Test("a channel found unknown once is kept until a sweep a confirmation later finds it again")
    func aChannelSeenUnknownOnceIsNotDeleted() async throws {
        let harness = try LiveActivityHarness()
        let orphan = try await createBehindHeraldsBack(harness)
        // A create in flight looks like this at the first sweep: its record has not landed yet.
        let worker = try harness.workers.startWorker {
            $0.channels.sweep.enabled = true
            $0.channels.sweep.confirmation = .seconds(3_600)
        }
        try await harness.workers.waitUntil("the first sweep") { worker.metrics.channelSweeps("done") >= 1 }
        #expect(harness.simulator.channels().map(\.id) == [orphan])
        #expect(worker.metrics.channelOrphansDeleted == 0)
        #expect(harness.simulator.received().filter { $0.kind == .channelDelete }.isEmpty)
        let metrics = worker.metrics.render()
        #expect(metrics.contains("herald_worker_channels_unknown 1"))
        #expect(metrics.contains(#"herald_worker_channel_sweeps_total{outcome="done"} 1"#))
    }

    @Test("a create that got no answer starts a sweep at once, not at the next interval")
    func aCreateWithoutAnAnswerSweepsAtOnce() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(displayName: "Drops")
        // Nothing listens there: every channel call fails without an answer (connect_failed).
        let worker = try harness.workers.startWorker {
            $0.channels.managementURL = "https://127.0.0.1:1"
            $0.channels.sweep.enabled = true
            $0.channels.sweep.interval = .seconds(3_600)
            $0.channels.sweep.confirmation = .seconds(3_600)
        }
        try await harness.workers.waitUntil("the start's sweep") { worker.metrics.channelSweeps("failed") == 1 }
        _ = try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels", token: partner.apiKey,
                json: LiveChannelTests.openBody, headers: [("Idempotency-Key", "sweep-2")]), [201])
        try await harness.workers.waitUntil("the create retried") {
            worker.metrics.channelCalls("create", outcome: "retry") >= 1
        }
        try await harness.workers.waitUntil("a sweep after it") { worker.metrics.channelSweeps("failed") >= 2 }
    }
}
