import Foundation
import Testing

@testable import HeraldCore

/// A template's deliveries are byte for byte what rendering each delivery whole writes, whatever the content holds.
@Suite struct PushTemplateTests {
    static let ids = [
        UUID(uuidString: "0190A6B2-7C1E-7ABC-8DEF-0123456789AB")!, UUID(), UUID(), UUIDv7.make(at: Date()),
        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
    ]

    static let contents: [(String, @Sendable () throws -> PushContent)] = [
        ("the usual push", { try PushPayloadTests.content() }),
        (
            "no deep link, no icon, no data",
            {
                PushContent(request: try Fixtures.request(deepLink: nil), partner: Fixtures.partner(iconPath: nil))
            }
        ),
        (
            "data whose keys and values hold quotes, escapes, non-ASCII and the id's own key as text",
            {
                try PushPayloadTests.content(
                    title: "Caf\u{E9} \"\u{1F600}\" \\ n", body: "line\n two \u{5B89}",
                    data: [
                        ("deliveryIdX", #""deliveryId":"00000000-0000-0000-0000-000000000000""#),
                        ("sigs", #""sig":"x"}"#),
                        ("sig2s", #"["deliveryId","sig2":"x"#),
                        ("\u{E9}t\u{E9}", "\u{1F468}\u{200D}\u{1F469}"), ("zz", ""),
                    ])
            }
        ),
        (
            "a silent, time-sensitive push",
            {
                PushContent(
                    request: try Fixtures.request(interruptionLevel: "time-sensitive"),
                    partner: Fixtures.partner(sound: .silent, allowTimeSensitive: true))
            }
        ),
        (
            "a push naming a category, with data",
            {
                PushContent(
                    request: try Fixtures.request(data: [("txHash", "0x1")], category: "reply.quick-2_X"),
                    partner: Fixtures.partner())
            }
        ),
    ]

    @Test("each delivery of a template equals its whole rendering, both payloads and each alone", arguments: 0..<5)
    func deliveriesEqualWholeRenderings(_ index: Int) throws {
        let content = try Self.contents[index].1()
        let template = PushTemplate(content, signer: Fixtures.signer)
        #expect(template.apns.offsets != nil && template.fcm.offsets != nil, "\(Self.contents[index].0)")
        for id in Self.ids {
            let whole = PushPayload.renderWhole(content, deliveryID: id, signer: Fixtures.signer)
            let rendered = template.render(deliveryID: id)
            #expect(
                rendered.apns == whole.apns,
                "\(Self.contents[index].0): \(String(decoding: rendered.apns, as: UTF8.self))")
            #expect(
                rendered.fcm == whole.fcm, "\(Self.contents[index].0): \(String(decoding: rendered.fcm, as: UTF8.self))"
            )
            #expect(rendered.fcmDataBytes == whole.fcmDataBytes)
            #expect(template.render(deliveryID: id, for: .apns) == whole.apns)
            #expect(template.render(deliveryID: id, for: .fcm) == whole.fcm)
            #expect(template.apnsBytes == whole.apns.count && template.fcmDataBytes == whole.fcmDataBytes)
        }
    }

    @Test(
        "payloads and canonical bytes written member by member are JSONWriter's compact form of the same values",
        arguments: 0..<5)
    func writtenAsJSONWriterWrites(_ index: Int) throws {
        let content = try Self.contents[index].1()
        let whole = PushPayload.renderWhole(content, deliveryID: Self.ids[0], signer: Fixtures.signer)
        for bytes in [whole.apns, whole.fcm] {
            #expect(JSONWriter.bytes(try JSONParser.parse(bytes)) == bytes, "\(String(decoding: bytes, as: UTF8.self))")
        }
        let data = try #require(try JSONParser.parse(whole.fcm)["data"]?.objectMembers)
        #expect(
            whole.fcmDataBytes == data.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0) })
        let fields = [("b", "x\"y"), ("a", "\u{E9}\n"), ("deliveryId", "z")]
        let canonical = SignedEnvelope.canonicalBytes(fields)
        #expect(canonical == JSONWriter.bytes(.object(fields.sorted { $0.0 < $1.0 }.map { ($0.0, .string($0.1)) })))
    }

    /// Signatures of another length than HMAC-SHA256's base64url.
    struct LongSigner: PayloadSigner {
        let keyID = "long"
        func signature(for message: [UInt8]) -> String { String(repeating: "s", count: 44) + String(message.count) }
    }

    @Test("a signer whose signatures are not 43 characters gets every delivery rendered whole")
    func otherSignaturesRenderWhole() throws {
        let content = try PushPayloadTests.content()
        let template = PushTemplate(content, signer: LongSigner())
        for id in Self.ids {
            let whole = PushPayload.renderWhole(content, deliveryID: id, signer: LongSigner())
            #expect(template.render(deliveryID: id).apns == whole.apns)
            #expect(template.render(deliveryID: id, for: .fcm) == whole.fcm)
        }
    }
}
