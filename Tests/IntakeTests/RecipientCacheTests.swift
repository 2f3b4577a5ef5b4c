import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

@testable import Intake
@testable import Store

/// The recipient cache as a value: per tenant, bounded, and a guess the caller replaces.
@Suite struct RecipientCacheTests {
    static func email(_ address: String, _ user: String) -> ResolvedIdentifier {
        ResolvedIdentifier(kind: .email, identifier: address, userID: user)
    }

    /// Learns emails that each resolved to a user.
    static func learn(_ cache: RecipientCache, tenant: String = "t", _ resolved: [ResolvedIdentifier]) {
        cache.learn(tenant: tenant, emails: resolved.map(\.identifier), wallets: [], resolved: resolved)
    }

    @Test("known only when every identifier is: each user once, in the order first named, none for nobody's")
    func everyIdentifierKnown() {
        let cache = RecipientCache(capacity: 100)
        cache.learn(
            tenant: "t", emails: ["a@x.io", "b@x.io", "nobody@x.io"], wallets: ["0xab"],
            resolved: [
                Self.email("a@x.io", "alice"), Self.email("b@x.io", "bob"),
                ResolvedIdentifier(kind: .wallet, identifier: "0xab", userID: "alice"),
            ])
        #expect(
            cache.users(tenant: "t", emails: ["b@x.io", "a@x.io"], wallets: ["0xab"])?.map(\.userID) == [
                "bob", "alice",
            ])
        #expect(cache.users(tenant: "t", emails: ["a@x.io", "c@x.io"], wallets: [])?.map(\.userID) == nil)
        // An identifier that resolved to nobody is known, and names no user.
        #expect(cache.users(tenant: "t", emails: ["nobody@x.io", "a@x.io"], wallets: [])?.map(\.userID) == ["alice"])
        #expect(cache.users(tenant: "t", emails: ["nobody@x.io"], wallets: [])?.map(\.userID) == [])
        // An email and a wallet with the same text are different identifiers.
        #expect(cache.users(tenant: "t", emails: ["0xab"], wallets: [])?.map(\.userID) == nil)
        // What is learnt later replaces the guess (the email moved to another user).
        Self.learn(cache, [Self.email("a@x.io", "carol")])
        #expect(cache.users(tenant: "t", emails: ["a@x.io"], wallets: [])?.map(\.userID) == ["carol"])
        cache.forget(tenant: "t", emails: ["a@x.io"], wallets: [])
        #expect(cache.users(tenant: "t", emails: ["a@x.io"], wallets: [])?.map(\.userID) == nil)
    }

    @Test("each user comes with the locale the resolution gave, replaced by what is learnt later")
    func locales() {
        let cache = RecipientCache(capacity: 100)
        Self.learn(
            cache,
            [
                ResolvedIdentifier(kind: .email, identifier: "a@x.io", userID: "alice", locale: "de"),
                Self.email("b@x.io", "bob"),
            ])
        #expect(
            cache.users(tenant: "t", emails: ["a@x.io", "b@x.io"], wallets: []) == [
                IntakePush.Recipient(userID: "alice", locale: "de"), IntakePush.Recipient(userID: "bob", locale: nil),
            ])
        Self.learn(cache, [ResolvedIdentifier(kind: .email, identifier: "a@x.io", userID: "alice", locale: "pt-BR")])
        #expect(
            cache.users(tenant: "t", emails: ["a@x.io"], wallets: []) == [
                IntakePush.Recipient(userID: "alice", locale: "pt-BR")
            ])
    }

    @Test("another tenant's partner never reads an entry: the tenant is part of the key")
    func perTenant() {
        let cache = RecipientCache(capacity: 100)
        Self.learn(cache, tenant: "acme", [Self.email("a@x.io", "alice")])
        #expect(cache.users(tenant: "globex", emails: ["a@x.io"], wallets: [])?.map(\.userID) == nil)
        #expect(cache.users(tenant: "acme", emails: ["a@x.io"], wallets: [])?.map(\.userID) == ["alice"])
    }

    @Test("bounded by its capacity: the entries in use stay, the others age out; 0 keeps nothing")
    func bounded() {
        let cache = RecipientCache(capacity: 10)
        Self.learn(cache, [Self.email("kept@x.io", "kept")])
        for index in 0..<100 {
            Self.learn(cache, [Self.email("\(index)@x.io", "u\(index)")])
            #expect(cache.users(tenant: "t", emails: ["kept@x.io"], wallets: [])?.map(\.userID) == ["kept"])
            #expect(cache.count <= 10)
        }
        #expect(cache.users(tenant: "t", emails: ["0@x.io"], wallets: [])?.map(\.userID) == nil)
        #expect(cache.users(tenant: "t", emails: ["99@x.io"], wallets: [])?.map(\.userID) == ["u99"])
        let off = RecipientCache(capacity: 0)
        Self.learn(off, [Self.email("a@x.io", "alice")])
        #expect(off.users(tenant: "t", emails: ["a@x.io"], wallets: [])?.map(\.userID) == nil && off.count == 0)
    }
}

/// Through HTTP, on an intake of its own (its counters and cache are this suite's): a push to a recipient the intake
/// has seen is written by the one batch statement with slots signed for the cached user; a stale entry still reaches
/// the right user, signed for that user.
@Suite("Push slots from the recipient cache", .serialized, .requiresDatabase)
struct RecipientCacheFlowTests {
    /// The counters of `intake` that say which path its pushes took.
    static func paths(_ intake: IntakeHarness) throws -> (batched: Int, resubmitted: Int, rendered: Int) {
        let text = try intake.scrapeMetrics().text
        func value(_ name: String) -> Int {
            let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return Int(line?.split(separator: " ").last ?? "") ?? -1
        }
        return (
            value("herald_intake_push_batched_total"), value("herald_intake_push_resubmitted_total"),
            value("herald_intake_push_rendered_total")
        )
    }

    /// The stored payloads of a request's deliveries, the signed part of each (APNs' body, FCM's `data`).
    static func payloads(_ requestID: String) throws -> [(user: String, signed: JSONValue)] {
        try DB.rows("SELECT user_id, service, payload FROM deliveries WHERE request_id = $1::uuid", [requestID])
            .map { row in
                let payload = try JSONParser.parse(Array(try row.string(2).utf8))
                return (try row.string(0), try row.string(1) == "apns" ? payload : payload["data"] ?? .null)
            }
    }

    static func verify(_ payload: JSONValue, for user: String) -> SignedEnvelope.V2Failure? {
        SignedEnvelope.verifyV2(payload, recipient: user, now: Date()) { kid, message in
            kid == IntakeHarness.signingKeyID
                ? HMACSigner(keyID: kid, key: IntakeHarness.signingKey).signature(for: message) : nil
        }
    }

    @Test("the first push to a recipient goes through the statement twice, the next ones once, signed for the user")
    func cachedRecipientTakesTheStatement() throws {
        let intake = try IntakeHarness()
        defer { intake.stop() }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let start = try Self.paths(intake)
        let first = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        #expect(first.status == 202 && first.json["deliveries"] == .number(2), "\(first.text)")
        let learnt = try Self.paths(intake)
        #expect(learnt.batched == start.batched + 2 && learnt.resubmitted == start.resubmitted + 1)
        #expect(learnt.rendered == start.rendered)

        let second = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        #expect(second.status == 202 && second.json["deliveries"] == .number(2), "\(second.text)")
        let cached = try Self.paths(intake)
        #expect(cached.batched == learnt.batched + 1, "one batch call")
        #expect(cached.resubmitted == learnt.resubmitted && cached.rendered == learnt.rendered)
        let requestID = try #require(second.json["requestId"]?.stringValue)
        let payloads = try Self.payloads(requestID)
        #expect(payloads.count == 2)
        for (recipient, payload) in payloads {
            #expect(recipient == user.id)
            #expect(Self.verify(payload, for: user.id) == nil, "\(payload)")
        }
    }

    @Test("an identifier that matched nobody is remembered too: with a known recipient, one batch call")
    func unmatchedIdentifierIsKnown() throws {
        let intake = try IntakeHarness()
        defer { intake.stop() }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let body = pushBody(partner, emails: [user.email, "nobody-\(user.id)@example.com"])
        #expect(try intake.push(partner.key, body).status == 202)
        let learnt = try Self.paths(intake)
        let again = try intake.push(partner.key, body)
        #expect(again.status == 202 && again.json["deliveries"] == .number(1), "\(again.text)")
        let cached = try Self.paths(intake)
        #expect(cached.batched == learnt.batched + 1 && cached.resubmitted == learnt.resubmitted)
        #expect(again.json["missing"]?["emails"] == .array([.string("nobody-\(user.id)@example.com")]))
    }

    @Test("an email moved to another user since it was cached reaches the new user, signed for them")
    func staleEntryReachesTheNewUser() throws {
        let intake = try IntakeHarness()
        defer { intake.stop() }
        let partner = try intake.makePartner()
        let alice = try intake.makeUser(tenant: partner.tenantID, android: false)
        let bob = try intake.makeUser(tenant: partner.tenantID, ios: false)
        let address = alice.email.lowercased()
        #expect(try intake.push(partner.key, pushBody(partner, emails: [address])).status == 202)
        // The host moves the email from alice to bob: the intake's entry still names alice.
        #expect(
            try intake.host(
                "PUT", "/api/internal/users/\(alice.id)",
                #"{"tenantId":"\#(partner.tenantID)","emails":[],"wallets":[]}"#
            ).status == 200)
        #expect(
            try intake.host(
                "PUT", "/api/internal/users/\(bob.id)",
                #"{"tenantId":"\#(partner.tenantID)","emails":["\#(address)"],"wallets":[]}"#
            )
            .status == 200)
        let before = try Self.paths(intake)
        let moved = try intake.push(partner.key, pushBody(partner, emails: [address]))
        #expect(moved.status == 202 && moved.json["deliveries"] == .number(1), "\(moved.text)")
        let after = try Self.paths(intake)
        // Alice's slots fitted no device of bob's: sent again, signed for bob, still by the statement.
        #expect(after.resubmitted == before.resubmitted + 1 && after.rendered == before.rendered)
        let requestID = try #require(moved.json["requestId"]?.stringValue)
        let payloads = try Self.payloads(requestID)
        #expect(payloads.map(\.user) == [bob.id])
        for (_, payload) in payloads {
            #expect(Self.verify(payload, for: bob.id) == nil, "\(payload)")
            #expect(Self.verify(payload, for: alice.id) == .badSignature)
        }
        // The cache learnt bob: the next push goes once.
        let next = try intake.push(partner.key, pushBody(partner, emails: [address]))
        #expect(next.status == 202)
        let last = try Self.paths(intake)
        #expect(last.batched == after.batched + 1 && last.resubmitted == after.resubmitted)
    }
}
