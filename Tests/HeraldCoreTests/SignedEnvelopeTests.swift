import Foundation
import HeraldCore
import HeraldCrypto
import Testing

/// What the host app does to check a push: an independent rendering of the canonical form
/// (RFC 8785 over a string map) written for these tests, then HMAC-SHA256 and base64url.
enum HostVerifier {
    static func canonical(_ fields: [String: String]) -> [UInt8] {
        let keys = fields.keys.sorted { Array($0.utf16).lexicographicallyPrecedes(Array($1.utf16)) }
        var out = "{"
        for (index, key) in keys.enumerated() {
            if index > 0 { out += "," }
            out += quoted(key) + ":" + quoted(fields[key]!)
        }
        return Array((out + "}").utf8)
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\u{08}": out += "\\b"
            case "\u{09}": out += "\\t"
            case "\u{0A}": out += "\\n"
            case "\u{0C}": out += "\\f"
            case "\u{0D}": out += "\\r"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// The fields the app reads from an APNs payload: title and body from aps.alert, every other
    /// key beside aps as a string (isGroup true -> "true"), without sig and kid.
    static func signedFields(apns: JSONValue) throws -> [String: String] {
        var fields: [String: String] = [:]
        let alert = try #require(apns["aps"]?["alert"])
        let title: String = try #require(alert["title"]?.stringValue)
        let body: String = try #require(alert["body"]?.stringValue)
        fields["title"] = title
        fields["body"] = body
        for member in try #require(apns.objectMembers) where !["aps", "sig", "kid"].contains(member.key) {
            switch member.value {
            case .string(let value): fields[member.key] = value
            case .bool(let flag): fields[member.key] = flag ? "true" : "false"
            default: Issue.record("unexpected \(member.value.typeName) for \(member.key)")
            }
        }
        return fields
    }

    /// The same from an FCM data map.
    static func signedFields(fcm: JSONValue) throws -> [String: String] {
        var fields: [String: String] = [:]
        for member in try #require(fcm["data"]?.objectMembers) where member.key != "sig" && member.key != "kid" {
            let value: String = try #require(member.value.stringValue, "\(member.key) is a \(member.value.typeName)")
            fields[member.key] = value
        }
        return fields
    }

    static func signature(_ fields: [String: String], key: [UInt8]) -> String {
        Base64URL.encode(Digest.hmacSHA256(key: key, message: canonical(fields)))
    }
}

@Suite struct SignedEnvelopeTests {
    // MARK: Canonical form

    @Test func canonicalFormSortsKeysAndHasNoWhitespace() {
        let bytes = SignedEnvelope.canonicalBytes([
            ("title", "T"), ("body", "B"), ("channel", "mini-app"), ("a b", "c d"),
        ])
        #expect(text(bytes) == #"{"a b":"c d","body":"B","channel":"mini-app","title":"T"}"#)
    }

    @Test func canonicalFormOfNothingIsAnEmptyObject() {
        #expect(text(SignedEnvelope.canonicalBytes([])) == "{}")
    }

    @Test func keysSortByUTF16CodeUnitsNotScalars() {
        // U+10000 is D800 DC00 in UTF-16, before U+E000; by scalar value it would come after.
        let astral = "\u{10000}"
        let privateUse = "\u{E000}"
        #expect(astral.unicodeScalars.first!.value > privateUse.unicodeScalars.first!.value)
        let bytes = SignedEnvelope.canonicalBytes([(privateUse, "p"), (astral, "a")])
        #expect(text(bytes) == "{\"\u{10000}\":\"a\",\"\u{E000}\":\"p\"}")
        // Also against UTF-8 byte order (F0 ... > EE ...), which agrees with scalar order.
        #expect(!Array(astral.utf8).lexicographicallyPrecedes(Array(privateUse.utf8)))
    }

    @Test func rfc8785SortingExample() {
        // The property names of RFC 8785 section 3.2.3, in their sorted order.
        let sorted = ["\r", "1", "\u{80}", "\u{F6}", "\u{20AC}", "\u{1F600}", "\u{FB33}"]
        let shuffled = [sorted[4], sorted[6], sorted[0], sorted[5], sorted[2], sorted[3], sorted[1]]
        let bytes = SignedEnvelope.canonicalBytes(shuffled.map { ($0, "v") })
        let keys = try? JSONParser.parse(bytes).objectMembers?.map(\.key)
        #expect(keys.map { $0.map { Array($0.unicodeScalars) } } == sorted.map { Array($0.unicodeScalars) })
    }

    @Test func sortingIsByCodeUnitsNotLocale() {
        let bytes = SignedEnvelope.canonicalBytes([
            ("b", "1"), ("B", "2"), ("aa", "3"), ("a", "4"), ("é", "5"), ("f", "6"),
        ])
        #expect(text(bytes) == #"{"B":"2","a":"4","aa":"3","b":"1","f":"6","é":"5"}"#)
    }

    @Test func asciiKeysSortAsTheirUTF16CodeUnits() {
        // ASCII keys take the byte comparison: prefixes, case, digits, punctuation and control characters.
        let keys = [
            "aa", "a", "B", "_", "0", "~", "a b", "\u{1}", "deliveryId", "deepLink", "Z9", "z", "title", "titl",
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let bytes = SignedEnvelope.canonicalBytes(keys.shuffled(using: &generator).map { ($0, "v") })
            let sorted = (try? JSONParser.parse(bytes).objectMembers?.map(\.key)) ?? nil
            #expect(sorted == keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) })
        }
    }

    @Test func canonicalValuesUseMinimalEscaping() {
        let value = "q\" b\\ s/ n\n t\t c\u{1} d\u{7F} é 😀 \u{2028}"
        let bytes = SignedEnvelope.canonicalBytes([("k", value)])
        #expect(text(bytes) == "{\"k\":\"q\\\" b\\\\ s/ n\\n t\\t c\\u0001 d\u{7F} é 😀 \u{2028}\"}")
        #expect(bytes == HostVerifier.canonical(["k": value]))
    }

    @Test func canonicalFormIsIndependentOfInputOrder() {
        let fields = [("title", "T"), ("deliveryId", "d"), ("isGroup", "true"), ("zeta", "z"), ("Alpha", "a")]
        let reference = SignedEnvelope.canonicalBytes(fields)
        for rotation in 1..<fields.count {
            let rotated = Array(fields[rotation...] + fields[..<rotation])
            #expect(SignedEnvelope.canonicalBytes(rotated) == reference)
        }
        #expect(SignedEnvelope.canonicalBytes(fields.reversed()) == reference)
        #expect(reference == HostVerifier.canonical(Dictionary(uniqueKeysWithValues: fields.map { ($0.0, $0.1) })))
    }

    // MARK: The signature in a payload

    static func render(_ content: PushContent, id: UUID = UUID()) -> RenderedPush {
        PushTemplate(content, signer: Fixtures.signer).render(deliveryID: id)
    }

    static func contents() throws -> [PushContent] {
        [
            PushContent(
                request: try Fixtures.request(
                    deepLink: "basedapp://miniapp/fun.pull.gacha/deposits/0xabc",
                    data: [("txHash", "0x1234"), ("\u{E000}pu", "x"), ("\u{10000}astral", "y"), ("Zed", "q\"uote\\")]),
                partner: Fixtures.partner()),
            PushContent(request: try Fixtures.request(body: nil), partner: Fixtures.partner(iconPath: nil)),
            PushContent(
                request: try Fixtures.request(title: "😀 \"hi\"", body: "a\nb\tc", data: [("k", "")]),
                partner: Fixtures.partner(displayName: "Ünïcode Ltd")),
        ]
    }

    @Test func apnsSignatureVerifiesOverTheFieldsTheHostReads() throws {
        for content in try Self.contents() {
            let apns = try JSONParser.parse(Self.render(content).apns)
            #expect(apns["kid"] == .string(Fixtures.signer.keyID))
            let fields = try HostVerifier.signedFields(apns: apns)
            #expect(fields["isGroup"] == "true")
            #expect(fields["title"] == content.title)
            let sig = try #require(apns["sig"]?.stringValue)
            #expect(sig == HostVerifier.signature(fields, key: Fixtures.signingKey))
        }
    }

    /// Both carry the same fields but `sig2`, which v2 signs over each platform's own leaves (FCM's data has no
    /// `aps`), so `sig` differs too.
    @Test func fcmSignatureVerifiesOverTheSameFieldsAsAPNs() throws {
        for content in try Self.contents() {
            let id = UUID()
            let rendered = Self.render(content, id: id)
            let fcm = try JSONParser.parse(rendered.fcm)
            let fields = try HostVerifier.signedFields(fcm: fcm)
            #expect(fcm["data"]?["sig"]?.stringValue == HostVerifier.signature(fields, key: Fixtures.signingKey))
            #expect(fcm["data"]?["kid"] == .string(Fixtures.signer.keyID))
            let apns = try JSONParser.parse(rendered.apns)
            var apnsFields = try HostVerifier.signedFields(apns: apns)
            #expect(apnsFields.removeValue(forKey: "sig2") != fields["sig2"])
            #expect(fields.filter { $0.key != "sig2" } == apnsFields)
        }
    }

    @Test func signatureIsOverExactlyTheSignedFieldNames() throws {
        let content = try Self.contents()[0]
        let fields = try HostVerifier.signedFields(apns: try JSONParser.parse(Self.render(content).apns))
        #expect(
            Set(fields.keys) == [
                "title", "body", "channel", "miniAppId", "deepLink", "deliveryId", "senderName", "imageUrl", "isGroup",
                "txHash", "\u{E000}pu", "\u{10000}astral", "Zed", "exp", "sig2",
            ])
    }

    @Test func tamperingWithAnyFieldBreaksTheSignature() throws {
        for content in try Self.contents() {
            let apns = try JSONParser.parse(Self.render(content).apns)
            let sig = try #require(apns["sig"]?.stringValue)
            let fields = try HostVerifier.signedFields(apns: apns)
            #expect(HostVerifier.signature(fields, key: Fixtures.signingKey) == sig)
            for key in fields.keys {
                var changed = fields
                changed[key] = fields[key]! + "x"
                #expect(HostVerifier.signature(changed, key: Fixtures.signingKey) != sig, "changed \(key)")
                var removed = fields
                removed[key] = nil
                #expect(HostVerifier.signature(removed, key: Fixtures.signingKey) != sig, "removed \(key)")
            }
            var added = fields
            added["extra"] = ""
            #expect(HostVerifier.signature(added, key: Fixtures.signingKey) != sig)
            var wrongKey = Fixtures.signingKey
            wrongKey[0] ^= 1
            #expect(HostVerifier.signature(fields, key: wrongKey) != sig)
        }
    }

    /// `aps`'s presentation keys are not among v1's fields (docs/security.md): the host's v1 rule reads none of
    /// them. v2 covers them, so each sound and interruption level signs differently, through `sig2`.
    @Test func apsPresentationKeysAreSignedByV2Only() throws {
        let id = UUID()
        var signatures: Set<String> = []
        var fcmSignatures: Set<String> = []
        for (sound, level) in [
            (NotificationSound.systemDefault, nil as String?), (.silent, "passive"),
            (.named("chime.caf"), "time-sensitive"),
        ] {
            let request = try Fixtures.request(data: [("txHash", "0x1234")], interruptionLevel: level)
            let content = PushContent(
                request: request, partner: Fixtures.partner(sound: sound, allowTimeSensitive: true))
            let rendered = Self.render(content, id: id)
            let apns = try JSONParser.parse(rendered.apns)
            let fields = try HostVerifier.signedFields(apns: apns)
            let sig = try #require(apns["sig"]?.stringValue)
            #expect(sig == HostVerifier.signature(fields, key: Fixtures.signingKey))
            #expect(fields["thread-id"] == nil && fields["sound"] == nil && fields["interruption-level"] == nil)
            signatures.insert(try #require(apns["sig2"]?.stringValue))
            fcmSignatures.insert(try #require(try JSONParser.parse(rendered.fcm)["data"]?["sig"]?.stringValue))
        }
        #expect(signatures.count == 3)
        #expect(fcmSignatures.count == 1)
    }

    @Test func eachDeliveryHasItsOwnSignature() throws {
        let content = try Self.contents()[0]
        let first = try JSONParser.parse(Self.render(content, id: UUID()).apns)["sig"]
        let second = try JSONParser.parse(Self.render(content, id: UUID()).apns)["sig"]
        #expect(first != nil && first != second)
        // Rendering is deterministic for one delivery id.
        let id = UUID()
        #expect(Self.render(content, id: id).apns == Self.render(content, id: id).apns)
    }

    @Test func signerSignsTheCanonicalBytesOfThePayload() throws {
        // The PayloadSigner seam receives exactly the canonical form the host rebuilds.
        final class Recorder: PayloadSigner, @unchecked Sendable {
            let keyID = "rec"
            var messages: [[UInt8]] = []
            func signature(for message: [UInt8]) -> String {
                messages.append(message)
                return String(repeating: "A", count: 43)
            }
        }
        let recorder = Recorder()
        let content = try Self.contents()[0]
        let rendered = PushTemplate(content, signer: recorder).render(deliveryID: PushPayloadTests.deliveryID)
        // sig2 then sig, for each platform.
        #expect(recorder.messages.count == 4)
        let apns = try JSONParser.parse(rendered.apns)
        #expect(recorder.messages[1] == HostVerifier.canonical(try HostVerifier.signedFields(apns: apns)))
        let leaves = try #require(SignedEnvelope.v2Leaves(of: apns))
        #expect(recorder.messages[0] == SignedEnvelope.v2Message(leaves, recipient: Fixtures.recipient))
        #expect(apns["kid"] == .string("rec"))
        #expect(apns["sig"] == .string(String(repeating: "A", count: 43)))
    }

    // MARK: Known answers

    @Test func hmacSHA256KnownAnswers() {
        // RFC 4231 test case 2.
        #expect(
            hexString(Digest.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // RFC 4231 test case 1.
        #expect(
            hexString(Digest.hmacSHA256(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // RFC 4231 test case 6: a key longer than the block size.
        #expect(
            hexString(
                Digest.hmacSHA256(
                    key: [UInt8](repeating: 0xAA, count: 131),
                    message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func sha256KnownAnswers() {
        #expect(
            hexString(Digest.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hexString(Digest.sha256([]))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Digest.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hmacSignerIsBase64URLOfHMACSHA256() {
        let signer = HMACSigner(keyID: "tc2", key: Array("Jefe".utf8))
        #expect(signer.keyID == "tc2")
        let expected = bytes(fromHex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let signature = signer.signature(for: Array("what do ya want for nothing?".utf8))
        #expect(signature == "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM")
        #expect(Base64URL.decode(signature) == expected)
        for message in [[], [0x00], Array("x".utf8), [UInt8](repeating: 0xFF, count: 5000)] as [[UInt8]] {
            #expect(signer.signature(for: message).count == 43)
        }
    }
}
