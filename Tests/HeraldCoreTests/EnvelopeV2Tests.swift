import Foundation
import HeraldCrypto
import Testing

@testable import HeraldCore

/// Envelope v2 (`sig2`) from the app's side: a rendered payload verifies for its recipient until `exp`, and fails
/// once anything it covers is added, removed or changed, for another user, or after `exp`.
@Suite struct EnvelopeV2Tests {
    static let id = UUID(uuidString: "0190A6B2-7C1E-7ABC-8DEF-0123456789AB")!
    static let keys = ["k2026": Fixtures.signingKey]

    static func verify(
        _ payload: JSONValue, user: String = Fixtures.recipient,
        now: Date = Fixtures.now
    ) -> SignedEnvelope.V2Failure? {
        SignedEnvelope.verifyV2(payload, recipient: user, now: now) { kid, message in
            keys[kid].map { HMACSigner(keyID: kid, key: $0).signature(for: message) }
        }
    }

    /// Both payloads of a time-sensitive, sounded push with data: APNs' whole body and FCM's `data`.
    static func payloads() throws -> (apns: JSONValue, fcm: JSONValue) {
        let request = try Fixtures.request(
            deepLink: "basedapp://miniapp/fun.pull.gacha/x",
            data: [("txHash", "0x5e1f")], interruptionLevel: "time-sensitive")
        let content = PushContent(
            request: request,
            partner: Fixtures.partner(
                sound: .named("chime.caf"),
                allowTimeSensitive: true))
        let rendered = PushTemplate(content, signer: Fixtures.signer).render(deliveryID: id)
        return (try JSONParser.parse(rendered.apns), try #require(try JSONParser.parse(rendered.fcm)["data"]))
    }

    /// `payload` with the member at `path` set to `value` (nil: removed).
    static func edited(_ payload: JSONValue, _ path: [String], _ value: JSONValue?) -> JSONValue {
        guard case .object(var members) = payload, let key = path.first else { return payload }
        let index = members.firstIndex { $0.key == key }
        if path.count > 1, let index {
            members[index].value = edited(members[index].value, Array(path.dropFirst()), value)
        } else if let index {
            if let value { members[index].value = value } else { members.remove(at: index) }
        } else if let value {
            members.append((key, value))
        }
        return .object(members)
    }

    @Test("a genuine payload verifies on both platforms for its recipient until exp, and carries exp")
    func genuineVerifies() throws {
        let (apns, fcm) = try Self.payloads()
        #expect(Self.verify(apns) == nil)
        #expect(Self.verify(fcm) == nil)
        #expect(apns["exp"] == .string(String(Int(Fixtures.expiresAt.timeIntervalSince1970))))
        #expect(fcm["exp"] == apns["exp"])
        #expect(Self.verify(apns, now: Fixtures.expiresAt) == nil)
    }

    @Test(
        "an added, removed or changed member fails",
        arguments: [
            (["aps", "alert", "subtitle"], JSONValue.string("Act now")),
            (["aps", "alert", "body"], .string("Confirmations: 6/6")),
            (["aps", "alert", "title"], nil),
            (["aps", "sound"], .string("alarm.caf")),
            (["aps", "sound"], nil),
            (["aps", "interruption-level"], .string("critical")),
            (["aps", "thread-id"], .string("other.app")),
            (["aps", "category"], .string("PAY")),
            (["aps", "mutable-content"], .number(0)),
            (["txHash"], .string("0xdead")),
            (["extra"], .string("1")),
            (["deepLink"], nil),
            (["exp"], .string("9999999999")),
        ] as [([String], JSONValue?)])
    func tamperedAPNsFails(_ path: [String], _ value: JSONValue?) throws {
        let (apns, _) = try Self.payloads()
        let failure = Self.verify(Self.edited(apns, path, value))
        #expect(failure == .badSignature || (path == ["aps", "alert", "title"] && failure != nil), "\(path)")
    }

    @Test(
        "an FCM data map with a key added, removed or changed fails",
        arguments: [
            (["body"], JSONValue.string("changed")), (["subtitle"], .string("new")), (["txHash"], nil),
            (["isGroup"], .string("false")),
        ] as [([String], JSONValue?)])
    func tamperedFCMFails(_ path: [String], _ value: JSONValue?) throws {
        let (_, fcm) = try Self.payloads()
        #expect(Self.verify(Self.edited(fcm, path, value)) == .badSignature)
    }

    @Test("another user, a time after exp, an unknown kid or a missing sig2 fail")
    func wrongRecipientLateUnknownFail() throws {
        let (apns, fcm) = try Self.payloads()
        for payload in [apns, fcm] {
            #expect(Self.verify(payload, user: "user-bob") == .badSignature)
            #expect(Self.verify(payload, now: Fixtures.expiresAt.addingTimeInterval(1)) == .expired)
            #expect(Self.verify(Self.edited(payload, ["kid"], .string("k1999"))) == .unknownKey)
            #expect(Self.verify(Self.edited(payload, ["sig2"], nil)) == .malformed)
        }
    }

    @Test("v1's sig still verifies as field builds check it, over exp and sig2 too")
    func v1CoversV2Fields() throws {
        let request = try Fixtures.request(data: [("txHash", "0x5e1f")])
        let rendered = PushTemplate(PushContent(request: request, partner: Fixtures.partner()), signer: Fixtures.signer)
            .render(deliveryID: Self.id)
        let apns = try JSONParser.parse(rendered.apns)
        let fields = try HostVerifier.signedFields(apns: apns)
        #expect(fields["sig2"] == apns["sig2"]?.stringValue && fields["exp"] != nil)
        #expect(HostVerifier.signature(fields, key: Fixtures.signingKey) == apns["sig"]?.stringValue)
        let fcm = try JSONParser.parse(rendered.fcm)
        #expect(
            HostVerifier.signature(try HostVerifier.signedFields(fcm: fcm), key: Fixtures.signingKey)
                == fcm["data"]?["sig"]?.stringValue)
    }

    @Test("a category is signed: aps.category by v2 on APNs, data.category by v2 and v1 on FCM")
    func categoryIsSigned() throws {
        let request = try Fixtures.request(data: [("txHash", "0x5e1f")], category: "INVITE")
        let rendered = PushTemplate(PushContent(request: request, partner: Fixtures.partner()), signer: Fixtures.signer)
            .render(deliveryID: Self.id)
        let apns = try JSONParser.parse(rendered.apns)
        let fcmMessage = try JSONParser.parse(rendered.fcm)
        let fcm = try #require(fcmMessage["data"])
        #expect(apns["aps"]?["category"] == .string("INVITE") && fcm["category"] == .string("INVITE"))
        #expect(Self.verify(apns) == nil && Self.verify(fcm) == nil)
        let lines = String(
            decoding: SignedEnvelope.v2Lines(try #require(SignedEnvelope.v2Leaves(of: apns))), as: UTF8.self)
        #expect(lines.contains(#"["aps","category","INVITE"]"#))
        for edited in [
            Self.edited(apns, ["aps", "category"], .string("PAY")), Self.edited(apns, ["aps", "category"], nil),
            Self.edited(Self.edited(apns, ["aps", "category"], nil), ["category"], .string("INVITE")),
        ] {
            #expect(Self.verify(edited) == .badSignature)
        }
        for edited in [Self.edited(fcm, ["category"], .string("PAY")), Self.edited(fcm, ["category"], nil)] {
            #expect(Self.verify(edited) == .badSignature)
        }
        // v1 as shipped builds check it: FCM's data category among the fields, APNs' aps left out.
        let fcmFields = try HostVerifier.signedFields(fcm: fcmMessage)
        #expect(fcmFields["category"] == "INVITE")
        #expect(HostVerifier.signature(fcmFields, key: Fixtures.signingKey) == fcm["sig"]?.stringValue)
        var changed = fcmFields
        changed["category"] = "PAY"
        #expect(HostVerifier.signature(changed, key: Fixtures.signingKey) != fcm["sig"]?.stringValue)
        let apnsFields = try HostVerifier.signedFields(apns: apns)
        #expect(apnsFields["category"] == nil)
        #expect(HostVerifier.signature(apnsFields, key: Fixtures.signingKey) == apns["sig"]?.stringValue)
    }

    @Test("the canonical lines are sorted JSON arrays of path and value, one per leaf, joined by newlines")
    func canonicalLines() {
        let leaves = [SignedEnvelope.Leaf(["b"], "x\"\n"), .init(["aps", "alert", "title"], "T"), .init(["a"], "1")]
        let message = SignedEnvelope.v2Message(leaves, recipient: "u\"1")
        #expect(
            String(decoding: message, as: UTF8.self) == """
                herald-envelope-v2
                "u\\"1"
                ["a","1"]
                ["aps","alert","title","T"]
                ["b","x\\"\\n"]
                """)
        #expect(SignedEnvelope.v2Leaves(of: .object([("a", .array([]))])) == nil)
        #expect(SignedEnvelope.v2Leaves(of: .object([("a", .number(1.5))])) == nil)
    }
}
