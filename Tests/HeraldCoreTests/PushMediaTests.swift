import Foundation
import HeraldCrypto
import Testing

@testable import HeraldCore

/// A push's media as plain values: `mediaId` validated, its `attachmentUrl` beside `aps` and in the FCM data,
/// signed by both envelopes and counted by the size check, which runs before the media is looked up; the signed
/// path's shape.
@Suite struct PushMediaTests {
    static let mediaID = UUID(uuidString: "0193c5a2-8c40-7d1e-a2b4-6f0e1d2c3b4a")!
    static let deliveryID = UUID(uuidString: "0190A6B2-7C1E-7ABC-8DEF-0123456789AB")!
    static let url =
        Fixtures.publicURL + PushMedia.path(id: mediaID, contentType: "image/jpeg", signer: Fixtures.signer)

    static func body(_ extra: [(key: String, value: JSONValue)]) -> JSONValue {
        .object(
            [("recipients", .object([("emails", .array([.string("alice@example.com")]))])), ("title", .string("Hi"))]
                + extra)
    }

    @Test("mediaId is a UUID; mediaId and attachmentUrl are reserved data keys")
    func validation() throws {
        let push = try PushRequestValidator.validate(
            Self.body([("mediaId", .string(UUIDText.string(Self.mediaID)))]), miniAppID: Fixtures.miniAppID,
            rules: PushRules(), now: Fixtures.now)
        #expect(push.mediaID == Self.mediaID)
        for bad: JSONValue in [.string("not-a-uuid"), .number(1), .string(UUIDText.string(Self.mediaID) + "0")] {
            expectHeraldError(status: 400, code: "invalid_field", field: "mediaId") { () throws(HeraldError) in
                _ = try PushRequestValidator.validate(
                    Self.body([("mediaId", bad)]), miniAppID: Fixtures.miniAppID, rules: PushRules(), now: Fixtures.now)
            }
        }
        #expect(PushRules.isReservedDataKey("attachmentUrl") && PushRules.isReservedDataKey("MEDIAID"))
    }

    @Test("attachmentUrl sits beside aps (mutable-content 1) and in the FCM data, and both envelopes sign it")
    func payloadsCarryAndSignIt() throws {
        let request = try Fixtures.request()
        let content = PushContent(
            request: request, partner: Fixtures.partner(), publicURL: Fixtures.publicURL, attachmentURL: Self.url)
        let rendered = PushTemplate(content, signer: Fixtures.signer).render(deliveryID: Self.deliveryID)
        let apns = try JSONParser.parse(rendered.apns)
        let fcm = try #require(try JSONParser.parse(rendered.fcm)["data"])
        #expect(apns["attachmentUrl"] == .string(Self.url) && apns["aps"]?["mutable-content"] == .number(1))
        #expect(fcm["attachmentUrl"] == .string(Self.url))
        let mac = { (_: String, message: [UInt8]) -> String? in Fixtures.signer.signature(for: message) }
        for payload in [apns, fcm] {
            #expect(SignedEnvelope.verifyV2(payload, recipient: Fixtures.recipient, now: Fixtures.now, mac: mac) == nil)
            guard case .object(var members) = payload else { continue }
            let index = try #require(members.firstIndex { $0.key == "attachmentUrl" })
            members[index].value = .string("https://evil.test/x.png")
            #expect(
                SignedEnvelope.verifyV2(.object(members), recipient: Fixtures.recipient, now: Fixtures.now, mac: mac)
                    == .badSignature)
        }
        let plain = PushTemplate(PushContent(request: request, partner: Fixtures.partner()), signer: Fixtures.signer)
        #expect(
            PushTemplate(content, signer: Fixtures.signer).fcmDataBytes
                == plain.fcmDataBytes + "attachmentUrl".utf8.count + Self.url.utf8.count)
    }

    @Test("check asks for the URL with the push's expiry only after the size check; without a resolver it refuses")
    func checkResolvesAfterSizing() throws {
        var rules = PushRules()
        rules.publicURL = Fixtures.publicURL
        let json = Self.body([("mediaId", .string(UUIDText.string(Self.mediaID))), ("ttlSeconds", .number(600))])
        var asked: [(UUID, Date)] = []
        let checked = try PushPreparation.check(
            json, partner: Fixtures.partner(), rules: rules, signer: Fixtures.signer, now: Fixtures.now,
            attachment: { id, until throws(HeraldError) in
                asked.append((id, until))
                return Self.url
            })
        #expect(checked.content.attachmentURL == Self.url)
        #expect(asked.count == 1 && asked[0].0 == Self.mediaID && asked[0].1 == Fixtures.now.addingTimeInterval(600))

        let huge = Self.body([
            ("mediaId", .string(UUIDText.string(Self.mediaID))),
            ("data", .object([("blob", .string(String(repeating: "x", count: 3_900)))])),
        ])
        asked = []
        expectHeraldError(status: 422, code: "payload_too_large", field: "data") { () throws(HeraldError) in
            _ = try PushPreparation.check(
                huge, partner: Fixtures.partner(), rules: rules, signer: Fixtures.signer, now: Fixtures.now,
                attachment: { _, _ throws(HeraldError) in
                    asked.append((Self.mediaID, Fixtures.now))
                    return Self.url
                })
        }
        #expect(asked.isEmpty, "a push too large touches no media row")
        expectHeraldError(status: 400, code: "invalid_field", field: "mediaId") { () throws(HeraldError) in
            _ = try PushPreparation.check(
                json, partner: Fixtures.partner(), rules: rules, signer: Fixtures.signer, now: Fixtures.now)
        }
    }

    @Test("the path is the id, a 43-character signature and the type's extension; file names parse back")
    func signedPath() throws {
        let path = PushMedia.path(id: Self.mediaID, contentType: "image/png", signer: Fixtures.signer)
        let parts = path.split(separator: "/")
        #expect(parts.count == 3 && parts[0] == "media" && parts[1] == "0193c5a2-8c40-7d1e-a2b4-6f0e1d2c3b4a")
        let file = try #require(PushMedia.fileName(String(parts[2])))
        #expect(file.fileExtension == "png")
        #expect(file.signature == Fixtures.signer.signature(for: PushMedia.signedMessage(id: Self.mediaID)))
        #expect(Self.url.hasSuffix(".jpg"))
        for name in ["x.png", file.signature + ".gif", file.signature, file.signature + ".png.png"] {
            #expect(PushMedia.fileName(name) == nil, "\(name)")
        }
        // Another id's signature differs: a path cannot be moved to another id.
        #expect(
            PushMedia.path(id: UUID(), contentType: "image/png", signer: Fixtures.signer).split(separator: "/")[2]
                != parts[2])
    }
}
