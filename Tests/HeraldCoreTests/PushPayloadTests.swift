import Foundation
import HeraldCore
import HeraldCrypto
import Testing

/// Members of a JSON object by key (the renderer never writes duplicates; this checks that too).
func membersByKey(_ value: JSONValue?, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: JSONValue]
{
    let members = try #require(value?.objectMembers, sourceLocation: sourceLocation)
    var result: [String: JSONValue] = [:]
    for member in members {
        #expect(result[member.key] == nil, "duplicate key \(member.key)", sourceLocation: sourceLocation)
        result[member.key] = member.value
    }
    return result
}

@Suite struct PushPayloadTests {
    static let deliveryID = UUID(uuidString: "0190A6B2-7C1E-7ABC-8DEF-0123456789AB")!
    static let signer = Fixtures.signer

    @Test func renderingOneServiceGivesExactlyThatHalfOfTheFullRendering() throws {
        let content = try Self.content()
        let both = PushTemplate(content, signer: Self.signer).render(deliveryID: Self.deliveryID)
        #expect(PushTemplate(content, signer: Self.signer).render(deliveryID: Self.deliveryID, for: .apns) == both.apns)
        #expect(PushTemplate(content, signer: Self.signer).render(deliveryID: Self.deliveryID, for: .fcm) == both.fcm)
    }

    static func content(
        partner: PartnerProfile = Fixtures.partner(), title: String = "Deposit pending",
        body: String = "Confirmations: 1/6",
        deepLink: String? = "basedapp://miniapp/fun.pull.gacha/deposits/0xabc",
        data: [(String, String)] = [("txHash", "0x1234")]
    ) throws -> PushContent {
        PushContent(
            request: try Fixtures.request(title: title, body: body, deepLink: deepLink, data: data), partner: partner)
    }

    // MARK: Content

    @Test func contentTakesBrandAndIconFromThePartner() throws {
        let content = try Self.content()
        #expect(content.title == "[Gacha] Deposit pending")
        #expect(content.body == "Confirmations: 1/6")
        #expect(content.senderName == "Gacha")
        #expect(content.imageURL == "https://herald.example/icons/fun.pull.gacha/256.png")
        #expect(content.miniAppID == Fixtures.miniAppID)
        #expect(content.deepLink == "basedapp://miniapp/fun.pull.gacha/deposits/0xabc")
        #expect(content.data == [.init(key: "txHash", value: "0x1234")])
    }

    // MARK: APNs

    @Test func apnsPayloadHasTheSpecShape() throws {
        let rendered = PushTemplate(try Self.content(), signer: Self.signer).render(deliveryID: Self.deliveryID)
        let top = try membersByKey(try JSONParser.parse(rendered.apns))
        #expect(
            Set(top.keys) == [
                "aps", "channel", "miniAppId", "deepLink", "deliveryId", "senderName", "imageUrl", "isGroup", "txHash",
                "exp", "kid", "sig2", "sig",
            ])
        let aps = try membersByKey(top["aps"])
        #expect(Set(aps.keys) == ["alert", "mutable-content", "thread-id", "sound"])
        #expect(aps["mutable-content"] == .number(1))
        #expect(aps["thread-id"] == .string("fun.pull.gacha"))
        #expect(aps["sound"] == .string("default"))
        let alert = try membersByKey(aps["alert"])
        #expect(Set(alert.keys) == ["title", "body"])
        #expect(alert["title"] == .string("[Gacha] Deposit pending"))
        #expect(alert["body"] == .string("Confirmations: 1/6"))

        #expect(top["channel"] == .string("mini-app"))
        #expect(top["miniAppId"] == .string("fun.pull.gacha"))
        #expect(top["deepLink"] == .string("basedapp://miniapp/fun.pull.gacha/deposits/0xabc"))
        #expect(top["deliveryId"] == .string("0190a6b2-7c1e-7abc-8def-0123456789ab"))  // lowercase canonical
        #expect(top["senderName"] == .string("Gacha"))
        #expect(top["imageUrl"] == .string("https://herald.example/icons/fun.pull.gacha/256.png"))
        #expect(top["isGroup"] == .bool(true))
        #expect(top["txHash"] == .string("0x1234"))
        #expect(top["kid"] == .string("k2026"))
        let sig = try #require(top["sig"]?.stringValue)
        #expect(sig.count == 43)
        #expect(sig.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    }

    @Test func apnsPayloadIsCompactAndMutableContentIsTheInteger1() throws {
        let rendered = PushTemplate(try Self.content(), signer: Self.signer).render(deliveryID: Self.deliveryID)
        let document = text(rendered.apns)
        #expect(document.hasPrefix(#"{"aps":{"alert":{"#))
        #expect(document.contains(#""mutable-content":1"#))
        #expect(document.contains(#""isGroup":true"#))
        // Compact: re-serialising the parsed document gives the same bytes (no whitespace anywhere).
        #expect(JSONWriter.bytes(try JSONParser.parse(rendered.apns)) == rendered.apns)
        #expect(JSONWriter.bytes(try JSONParser.parse(rendered.fcm)) == rendered.fcm)
    }

    // MARK: aps: thread, sound, interruption level

    static func aps(sound: NotificationSound = .systemDefault, level: String? = nil) throws -> JSONValue? {
        let request = try Fixtures.request(deepLink: "basedapp://miniapp/fun.pull.gacha/x", interruptionLevel: level)
        let content = PushContent(request: request, partner: Fixtures.partner(sound: sound, allowTimeSensitive: true))
        return try JSONParser.parse(PushTemplate(content, signer: signer).render(deliveryID: deliveryID).apns)["aps"]
    }

    @Test func apsIsWrittenInAFixedOrder() throws {
        let rendered = PushTemplate(try Self.content(), signer: Self.signer).render(deliveryID: Self.deliveryID)
        #expect(
            text(rendered.apns).hasPrefix(
                #"{"aps":{"alert":{"title":"[Gacha] Deposit pending","body":"Confirmations: 1/6"},"mutable-content":1,"#
                    + #""thread-id":"fun.pull.gacha","sound":"default"},"channel":"mini-app","#))
    }

    @Test(
        "thread-id is the mini-app; sound is the partner's, none when silent; interruption-level only when not active",
        arguments: [
            (NotificationSound.systemDefault, nil as String?, #"{"thread-id":"fun.pull.gacha","sound":"default"}"#),
            (.named("chime.caf"), nil, #"{"thread-id":"fun.pull.gacha","sound":"chime.caf"}"#),
            (.silent, nil, #"{"thread-id":"fun.pull.gacha"}"#),
            (.systemDefault, "active", #"{"thread-id":"fun.pull.gacha","sound":"default"}"#),
            (
                .systemDefault, "passive",
                #"{"thread-id":"fun.pull.gacha","sound":"default","interruption-level":"passive"}"#
            ),
            (.silent, "passive", #"{"thread-id":"fun.pull.gacha","interruption-level":"passive"}"#),
            (
                .named("alarm tone.aiff"), "time-sensitive",
                #"{"thread-id":"fun.pull.gacha","sound":"alarm tone.aiff","interruption-level":"time-sensitive"}"#
            ),
        ])
    func apsPresentationKeys(_ sound: NotificationSound, _ level: String?, _ expected: String) throws {
        var aps = try #require(try Self.aps(sound: sound, level: level)?.objectMembers)
        #expect(aps.prefix(2).map(\.key) == ["alert", "mutable-content"])
        aps.removeFirst(2)
        #expect(JSONWriter.string(.object(aps)) == expected)
    }

    @Test func fcmDataIsTheSameWhateverTheSoundAndInterruptionLevel() throws {
        let variants: [(NotificationSound, String?)] = [
            (.systemDefault, nil), (.silent, nil), (.named("chime.caf"), "passive"), (.systemDefault, "time-sensitive"),
        ]
        let renders = try variants.map { sound, level in
            let request = try Fixtures.request(data: [("txHash", "0x1234")], interruptionLevel: level)
            let partner = Fixtures.partner(sound: sound, allowTimeSensitive: true)
            return PushTemplate(PushContent(request: request, partner: partner), signer: Self.signer)
                .render(deliveryID: Self.deliveryID)
        }
        #expect(Set(renders.map(\.fcm)).count == 1)
        #expect(Set(renders.map(\.fcmDataBytes)).count == 1)
        let data = try membersByKey(try JSONParser.parse(renders[3].fcm)["data"])
        for key in ["thread-id", "threadId", "sound", "interruption-level", "interruptionLevel"] {
            #expect(data[key] == nil, "\(key)")
        }
        // While the APNs payloads differ only inside aps.
        #expect(Set(renders.map(\.apns)).count == renders.count)
    }

    @Test func sizeCheckCountsTheApsKeys() throws {
        // Content that fits exactly with a silent partner and no interruption level...
        var request = try Fixtures.request(deepLink: "basedapp://miniapp/fun.pull.gacha/x")
        let silent = Fixtures.partner(sound: .silent)
        request.data = [.init(key: "blob", value: "")]
        let base = Self.apnsSize(PushContent(request: request, partner: silent))
        request.data = [.init(key: "blob", value: String(repeating: "x", count: 4096 - base))]
        let fitting = PushContent(request: request, partner: silent)
        #expect(Self.apnsSize(fitting) == 4096)
        try PushPayload.checkSize(PushTemplate(fitting, signer: Self.signer))
        // ... is over once the partner has a sound, and by exactly the bytes of the sound key.
        let sounded = PushContent(request: request, partner: Fixtures.partner(sound: .named("chime.caf")))
        let soundBytes = #","sound":"chime.caf""#.utf8.count
        #expect(Self.apnsSize(sounded) == 4096 + soundBytes)
        let error = expectHeraldError(status: 422, code: "payload_too_large", field: "data") { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(sounded, signer: Self.signer))
        }
        #expect(error?.message.contains("\(soundBytes) over") == true)
        // ... and so with an interruption level.
        request.interruptionLevel = .passive
        let passive = PushContent(request: request, partner: silent)
        #expect(Self.apnsSize(passive) == 4096 + #","interruption-level":"passive""#.utf8.count)
        expectHeraldError(status: 422, code: "payload_too_large", field: "data") { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(passive, signer: Self.signer))
        }
    }

    // MARK: category

    /// A push of the fixtures' partner naming category `INVITE`, with the partner's data.
    static func categorized(_ request: PushRequest? = nil) throws -> PushContent {
        PushContent(
            request: try request ?? Fixtures.request(data: [("txHash", "0x1234")], category: "INVITE"),
            partner: Fixtures.partner())
    }

    @Test("the category is aps.category on APNs, after thread-id, and a data key on FCM; never beside aps")
    func categoryIsInApsAndInTheFCMData() throws {
        let rendered = PushTemplate(try Self.categorized(), signer: Self.signer).render(deliveryID: Self.deliveryID)
        let apns = try JSONParser.parse(rendered.apns)
        var aps = try #require(apns["aps"]?.objectMembers)
        aps.removeFirst(2)
        #expect(
            JSONWriter.string(.object(aps)) == #"{"thread-id":"fun.pull.gacha","category":"INVITE","sound":"default"}"#)
        #expect(apns["category"] == nil)
        let data = try membersByKey(try JSONParser.parse(rendered.fcm)["data"])
        #expect(data["category"] == .string("INVITE"))
        #expect(
            text(rendered.fcm).hasPrefix(
                #"{"android":{"priority":"HIGH"},"data":{"title":"[Gacha] Deposit pending","#
                    + #""body":"Confirmations: 1/6","category":"INVITE","channel":"mini-app","#))
        let dataBytes = data.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 1_000_000) }
        #expect(rendered.fcmDataBytes == dataBytes)
        // Without one, neither payload names a category.
        let plain = PushTemplate(
            try Self.categorized(try Fixtures.request(data: [("txHash", "0x1234")])), signer: Self.signer
        )
        .render(deliveryID: Self.deliveryID)
        #expect(!text(plain.apns).contains("category") && !text(plain.fcm).contains("category"))
        #expect(rendered.fcmDataBytes == plain.fcmDataBytes + "categoryINVITE".utf8.count)
    }

    @Test("the size check counts the category in both payloads")
    func sizeCheckCountsTheCategory() throws {
        var request = try Fixtures.request(deepLink: "basedapp://miniapp/fun.pull.gacha/x", category: "INVITE")
        request.category = nil
        request.data = [.init(key: "blob", value: "")]
        let base = Self.apnsSize(try Self.categorized(request))
        request.data = [.init(key: "blob", value: String(repeating: "x", count: 4096 - base))]
        let fitting = try Self.categorized(request)
        #expect(Self.apnsSize(fitting) == 4096)
        try PushPayload.checkSize(PushTemplate(fitting, signer: Self.signer))
        request.category = "INVITE"
        let categorized = try Self.categorized(request)
        let categoryBytes = #","category":"INVITE""#.utf8.count
        #expect(Self.apnsSize(categorized) == 4096 + categoryBytes)
        let error = expectHeraldError(status: 422, code: "payload_too_large", field: "data") { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(categorized, signer: Self.signer))
        }
        #expect(error?.message.contains("\(categoryBytes) over") == true)
        #expect(
            PushTemplate(categorized, signer: Self.signer).fcmDataBytes
                == PushTemplate(fitting, signer: Self.signer).fcmDataBytes + "categoryINVITE".utf8.count)
    }

    @Test func optionalKeysAreLeftOutWhenAbsent() throws {
        let content = try Self.content(partner: Fixtures.partner(iconPath: nil), deepLink: nil, data: [])
        let rendered = PushTemplate(content, signer: Self.signer).render(deliveryID: Self.deliveryID)
        let apns = try membersByKey(try JSONParser.parse(rendered.apns))
        #expect(
            Set(apns.keys) == [
                "aps", "channel", "miniAppId", "deliveryId", "senderName", "isGroup", "exp", "kid", "sig2", "sig",
            ])
        let data = try membersByKey(try JSONParser.parse(rendered.fcm)["data"])
        #expect(data["imageUrl"] == nil && data["deepLink"] == nil)
        #expect(!text(rendered.apns).contains("imageUrl") && !text(rendered.fcm).contains("imageUrl"))
    }

    @Test func partnerDataSitsBesideApsInThePartnersOrder() throws {
        let content = try Self.content(data: [("zeta", "1"), ("alpha", "2"), ("mid", "3")])
        let rendered = PushTemplate(content, signer: Self.signer).render(deliveryID: Self.deliveryID)
        let keys = try #require(try JSONParser.parse(rendered.apns).objectMembers).map(\.key)
        let positions = ["zeta", "alpha", "mid"].compactMap { keys.firstIndex(of: $0) }
        #expect(positions.count == 3 && positions == positions.sorted())
        #expect(try JSONParser.parse(rendered.apns)["aps"]?["zeta"] == nil)
    }

    @Test func textIsEscapedAndSurvivesTheRoundTrip() throws {
        let title = #"He said "hi" \ 😀"#
        let body = "Line 1\nLine 2\t\"end\""
        let content = try Self.content(title: title, body: body, data: [("note", "a\"b\\c")])
        let rendered = PushTemplate(content, signer: Self.signer).render(deliveryID: Self.deliveryID)
        let apns = try JSONParser.parse(rendered.apns)
        #expect(apns["aps"]?["alert"]?["title"] == .string("[Gacha] " + title))
        #expect(apns["aps"]?["alert"]?["body"] == .string(body))
        #expect(apns["note"] == .string("a\"b\\c"))
        #expect(try JSONParser.parse(rendered.fcm)["data"]?["body"] == .string(body))
    }

    // MARK: FCM

    @Test func fcmMessageIsADataMessageWithTheSameKeysAsStrings() throws {
        let rendered = PushTemplate(try Self.content(), signer: Self.signer).render(deliveryID: Self.deliveryID)
        let fcm = try membersByKey(try JSONParser.parse(rendered.fcm))
        #expect(Set(fcm.keys) == ["android", "data"])
        #expect(try membersByKey(fcm["android"]) == ["priority": .string("HIGH")])
        let data = try membersByKey(fcm["data"])
        let apns = try membersByKey(try JSONParser.parse(rendered.apns))

        // Every key beside aps, plus the alert's title and body, as strings.
        #expect(Set(data.keys) == Set(apns.keys).subtracting(["aps"]).union(["title", "body"]))
        for (key, value) in data {
            #expect(value.stringValue != nil, "\(key) is a \(value.typeName)")
        }
        #expect(data["title"] == .string("[Gacha] Deposit pending"))
        #expect(data["body"] == .string("Confirmations: 1/6"))
        #expect(data["isGroup"] == .string("true"))
        // The signatures are each platform's own: v2 signs APNs' aps members, which FCM's data does not carry.
        for key in apns.keys where !["aps", "isGroup", "sig", "sig2"].contains(key) {
            #expect(data[key] == apns[key], "\(key)")
        }
    }

    @Test func fcmDataBytesCountsKeysAndValues() throws {
        for content in [
            try Self.content(), try Self.content(title: "é😀", body: "", deepLink: nil, data: [("k", "vé")]),
        ] {
            let rendered = PushTemplate(content, signer: Self.signer).render(deliveryID: Self.deliveryID)
            let data = try #require(try JSONParser.parse(rendered.fcm)["data"]?.objectMembers)
            let expected = data.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 1_000_000) }
            #expect(rendered.fcmDataBytes == expected)
        }
    }

    // MARK: Sizes

    static let deliveryIDs: [UUID] = [
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!,
        deliveryID, UUID(), UUID(), UUIDv7.make(at: Date()),
    ]

    @Test func sizesAreTheSameForAnyDeliveryID() throws {
        let content = try Self.content(data: [("k", String(repeating: "v", count: 500))])
        let renders = Self.deliveryIDs.map { PushTemplate(content, signer: Self.signer).render(deliveryID: $0) }
        #expect(Set(renders.map(\.apns.count)).count == 1)
        #expect(Set(renders.map(\.fcm.count)).count == 1)
        #expect(Set(renders.map(\.fcmDataBytes)).count == 1)
        // ... while the payloads themselves differ (the delivery id is signed).
        #expect(Set(renders.map(\.apns)).count == renders.count)
    }

    /// Content whose partner data holds one value of `length` ASCII bytes.
    static func content(dataValueLength length: Int) throws -> PushContent {
        var request = try Fixtures.request(deepLink: "basedapp://miniapp/fun.pull.gacha/x")
        request.data = [.init(key: "blob", value: String(repeating: "x", count: length))]
        return PushContent(request: request, partner: Fixtures.partner())
    }

    static func apnsSize(_ content: PushContent) -> Int {
        PushTemplate(content, signer: signer).render(deliveryID: deliveryID).apns.count
    }

    @Test func apnsLimitIsExactly4096Bytes() throws {
        #expect(PushPayload.maxAPNsBytes == 4096)
        let base = Self.apnsSize(try Self.content(dataValueLength: 0))
        let fitting = try Self.content(dataValueLength: 4096 - base)
        #expect(Self.apnsSize(fitting) == 4096)
        try PushPayload.checkSize(PushTemplate(fitting, signer: Self.signer))

        let over = try Self.content(dataValueLength: 4096 - base + 1)
        #expect(Self.apnsSize(over) == 4097)
        let error = expectHeraldError(status: 422, code: "payload_too_large", field: "data") { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(over, signer: Self.signer))
        }
        #expect(error?.message.contains("4097 bytes") == true)
        #expect(error?.message.contains("1 over") == true)
        #expect(error?.message.contains("APNs") == true)

        let farOver = try Self.content(dataValueLength: 4096 - base + 250)
        let farError = heraldError { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(farOver, signer: Self.signer))
        }
        #expect(farError?.message.contains("4346 bytes") == true)
        #expect(farError?.message.contains("250 over") == true)
    }

    @Test func sizeIsMeasuredOnTheEscapedRendering() throws {
        let base = Self.apnsSize(try Self.content(dataValueLength: 0))
        // One quote instead of one x: the raw value is the same length, the rendering one byte longer.
        var request = try Fixtures.request(deepLink: "basedapp://miniapp/fun.pull.gacha/x")
        request.data = [.init(key: "blob", value: String(repeating: "x", count: 4096 - base - 1) + "\"")]
        let content = PushContent(request: request, partner: Fixtures.partner())
        #expect(Self.apnsSize(content) == 4097)
        expectHeraldError(status: 422, code: "payload_too_large", field: "data") { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(content, signer: Self.signer))
        }
    }

    @Test func overflowWithoutDataNamesTheBody() throws {
        var request = try Fixtures.request(deepLink: nil)
        request.body = ""
        let base = Self.apnsSize(PushContent(request: request, partner: Fixtures.partner()))
        // The validator caps the body at 1,000 characters; 4-byte characters reach the limit.
        let room = 4096 - base
        request.body = String(repeating: "😀", count: room / 4) + String(repeating: "x", count: room % 4)
        let fitting = PushContent(request: request, partner: Fixtures.partner())
        #expect(Self.apnsSize(fitting) == 4096)
        try PushPayload.checkSize(PushTemplate(fitting, signer: Self.signer))

        request.body += "x"
        let over = PushContent(request: request, partner: Fixtures.partner())
        let error = expectHeraldError(status: 422, code: "payload_too_large", field: "body") { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(over, signer: Self.signer))
        }
        #expect(error?.message.contains("1 over") == true)
    }

    @Test func fcmDataAtTheAPNsLimitIsWithinTheFCMLimit() throws {
        // FCM counts raw key and value bytes; the APNs JSON carries all of them plus syntax, so a
        // payload that fits APNs always fits FCM and the FCM check never refuses one APNs accepts.
        #expect(PushPayload.maxFCMDataBytes == 4096)
        let base = Self.apnsSize(try Self.content(dataValueLength: 0))
        let fitting = PushTemplate(try Self.content(dataValueLength: 4096 - base), signer: Self.signer)
            .render(deliveryID: Self.deliveryID)
        #expect(fitting.apns.count == 4096)
        #expect(fitting.fcmDataBytes < 4096)
        for length in [0, 10, 1000, 3000] {
            let rendered = PushTemplate(try Self.content(dataValueLength: length), signer: Self.signer)
                .render(deliveryID: Self.deliveryID)
            #expect(rendered.fcmDataBytes < rendered.apns.count)
        }
    }

    @Test func validatorLimitsAloneCanOverflowThePayload() throws {
        // 120 + 1,000 characters pass the validator, but at 4 bytes each they cannot fit: the
        // size check at intake is what refuses them.
        let request = try Fixtures.request(
            title: String(repeating: "😀", count: 120), body: String(repeating: "😀", count: 1000))
        let content = PushContent(request: request, partner: Fixtures.partner())
        expectHeraldError(status: 422, code: "payload_too_large", field: "body") { () throws(HeraldError) in
            try PushPayload.checkSize(PushTemplate(content, signer: Self.signer))
        }
    }
}
