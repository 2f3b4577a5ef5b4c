import Foundation
import HeraldCore
import Testing

@Suite struct PushRequestValidatorTests {
    static let now = Fixtures.now
    static let app = Fixtures.miniAppID
    static let minimalRecipients = JSONValue.object([("emails", .array([.string("alice@example.com")]))])

    /// A valid body with `changes` applied: a value replaces or adds the member, nil removes it.
    static func body(_ changes: [(String, JSONValue?)] = []) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("recipients", minimalRecipients),
            ("title", .string("Deposit pending")),
        ]
        for (key, value) in changes {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let value { members[index].value = value } else { members.remove(at: index) }
            } else if let value {
                members.append((key, value))
            }
        }
        return .object(members)
    }

    static func validate(_ json: JSONValue, rules: PushRules = PushRules(), now: Date = now) throws(HeraldError)
        -> PushRequest
    {
        try PushRequestValidator.validate(json, miniAppID: app, rules: rules, now: now)
    }

    static func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }

    static func recipients(emails: [String]? = nil, wallets: [String]? = nil) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let emails { members.append(("emails", strings(emails))) }
        if let wallets { members.append(("wallets", strings(wallets))) }
        return .object(members)
    }

    static func wallet(_ n: Int) -> String {
        "0x" + String(repeating: "0", count: 40 - String(n, radix: 16).count) + String(n, radix: 16)
    }

    // MARK: The whole body

    @Test func acceptsTheSpecExample() throws {
        let sendAt = Self.now.addingTimeInterval(3 * 86_400)
        let document = """
            { "recipients": { "emails": ["alice@example.com"], "wallets": ["0xABCDEF0123456789abcdef0123456789ABCDEF01"] },
              "title": "Deposit pending", "body": "Confirmations: 1/6",
              "deepLink": "basedapp://miniapp/fun.pull.gacha/deposits/0xabc",
              "data": { "txHash": "0x1234", "step": "1" },
              "sendAt": "\(ISO8601.format(sendAt))", "ttlSeconds": 86400 }
            """
        let request = try Self.validate(try json(document))
        #expect(request.emails == ["alice@example.com"])
        #expect(request.wallets == ["0xabcdef0123456789abcdef0123456789abcdef01"])
        #expect(request.identifierCount == 2)
        #expect(request.title == "Deposit pending")
        #expect(request.body == "Confirmations: 1/6")
        #expect(request.deepLink == "basedapp://miniapp/fun.pull.gacha/deposits/0xabc")
        #expect(request.data == [.init(key: "txHash", value: "0x1234"), .init(key: "step", value: "1")])
        #expect(request.sendAt == sendAt)
        #expect(request.ttlSeconds == 86_400)
    }

    @Test func minimalBodyHasDefaults() throws {
        let request = try Self.validate(Self.body())
        #expect(request.body == "")
        #expect(request.deepLink == nil)
        #expect(request.data.isEmpty)
        #expect(request.sendAt == nil)
        #expect(request.ttlSeconds == nil)
    }

    @Test func explicitNullsMeanAbsent() throws {
        let request = try Self.validate(
            Self.body([
                ("body", .null), ("deepLink", .null), ("data", .null), ("sendAt", .null), ("ttlSeconds", .null),
            ]))
        #expect(request.body == "" && request.deepLink == nil && request.data.isEmpty)
        #expect(request.sendAt == nil && request.ttlSeconds == nil)
    }

    @Test(arguments: [JSONValue.array([]), .string("x"), .null, .number(1)])
    func bodyMustBeAnObject(_ json: JSONValue) {
        let error = heraldError { () throws(HeraldError) in _ = try Self.validate(json) }
        #expect(error?.status == 400)
        #expect(error?.code == "invalid_field")
    }

    @Test(arguments: ["priority", "Title", "channel", "recipient", "sendat", "imageUrl", "badge", ""])
    func unknownTopLevelFieldsAreRejected(_ key: String) {
        expectHeraldError(status: 400, code: "unknown_field", field: key) { () throws(HeraldError) in
            _ = try Self.validate(Self.body([(key, .string("x"))]))
        }
    }

    @Test func unknownFieldIsReportedBeforeOtherProblems() {
        expectHeraldError(status: 400, code: "unknown_field", field: "extra") { () throws(HeraldError) in
            _ = try Self.validate(.object([("title", .number(1)), ("extra", .null)]))
        }
    }

    // MARK: Recipients

    @Test func recipientsAreRequired() {
        expectHeraldError(status: 400, code: "missing_field", field: "recipients") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", nil)]))
        }
    }

    @Test(arguments: [JSONValue.null, .array([.string("alice@example.com")]), .string("alice@example.com")])
    func recipientsMustBeAnObject(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "recipients") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", value)]))
        }
    }

    @Test(arguments: [
        recipients(), recipients(emails: []), recipients(wallets: []), recipients(emails: [], wallets: []),
        JSONValue.object([("emails", .null), ("wallets", .null)]),
    ])
    func atLeastOneRecipient(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "recipients") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", value)]))
        }
    }

    @Test func unknownRecipientKindsAreRejected() {
        let value = JSONValue.object([("emails", Self.strings(["a@example.com"])), ("phones", Self.strings(["+1555"]))])
        expectHeraldError(status: 400, code: "unknown_field", field: "recipients.phones") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", value)]))
        }
    }

    @Test func identifierListsMustBeArrays() {
        expectHeraldError(status: 400, code: "invalid_field", field: "recipients.emails") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", .object([("emails", .string("a@example.com"))]))]))
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipients.wallets") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", .object([("wallets", .object([]))]))]))
        }
    }

    @Test func invalidIdentifiersNameTheirPosition() {
        expectHeraldError(status: 400, code: "invalid_field", field: "recipients.emails[1]") { () throws(HeraldError) in
            _ = try Self.validate(
                Self.body([("recipients", Self.recipients(emails: ["a@example.com", "not-an-email"]))]))
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipients.wallets[0]") {
            () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", Self.recipients(wallets: ["0x123"]))]))
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipients.emails[0]") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("recipients", .object([("emails", .array([.number(1)]))]))]))
        }
    }

    @Test func recipientsAreNormalisedAndDeduplicatedKeepingFirstOrder() throws {
        let upper = "0x" + String(repeating: "AB", count: 20)
        let lower = upper.lowercased()
        let request = try Self.validate(
            Self.body([
                (
                    "recipients",
                    Self.recipients(
                        emails: [
                            "Bob@Example.com", "alice@example.com", "BOB@EXAMPLE.COM", "bob@example.com",
                            "ALICE@example.COM",
                        ],
                        wallets: [upper, Self.wallet(1), lower])
                )
            ]))
        #expect(request.emails == ["bob@example.com", "alice@example.com"])
        #expect(request.wallets == [lower, Self.wallet(1)])
        #expect(request.identifierCount == 4)
    }

    @Test func atMost1000RecipientsAcrossEmailsAndWallets() throws {
        let emails = (0..<600).map { "user\($0)@example.com" }
        let wallets = (0..<400).map(Self.wallet)
        let exactly = try Self.validate(Self.body([("recipients", Self.recipients(emails: emails, wallets: wallets))]))
        #expect(exactly.identifierCount == 1000)

        let error = expectHeraldError(status: 422, code: "too_many_recipients", field: "recipients") {
            () throws(HeraldError) in
            _ = try Self.validate(
                Self.body([("recipients", Self.recipients(emails: emails, wallets: wallets + [Self.wallet(400)]))]))
        }
        #expect(error?.message.contains("1001") == true)
    }

    @Test func limitCountsDistinctRecipientsAfterNormalisation() throws {
        let emails = (0..<1000).map { "user\($0)@example.com" }
        let duplicates = emails.prefix(500).map { $0.uppercased() }
        let request = try Self.validate(Self.body([("recipients", Self.recipients(emails: emails + duplicates))]))
        #expect(request.emails.count == 1000)
    }

    @Test func recipientLimitIsConfigurable() throws {
        var rules = PushRules()
        rules.maxRecipients = 3
        _ = try Self.validate(
            Self.body([("recipients", Self.recipients(emails: ["a@x.io", "b@x.io", "c@x.io"]))]), rules: rules)
        expectHeraldError(status: 422, code: "too_many_recipients", field: "recipients") { () throws(HeraldError) in
            _ = try Self.validate(
                Self.body([
                    (
                        "recipients",
                        Self.recipients(emails: ["a@x.io", "b@x.io"], wallets: [Self.wallet(1), Self.wallet(2)])
                    )
                ]),
                rules: rules)
        }
    }

    @Test func defaultRulesAreTheSpecs() {
        let rules = PushRules()
        #expect(rules.maxRecipients == 1000)
        #expect(rules.maxTitleCharacters == 120)
        #expect(rules.maxBodyCharacters == 1000)
        #expect(rules.deepLinkScheme == "basedapp")
        #expect(rules.maxScheduleAhead == 7 * 86_400)
    }

    // MARK: Title

    @Test func titleIsRequired() {
        expectHeraldError(status: 400, code: "missing_field", field: "title") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("title", nil)]))
        }
    }

    @Test(arguments: [JSONValue.null, .number(1), .bool(true), .array([.string("t")]), .object([])])
    func titleMustBeAString(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "title") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("title", value)]))
        }
    }

    // Lengths count Unicode scalars, as JSON Schema's maxLength does (docs/openapi.yaml): a family
    // emoji is 7, a flag 2, a decomposed "é" 2.
    @Test(arguments: [
        ("a", 1), ("x", 120), ("é", 120), ("e\u{301}", 60), ("😀", 120), ("👨‍👩‍👧‍👦", 17), ("🇫🇷", 60), ("中", 120),
    ])
    func titleOf1To120CharactersIsAccepted(_ unit: String, _ count: Int) throws {
        let title = String(repeating: unit, count: count)
        #expect(title.unicodeScalars.count <= 120)
        let request = try Self.validate(Self.body([("title", .string(title))]))
        #expect(request.title == title)
    }

    @Test(arguments: [("x", 121), ("é", 121), ("😀", 121), ("👨‍👩‍👧‍👦", 18), ("🇫🇷", 61), ("e\u{301}", 61), ("x", 0)])
    func titleOutside1To120CharactersIsRejected(_ unit: String, _ count: Int) {
        expectHeraldError(status: 400, code: "invalid_field", field: "title") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("title", .string(String(repeating: unit, count: count)))]))
        }
    }

    @Test func titleIsCountedInScalarsAsTheSchemaCountsNotCharactersOrBytes() throws {
        // 120 composed "é": 120 scalars, 240 bytes: accepted.
        _ = try Self.validate(Self.body([("title", .string(String(repeating: "\u{E9}", count: 120)))]))
        // 61 decomposed "é": 61 Characters but 122 scalars: refused, as the schema's maxLength refuses it.
        let decomposed = String(repeating: "e\u{301}", count: 61)
        #expect(decomposed.count == 61)
        expectHeraldError(status: 400, code: "invalid_field", field: "title") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("title", .string(decomposed))]))
        }
    }

    @Test func aTitleOfOnlyWhitespaceAndMarksOnWhitespaceIsBlank() throws {
        // " " + U+0301 is one Character that Swift calls whitespace; by scalars it is not only
        // whitespace, and the schema's pattern allows it: so does the server.
        _ = try Self.validate(Self.body([("title", .string(" \u{301}"))]))
        for blank in [" ", "\u{3000}", " \u{A0} "] {
            expectHeraldError(status: 400, code: "invalid_field", field: "title") { () throws(HeraldError) in
                _ = try Self.validate(Self.body([("title", .string(blank))]))
            }
        }
    }

    @Test(arguments: ["\n", "\r", "\t", "\u{0}", "\u{7}", "\u{1B}", "\u{1F}", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}"])
    func titleMustNotContainControlCharacters(_ control: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "title") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("title", .string("Deposit" + control + "pending"))]))
        }
    }

    @Test func titleLimitIsConfigurable() throws {
        var rules = PushRules()
        rules.maxTitleCharacters = 5
        _ = try Self.validate(Self.body([("title", .string("12345"))]), rules: rules)
        expectHeraldError(status: 400, code: "invalid_field", field: "title") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("title", .string("123456"))]), rules: rules)
        }
    }

    // MARK: Body

    @Test(arguments: [("", 0), ("x", 1000), ("😀", 1000), ("\r\n", 500), ("e\u{301}", 500)])
    func bodyOf0To1000CharactersIsAccepted(_ unit: String, _ count: Int) throws {
        let body = String(repeating: unit, count: count)
        let request = try Self.validate(Self.body([("body", .string(body))]))
        #expect(request.body == body)
    }

    @Test(arguments: [("x", 1001), ("😀", 1001), ("\n", 1001)])
    func bodyOver1000CharactersIsRejected(_ unit: String, _ count: Int) {
        expectHeraldError(status: 400, code: "invalid_field", field: "body") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("body", .string(String(repeating: unit, count: count)))]))
        }
    }

    @Test func bodyMayContainNewlinesAndTabs() throws {
        let text = "Line one\nLine two\r\nCol\tumn"
        #expect(try Self.validate(Self.body([("body", .string(text))])).body == text)
    }

    @Test(arguments: ["\u{0}", "\u{7}", "\u{8}", "\u{B}", "\u{C}", "\u{1B}", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}"])
    func bodyMustNotContainOtherControlCharacters(_ control: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "body") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("body", .string("a" + control + "b"))]))
        }
    }

    @Test(arguments: [JSONValue.number(1), .bool(false), .array([]), .object([])])
    func bodyMustBeAString(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "body") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("body", value)]))
        }
    }

    // MARK: Deep link

    @Test func deepLinkInsideTheNamespaceIsKept() throws {
        let link = "basedapp://miniapp/fun.pull.gacha/deposits/0xabc?x=1#y"
        #expect(try Self.validate(Self.body([("deepLink", .string(link))])).deepLink == link)
    }

    @Test(arguments: [
        "basedapp://miniapp/other.app", "basedapp://miniapp/fun.pull.gachaEVIL",
        "basedapp://miniapp/fun.pull.gacha/../other.app", "https://example.com",
    ])
    func deepLinkOutsideTheNamespaceIs403(_ link: String) {
        expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("deepLink", .string(link))]))
        }
    }

    @Test(arguments: [JSONValue.number(1), .bool(true), .object([]), .array([])])
    func deepLinkMustBeAString(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "deepLink") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("deepLink", value)]))
        }
    }

    @Test func deepLinkSchemeComesFromTheRules() throws {
        var rules = PushRules()
        rules.deepLinkScheme = "herald"
        let link = "herald://miniapp/fun.pull.gacha/x"
        #expect(try Self.validate(Self.body([("deepLink", .string(link))]), rules: rules).deepLink == link)
        expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
            _ = try Self.validate(
                Self.body([("deepLink", .string("basedapp://miniapp/fun.pull.gacha/x"))]), rules: rules)
        }
    }

    // MARK: Data

    @Test func dataKeepsThePartnersOrder() throws {
        let data = JSONValue.object([("z", .string("1")), ("a", .string("")), ("m", .string("é 😀"))])
        let request = try Self.validate(Self.body([("data", data)]))
        #expect(
            request.data == [.init(key: "z", value: "1"), .init(key: "a", value: ""), .init(key: "m", value: "é 😀")])
    }

    @Test(arguments: [
        ("n", JSONValue.number(1), "number"), ("b", .bool(true), "boolean"), ("z", .null, "null"),
        ("o", .object([]), "object"), ("a", .array([.string("x")]), "array"),
    ])
    func dataValuesMustBeStrings(_ key: String, _ value: JSONValue, _ typeName: String) {
        let error = expectHeraldError(status: 400, code: "invalid_field", field: "data.\(key)") {
            () throws(HeraldError) in
            _ = try Self.validate(Self.body([("data", .object([("ok", .string("fine")), (key, value)]))]))
        }
        #expect(error?.message.contains(typeName) == true)
    }

    @Test(arguments: [JSONValue.array([]), .string("k=v"), .number(1), .bool(true)])
    func dataMustBeAnObject(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "data") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("data", value)]))
        }
    }

    @Test func dataKeysAre1To128Characters() throws {
        let longest = String(repeating: "k", count: 128)
        _ = try Self.validate(Self.body([("data", .object([(longest, .string("v"))]))]))
        expectHeraldError(status: 400, code: "invalid_field", field: "data.\(longest)k") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("data", .object([(longest + "k", .string("v"))]))]))
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "data.") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("data", .object([("", .string("v"))]))]))
        }
        // Scalars, as the schema's propertyNames maxLength counts: 128 "é" (256 bytes) is fine.
        let wide = String(repeating: "é", count: 128)
        _ = try Self.validate(Self.body([("data", .object([(wide, .string("v"))]))]))
        #expect(
            heraldError { () throws(HeraldError) in
                _ = try Self.validate(Self.body([("data", .object([(wide + "é", .string("v"))]))]))
            }?.field == "data.\(wide)é")
    }

    /// The keys docs/api.md reserves, the ones Herald writes beside `aps`, and FCM's reserved words.
    static let reservedKeys = [
        "channel", "miniAppId", "deepLink", "deliveryId", "sig", "kid", "from", "message_type",
        "google", "googleX", "google.sent_time", "Google", "GOOGLE_x", "gOoGlE", "gcm", "gcm.notification.title",
        "GCM", "Gcm_thing", "gcmX",
        "aps", "title", "body", "senderName", "imageUrl", "isGroup", "notification", "icon",
        // Any letter case: an app that reads keys case-insensitively would take these for Herald's.
        "Channel", "CHANNEL", "SIG", "Sig", "KID", "FROM", "From", "Icon", "ICON", "MiniAppId", "miniappid",
        "DEEPLINK", "DeliveryID", "Message_Type", "APS", "Title", "BODY", "sendername", "IMAGEURL", "IsGroup",
        "Notification", "collapseKey", "CollapseKey", "COLLAPSEKEY",
    ]

    @Test(arguments: reservedKeys)
    func reservedDataKeysAreRejected(_ key: String) {
        #expect(PushRules.isReservedDataKey(key))
        let error = expectHeraldError(status: 400, code: "invalid_field", field: "data.\(key)") {
            () throws(HeraldError) in
            _ = try Self.validate(Self.body([("data", .object([("fine", .string("1")), (key, .string("x"))]))]))
        }
        #expect(error?.message.contains("reserved") == true)
    }

    @Test func reservedKeySetCoversTheSpec() {
        for key in ["channel", "miniAppId", "deepLink", "deliveryId", "sig", "kid", "from", "message_type"] {
            #expect(PushRules.reservedDataKeys.contains(key), "\(key)")
        }
        // Every member of the published set is refused by the validator.
        for key in PushRules.reservedDataKeys {
            #expect(
                heraldError { () throws(HeraldError) in
                    _ = try Self.validate(Self.body([("data", .object([(key, .string("x"))]))]))
                }?.field == "data.\(key)", "\(key)")
        }
    }

    @Test(arguments: [
        "txHash", "googl", "xgoogle", "my_google", "gc", "g", "fromage", "kids", "signature", "channelName",
        "deep_link", "message", "\u{212A}id", "S\u{0131}g", "Channel2",
    ])
    func nearMissesAreNotReserved(_ key: String) throws {
        #expect(!PushRules.isReservedDataKey(key))
        let request = try Self.validate(Self.body([("data", .object([(key, .string("x"))]))]))
        #expect(request.data == [.init(key: key, value: "x")])
    }

    // MARK: interruptionLevel

    @Test func interruptionLevelIsActiveWhenAbsentOrNull() throws {
        #expect(try Self.validate(Self.body()).interruptionLevel == .active)
        #expect(try Self.validate(Self.body([("interruptionLevel", .null)])).interruptionLevel == .active)
    }

    @Test(arguments: [("passive", InterruptionLevel.passive), ("active", .active), ("time-sensitive", .timeSensitive)])
    func interruptionLevelsTheSpecAllows(_ text: String, _ level: InterruptionLevel) throws {
        #expect(try Self.validate(Self.body([("interruptionLevel", .string(text))])).interruptionLevel == level)
    }

    /// `critical` is Apple's, but needs an entitlement no partner push has; the rest are misspellings or
    /// not strings.
    @Test(arguments: [
        JSONValue.string("critical"), .string("Active"), .string("time_sensitive"), .string("timeSensitive"),
        .string(""), .string(" passive"), .number(1), .bool(true), .array([.string("passive")]),
        .object([("level", .string("passive"))]),
    ])
    func otherInterruptionLevelsAreRefused(_ value: JSONValue) {
        let error = expectHeraldError(status: 400, code: "invalid_field", field: "interruptionLevel") {
            () throws(HeraldError) in
            _ = try Self.validate(Self.body([("interruptionLevel", value)]))
        }
        #expect(error?.message == "interruptionLevel must be passive, active or time-sensitive.")
    }

    @Test func timeSensitiveNeedsThePartnersPermission() throws {
        let refused = Fixtures.partner(allowTimeSensitive: false)
        let allowed = Fixtures.partner(allowTimeSensitive: true)
        let error = expectHeraldError(status: 403, code: "time_sensitive_not_allowed", field: "interruptionLevel") {
            () throws(HeraldError) in
            try InterruptionLevel.timeSensitive.authorize(for: refused)
        }
        #expect(error?.message.contains("admin") == true)
        try InterruptionLevel.timeSensitive.authorize(for: allowed)
        for level in [InterruptionLevel.passive, .active] {
            try level.authorize(for: refused)
            try level.authorize(for: allowed)
        }
    }

    // MARK: sendAt

    static func sendAt(_ offset: TimeInterval) -> JSONValue { .string(ISO8601.format(now.addingTimeInterval(offset))) }

    @Test(arguments: [1.0, 60, 3_600, 86_400, 518_400, 604_800] as [TimeInterval])
    func sendAtUpTo7DaysAheadSchedules(_ offset: TimeInterval) throws {
        let request = try Self.validate(Self.body([("sendAt", Self.sendAt(offset))]))
        #expect(request.sendAt == Self.now.addingTimeInterval(offset))
    }

    @Test(arguments: [604_801, 604_800.001, 691_200, 31_536_000] as [TimeInterval])
    func sendAtBeyond7DaysIs422(_ offset: TimeInterval) {
        expectHeraldError(status: 422, code: "send_at_out_of_range", field: "sendAt") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("sendAt", Self.sendAt(offset))]))
        }
    }

    @Test(arguments: [0, -1, -60, -300] as [TimeInterval])
    func sendAtNowOrSlightlyPastMeansNow(_ offset: TimeInterval) throws {
        let request = try Self.validate(Self.body([("sendAt", Self.sendAt(offset))]))
        #expect(request.sendAt == nil)
    }

    @Test(arguments: [-301, -3_600, -86_400, -315_360_000] as [TimeInterval])
    func sendAtFarInThePastIsRefused(_ offset: TimeInterval) {
        expectHeraldError(status: 422, code: "send_at_out_of_range", field: "sendAt") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("sendAt", Self.sendAt(offset))]))
        }
    }

    @Test func sendAtAcceptsOffsetsAndFractions() throws {
        // now is 2026-06-01T00:00:00Z.
        let withOffset = try Self.validate(Self.body([("sendAt", .string("2026-06-02T09:00:00+02:00"))]))
        #expect(withOffset.sendAt == Self.now.addingTimeInterval(86_400 + 7 * 3_600))
        let plain = try Self.validate(Self.body([("sendAt", .string("2026-06-01T10:00:00Z"))]))
        #expect(plain.sendAt == Self.now.addingTimeInterval(10 * 3_600))
        let fraction = try Self.validate(Self.body([("sendAt", .string("2026-06-01T10:00:00.250Z"))]))
        #expect(fraction.sendAt == Self.now.addingTimeInterval(10 * 3_600 + 0.25))
    }

    @Test(arguments: [
        JSONValue.string("tomorrow"), .string("2026-06-02"), .string("2026-06-02T09:00:00"),
        .string("2026-13-02T09:00:00Z"),
        .string(""), .string("2026-06-02 09:00:00Z"), .number(1_780_300_000), .bool(true), .object([]),
    ])
    func sendAtMustBeAnISO8601TimestampWithZone(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "sendAt") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("sendAt", value)]))
        }
    }

    /// June has 30 days. With "now" on 2026-06-28, "2026-06-31" would roll over to 2026-07-01,
    /// inside the 7-day window, and be scheduled instead of refused as a bad timestamp.
    @Test func sendAtOnADayThatDoesNotExistIsRejected() {
        let now = Date(timeIntervalSince1970: 1_782_604_800)  // 2026-06-28T00:00:00Z
        #expect(ISO8601.format(now) == "2026-06-28T00:00:00.000Z")
        expectHeraldError(status: 400, code: "invalid_field", field: "sendAt") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("sendAt", .string("2026-06-31T09:00:00Z"))]), now: now)
        }
    }

    // MARK: ttlSeconds

    @Test(arguments: [1, 60, 86_400, 2_419_200] as [Int])
    func ttlSecondsWithinBoundsIsKept(_ ttl: Int) throws {
        #expect(try Self.validate(Self.body([("ttlSeconds", .number(Double(ttl)))])).ttlSeconds == ttl)
    }

    @Test(arguments: [
        JSONValue.number(0), .number(-1), .number(2_419_201), .number(1e12), .number(1.5), .number(0.5),
        .string("60"), .bool(true), .array([]),
    ])
    func ttlSecondsOutOfBoundsOrNotAWholeNumberIsRejected(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "ttlSeconds") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("ttlSeconds", value)]))
        }
    }

    @Test func ttlSecondsFromJSONText() throws {
        #expect(
            try Self.validate(try json(#"{"recipients":{"emails":["a@b.co"]},"title":"t","ttlSeconds":3.6e3}"#))
                .ttlSeconds == 3600)
    }

    @Test(arguments: ["k", "deposit 0xabc", #"a "quoted" ~key~"#, String(repeating: "x", count: 64), " "])
    func collapseKeyOf1To64PrintableASCIIIsKept(_ key: String) throws {
        #expect(try Self.validate(Self.body([("collapseKey", .string(key))])).collapseKey == key)
        #expect(try Self.validate(Self.body()).collapseKey == nil)
        #expect(try Self.validate(Self.body([("collapseKey", .null)])).collapseKey == nil)
    }

    @Test(arguments: [
        JSONValue.string(""), .string(String(repeating: "x", count: 65)), .string("é"), .string("a\tb"),
        .string("a\u{7F}"), .string("😀"), .number(1), .bool(true), .array([.string("k")]), .object([]),
    ])
    func collapseKeyOtherwiseIsRefused(_ value: JSONValue) {
        expectHeraldError(status: 400, code: "invalid_field", field: "collapseKey") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("collapseKey", value)]))
        }
    }
}
