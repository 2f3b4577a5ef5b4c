import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Postgres
import Store
import Testing
import Worker

/// A webhook secret rotated with an overlap (PartnerStore.rotateWebhookSecret, functions/webhook_claim.sql): while
/// it lasts the worker signs each event with both secrets, the new one first, so a receiver holding either accepts
/// it; once it is ended, past its end or cleared by a new URL, one signature again.
@Suite("Webhook secret overlap", .requiresDatabase)
struct WebhookSecretOverlapTests {
    static let oldSecret = WebhookTests.secret
    static let newSecret = "whsec_" + String(repeating: "cd", count: 32)

    /// The `t` and every `v1` of a `Herald-Signature`, in order.
    static func parts(_ header: String) -> (timestamp: Int?, signatures: [String]) {
        var timestamp: Int?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int(pair[1]) }
            if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        return (timestamp, signatures)
    }

    /// HMAC-SHA256 of `"<t>.<body>"` as a receiver computes it.
    static func expected(_ secret: String, _ timestamp: Int, _ body: [UInt8]) -> String {
        Digest.hex(Digest.hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + body))
    }

    static func verifies(_ received: WebhookTests.Receiver.Received, with secret: String) -> Bool {
        WebhookSignature.verify(
            header: received.signature, secret: secret, body: received.body,
            now: Int(Date().timeIntervalSince1970))
    }

    /// A partner whose webhook goes to `receiver`, signed with `oldSecret`, and its store.
    static func partner(_ harness: WorkerHarness, _ receiver: WebhookTests.Receiver) throws
        -> Partner
    {
        let partner = try harness.db.partner()
        try WebhookTests.setWebhook(harness, partner: partner.id, url: receiver.url)
        let pool = PostgresPool(configuration: .init(url: harness.db.url, maxConnections: 1))
        return (partner.id, PartnerStore(pool: pool), pool)
    }

    /// Runs `body` with a worker harness, a webhook receiver and a partner whose webhook goes to it, then stops them.
    typealias Partner = (id: UUID, store: PartnerStore, pool: PostgresPool)

    static func withPartner(_ body: (WorkerHarness, WebhookTests.Receiver, Partner) throws -> Void) throws {
        let harness = try WorkerHarness()
        let receiver = try WebhookTests.Receiver()
        defer { receiver.stop() }
        let partner = try Self.partner(harness, receiver)
        defer { partner.pool.close() }
        try body(harness, receiver, partner)
    }

    /// One completed request of the partner (nothing to send: its event is written at once), then its webhook.
    static func nextWebhook(_ harness: WorkerHarness, _ receiver: WebhookTests.Receiver, partner: UUID) throws
        -> WebhookTests.Receiver.Received
    {
        let count = receiver.all.count
        _ = try harness.db.request(partner: partner, deliveries: 0)
        try harness.waitUntilBlocking("the webhook") { receiver.all.count == count + 1 }
        return receiver.all[count]
    }

    @Test("during the overlap a webhook carries two v1=, the new secret's first, each verifiable; ended, one")
    func twoSignaturesThenOne() throws {
        try Self.withPartner { harness, receiver, partner in
            let rotated = try #require(
                try partner.store.rotateWebhookSecret(
                    id: partner.id, secret: Self.newSecret,
                    previousSecretValidSeconds: 3_600))
            let until = try #require(rotated.previousWebhookSecretExpiresAt)
            #expect(abs(until.timeIntervalSinceNow - 3_600) < 60)
            let worker = try WebhookTests.startWorker(harness)
            defer { worker.drain() }

            let during = try Self.nextWebhook(harness, receiver, partner: partner.id)
            let header = Self.parts(during.signature)
            let timestamp = try #require(header.timestamp)
            #expect(
                header.signatures == [
                    Self.expected(Self.newSecret, timestamp, during.body),
                    Self.expected(Self.oldSecret, timestamp, during.body),
                ], "\(during.signature)")
            #expect(Self.verifies(during, with: Self.newSecret) && Self.verifies(during, with: Self.oldSecret))
            #expect(!Self.verifies(during, with: Self.newSecret + "x"))

            let ended = try #require(try partner.store.endPreviousWebhookSecret(id: partner.id))
            #expect(ended.previousWebhookSecretExpiresAt == nil)
            let after = try Self.nextWebhook(harness, receiver, partner: partner.id)
            let afterHeader = Self.parts(after.signature)
            let afterTimestamp = try #require(afterHeader.timestamp)
            #expect(afterHeader.signatures == [Self.expected(Self.newSecret, afterTimestamp, after.body)])
            #expect(Self.verifies(after, with: Self.newSecret) && !Self.verifies(after, with: Self.oldSecret))
        }
    }

    @Test("a rotation without overlap signs with the new secret only, at once")
    func noOverlap() throws {
        try Self.withPartner { harness, receiver, partner in
            let rotated = try #require(
                try partner.store.rotateWebhookSecret(
                    id: partner.id, secret: Self.newSecret,
                    previousSecretValidSeconds: 0))
            #expect(rotated.previousWebhookSecretExpiresAt == nil)
            let worker = try WebhookTests.startWorker(harness)
            defer { worker.drain() }
            let received = try Self.nextWebhook(harness, receiver, partner: partner.id)
            #expect(Self.parts(received.signature).signatures.count == 1, "\(received.signature)")
            #expect(Self.verifies(received, with: Self.newSecret) && !Self.verifies(received, with: Self.oldSecret))
        }
    }

    @Test("past the overlap's end one v1= again (the worker's clock a day ahead)")
    func pastTheEnd() throws {
        try Self.withPartner { harness, receiver, partner in
            _ = try partner.store.rotateWebhookSecret(
                id: partner.id, secret: Self.newSecret,
                previousSecretValidSeconds: 3_600)
            let worker = try WebhookTests.startWorker(harness, clock: WebhookTests.LaterClock())
            defer { worker.drain() }
            _ = try harness.db.request(partner: partner.id, deliveries: 0)
            try harness.waitUntilBlocking("the webhook") { receiver.all.count == 1 }
            let received = receiver.all[0]
            let header = Self.parts(received.signature)
            let timestamp = try #require(header.timestamp)
            #expect(
                header.signatures == [Self.expected(Self.newSecret, timestamp, received.body)],
                "\(received.signature)")
        }
    }

    @Test("a new webhookUrl ends the overlap: its webhooks carry one v1=, and no old secret is kept")
    func newURLClearsThePreviousSecret() throws {
        try Self.withPartner { harness, receiver, partner in
            _ = try partner.store.rotateWebhookSecret(
                id: partner.id, secret: Self.newSecret,
                previousSecretValidSeconds: 3_600)
            let thirdSecret = "whsec_" + String(repeating: "ef", count: 32)
            let moved = try #require(
                try partner.store.update(
                    id: partner.id,
                    PartnerChanges(
                        webhook: .set(url: receiver.url + "?moved", secret: thirdSecret))))
            #expect(moved.previousWebhookSecretExpiresAt == nil)
            #expect(
                try harness.db.count(
                    """
                    SELECT count(*) FROM partners
                     WHERE id = $1 AND previous_webhook_secret IS NULL AND previous_webhook_secret_expires_at IS NULL
                    """, [partner.id]) == 1)
            let worker = try WebhookTests.startWorker(harness)
            defer { worker.drain() }
            let received = try Self.nextWebhook(harness, receiver, partner: partner.id)
            #expect(Self.parts(received.signature).signatures.count == 1, "\(received.signature)")
            #expect(Self.verifies(received, with: thirdSecret))
            #expect(!Self.verifies(received, with: Self.newSecret) && !Self.verifies(received, with: Self.oldSecret))
        }
    }
}
