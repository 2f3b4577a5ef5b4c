import APNs
import Foundation
import HeraldCore
import HeraldTestSupport
import Testing
import Worker

@testable import Simulator

/// Apple issues token-auth keys scoped to one environment, and answers a token signed with a key of the other
/// 403 BadEnvironmentKeyIdInToken. Against a production simulator and a sandbox one that both know the shared key
/// as production's alone and `sandboxKeyID` as the sandbox's: with the shared key only, the sandbox pauses by
/// itself while production delivers; with the sandbox's own key (HERALD_APNS_SANDBOX_KEY_FILE/_KEY_ID) both deliver,
/// which each simulator allows only when each environment signs with its own key.
@Suite(.requiresDatabase) struct EnvironmentKeyTests {
    static let sandboxKeyID = "SANDBOX001"

    /// An APNs simulator of `environment` that knows the test credentials' key id as production's alone and
    /// `sandboxKeyID` (the same .p8 under another id) as the sandbox's.
    func simulator(_ environment: APNsEnvironment, _ harness: WorkerHarness) throws -> Simulator {
        let credentials = harness.credentials
        let simulator = try Simulator(
            configuration: SimulatorConfiguration(
                tlsCertificateFile: credentials.serverCertificateFile, tlsKeyFile: credentials.serverKeyFile,
                apnsKeyFile: credentials.apnsKeyFile, apnsEnvironment: environment,
                apnsKeyEnvironments: [credentials.apnsKeyID: .production, Self.sandboxKeyID: .sandbox]))
        try simulator.start()
        return simulator
    }

    /// A worker sending to `production` and `sandbox`, its configuration then changed by `adjust`.
    func startWorker(
        _ harness: WorkerHarness, production: Simulator, sandbox: Simulator,
        _ adjust: (inout WorkerConfiguration) -> Void
    ) throws -> DeliveryWorker {
        try harness.startWorker {
            $0.apns?.productionURL = "https://127.0.0.1:\(production.port)"
            $0.apns?.sandboxURL = "https://127.0.0.1:\(sandbox.port)"
            adjust(&$0)
        }
    }

    /// Two users' deliveries to production, two to the sandbox.
    func queueBothEnvironments(_ harness: WorkerHarness) throws -> (production: [UUID], sandbox: [UUID]) {
        let queued = try harness.queue(users: 4)
        let production = Array(queued.deliveries.prefix(2))
        try harness.db.connection.query(
            "UPDATE deliveries SET environment = 'production' WHERE id = ANY($1)", [production])
        return (production, Array(queued.deliveries.suffix(2)))
    }

    @Test func aKeyOfTheOtherEnvironmentPausesTheSandboxAloneWhileProductionDelivers() async throws {
        let harness = try WorkerHarness()
        let (production, sandbox) = (try simulator(.production, harness), try simulator(.sandbox, harness))
        defer { [production, sandbox].forEach { $0.stop() } }
        let rows = try queueBothEnvironments(harness)
        let worker = try startWorker(harness, production: production, sandbox: sandbox) {
            $0.pauses.base = .milliseconds(300)
            $0.pauses.maximum = .seconds(1)
        }

        try await harness.waitUntil("the sandbox paused") {
            worker.pausedUpstreams["apns-sandbox"] == "BadEnvironmentKeyIdInToken"
        }
        try await harness.waitUntil("production delivered") {
            try rows.production.allSatisfy { try harness.db.outcome(of: $0)?.outcome == "sent" }
        }
        #expect(worker.pausedUpstreams.keys.sorted() == ["apns-sandbox"], "neither production nor APNs as a whole")
        let metrics = worker.metrics.render()
        #expect(metrics.contains(#"herald_worker_upstream_paused{upstream="apns-sandbox"} 1"#))
        #expect(metrics.contains(#"herald_worker_upstream_paused{upstream="apns-production"} 0"#))
        #expect(metrics.contains(#"herald_worker_upstream_paused{upstream="apns"} 0"#))
        #expect(!metrics.contains(harness.credentials.apnsKeyID), "the metrics never name the key")

        // The pause holds while probes are refused: nothing of the sandbox is failed, no attempt spent.
        func refused() -> Int { sandbox.received().filter { $0.reason == "BadEnvironmentKeyIdInToken" }.count }
        let refusedAtPause = refused()
        try await harness.waitUntil("another probe refused") { refused() > refusedAtPause }
        for id in rows.sandbox { #expect(try harness.db.outcome(of: id) == nil) }
        #expect(
            try harness.db.count("SELECT count(*) FROM deliveries WHERE environment = 'sandbox' AND attempts > 1") == 0)
        #expect(production.received().count { $0.status == 200 } == rows.production.count)
    }

    @Test func theSandboxsOwnKeySignsTheSandboxsRequestsAndTheSharedKeyProductions() async throws {
        let harness = try WorkerHarness()
        let (production, sandbox) = (try simulator(.production, harness), try simulator(.sandbox, harness))
        defer { [production, sandbox].forEach { $0.stop() } }
        let rows = try queueBothEnvironments(harness)
        let worker = try startWorker(harness, production: production, sandbox: sandbox) {
            $0.apns?.sandboxKey = APNsKey(file: harness.credentials.apnsKeyFile, id: Self.sandboxKeyID)
        }

        try await harness.waitUntil("everything delivered") { try harness.outstanding() == 0 }
        for id in rows.production + rows.sandbox { #expect(try harness.db.outcome(of: id)?.outcome == "sent") }
        #expect(worker.pausedUpstreams.isEmpty)
        // Each simulator refuses the other environment's key: every request accepted means each signed with its own.
        #expect(production.received().map(\.status) == [200, 200])
        #expect(sandbox.received().map(\.status) == [200, 200])
    }
}
