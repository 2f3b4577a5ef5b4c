import HeraldCore
import Testing

@Suite struct IdentifiersTests {
    // MARK: Emails

    @Test(arguments: [
        ("alice@example.com", "alice@example.com"),
        ("Alice@Example.COM", "alice@example.com"),
        ("ALICE.SMITH+TAG@MAIL.EXAMPLE.CO.UK", "alice.smith+tag@mail.example.co.uk"),
        ("ÉLODIE@EXAMPLE.FR", "élodie@example.fr"),
        ("bob@localhost", "bob@localhost"),
        ("o'neil_x-y@sub-domain.example", "o'neil_x-y@sub-domain.example"),
    ])
    func normalisesEmailsByCaseFolding(_ raw: String, _ normalised: String) {
        #expect(Identifiers.normalizedEmail(raw) == normalised)
    }

    @Test func emailsDifferingOnlyInCaseNormaliseToTheSameValue() {
        let forms = ["bob@example.com", "BOB@EXAMPLE.COM", "Bob@Example.Com", "bOb@eXample.cOm"]
        #expect(Set(forms.compactMap(Identifiers.normalizedEmail)) == ["bob@example.com"])
    }

    @Test(arguments: [
        "", "alice", "alice@", "@example.com", "alice@@example.com", "a@b@example.com", "alice@example",
        "alice @example.com", " alice@example.com", "alice@example.com ", "alice@exa mple.com",
        "alice\t@example.com", "alice\n@example.com", "alice@example.com\r", "ali\u{0}ce@example.com",
        "ali\u{7F}ce@example.com", "ali\u{1B}ce@example.com", "alice\u{A0}@example.com", "alice@example.com\u{2028}",
        "alice\u{3000}@example.com", "alice\u{85}@example.com",
    ])
    func rejectsImplausibleEmails(_ raw: String) {
        #expect(Identifiers.normalizedEmail(raw) == nil)
    }

    /// C1 control characters (U+0080-U+009F) are control characters like the C0 ones the
    /// function already refuses; its documentation promises "no ... control characters".
    @Test(arguments: ["ali\u{80}ce@example.com", "alice@exa\u{9B}mple.com", "alice\u{9F}@example.com"])
    func rejectsC1ControlCharactersInEmails(_ raw: String) {
        #expect(Identifiers.normalizedEmail(raw) == nil)
    }

    /// The characters refused are judged on the address as sent, as the schema's pattern reads it: U+2329 is a
    /// symbol a joiner may follow, though NFC maps it to U+3008, which is none (a fuzzing finding).
    @Test func aJoinerBetweenEmojiIsJudgedBeforeNormalising() {
        #expect(
            Identifiers.normalizedEmail("a\u{2329}\u{200D}\u{21D4}@example.com")
                == "a\u{3008}\u{200D}\u{21D4}@example.com")
        #expect(Identifiers.normalizedEmail("a\u{200D}b@example.com") == nil)
    }

    @Test func emailsAreAtMost254Characters() {
        let domain = "@example.com"  // 12 characters
        let longest = String(repeating: "a", count: 254 - domain.utf8.count) + domain
        #expect(Identifiers.normalizedEmail(longest) == longest)
        let tooLong = "a" + longest
        #expect(Identifiers.normalizedEmail(tooLong) == nil)
        // Counted in Unicode scalars as sent, as JSON Schema's maxLength counts (docs/openapi.yaml).
        let wide = String(repeating: "é", count: 242) + domain  // 254 scalars, 496 bytes
        #expect(Identifiers.normalizedEmail(wide) == wide)
        #expect(Identifiers.normalizedEmail("é" + wide) == nil)
    }

    @Test func emailsAreStoredInNFCWhateverFormIsSent() throws {
        let composed = Identifiers.normalizedEmail("R\u{C9}MY@example.com")
        let decomposed = Identifiers.normalizedEmail("RE\u{301}MY@example.com")
        let lowerDecomposed = Identifiers.normalizedEmail("re\u{301}my@example.com")
        // Compared as bytes, as Postgres compares them: Swift's == would call them equal anyway.
        let expected = Array("r\u{E9}my@example.com".utf8)
        #expect(composed.map { Array($0.utf8) } == expected)
        #expect(decomposed.map { Array($0.utf8) } == expected)
        #expect(lowerDecomposed.map { Array($0.utf8) } == expected)
    }

    @Test func theAtAndDotOfAnEmailAreFoundEvenWithACombiningMarkAfterThem() {
        // "@" + U+0301 is one Character that is not "@": still the address's "@" for the schema.
        #expect(Identifiers.normalizedEmail("a@\u{301}b.com") != nil)
        #expect(Identifiers.normalizedEmail("a@b.\u{301}com") != nil)
        #expect(Identifiers.normalizedEmail("a\u{301}@\u{301}b") == nil)
    }

    // MARK: Wallets

    static let wallet = "0x" + "52908400098527886e0f7030069857d2e4169ee7"

    @Test func normalisesWalletsToLowercase() {
        #expect(Identifiers.normalizedWallet(Self.wallet) == Self.wallet)
        #expect(Identifiers.normalizedWallet(Self.wallet.uppercased()) == Self.wallet)
        #expect(Identifiers.normalizedWallet("0x52908400098527886E0F7030069857D2E4169EE7") == Self.wallet)
        #expect(
            Identifiers.normalizedWallet("0x" + String(repeating: "F", count: 40)) == "0x"
                + String(repeating: "f", count: 40))
    }

    @Test(arguments: [
        "", "0x", "52908400098527886e0f7030069857d2e4169ee7",  // no prefix
        "0x52908400098527886e0f7030069857d2e4169ee",  // 39 hex
        "0x52908400098527886e0f7030069857d2e4169ee71",  // 41 hex
        "0x52908400098527886e0f7030069857d2e4169eg7",  // g
        "0x52908400098527886e0f7030069857d2e4169e 7",  // space
        "1x52908400098527886e0f7030069857d2e4169ee7",
        "0y52908400098527886e0f7030069857d2e4169ee7",
        "00x2908400098527886e0f7030069857d2e4169ee7",
        " 0x52908400098527886e0f7030069857d2e4169ee7",
        "0x52908400098527886e0f7030069857d2e4169ee7\n",
        "0x５2908400098527886e0f7030069857d2e4169ee",  // fullwidth digit
    ])
    func rejectsMalformedWallets(_ raw: String) {
        #expect(Identifiers.normalizedWallet(raw) == nil)
    }

    // MARK: Mini-app ids, external ids, bundle ids

    @Test(arguments: ["fun.pull.gacha", "a", "A-b_c.D9", "com.example.app-2", String(repeating: "x", count: 128)])
    func acceptsMiniAppIDs(_ raw: String) {
        #expect(Identifiers.isValidMiniAppID(raw))
    }

    @Test(arguments: [
        "", ".hidden", "a..b", "a/b", "a b", "a:b", "a@b", "a?b", "a#b", "a%2e", "é",
        String(repeating: "x", count: 129),
        "..", ".", "a\\b",
    ])
    func rejectsMiniAppIDs(_ raw: String) {
        #expect(!Identifiers.isValidMiniAppID(raw))
    }

    @Test(arguments: [
        "user-1", "u:42", "tenant.a_b", "0190a6b2-7c1e-7abc-8def-0123456789ab", String(repeating: "z", count: 128),
    ])
    func acceptsExternalIDs(_ raw: String) {
        #expect(Identifiers.isValidExternalID(raw))
    }

    @Test(arguments: ["", "a b", "a/b", "a@b", "ü", "a\n", String(repeating: "z", count: 129)])
    func rejectsExternalIDs(_ raw: String) {
        #expect(!Identifiers.isValidExternalID(raw))
    }

    @Test func bundleIDs() {
        #expect(Identifiers.isValidBundleID("com.example.host-app"))
        #expect(Identifiers.isValidBundleID(String(repeating: "a", count: 155)))
        #expect(!Identifiers.isValidBundleID(String(repeating: "a", count: 156)))
        #expect(!Identifiers.isValidBundleID("com.example_app"))
        #expect(!Identifiers.isValidBundleID(""))
    }

    // MARK: Idempotency keys

    @Test(arguments: [
        "a", "order-42", "with spaces are printable", "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./",
        String(repeating: "k", count: 255),
    ])
    func acceptsIdempotencyKeys(_ raw: String) {
        #expect(Identifiers.isValidIdempotencyKey(raw))
    }

    @Test(arguments: [
        "", String(repeating: "k", count: 256), "tab\there", "new\nline", "nul\u{0}", "del\u{7F}", "é", "😀",
        "\u{1F}",
    ])
    func rejectsIdempotencyKeys(_ raw: String) {
        #expect(!Identifiers.isValidIdempotencyKey(raw))
    }

    @Test func everyPrintableASCIICharacterIsAllowedInIdempotencyKeys() {
        for value in UInt8(0x20)...UInt8(0x7E) {
            #expect(Identifiers.isValidIdempotencyKey(String(UnicodeScalar(value))), "\(value)")
        }
        for value in Array(UInt8(0)..<UInt8(0x20)) + [0x7F] {
            #expect(!Identifiers.isValidIdempotencyKey(String(UnicodeScalar(value))), "\(value)")
        }
    }

    // MARK: Device tokens

    static let apnsToken = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"

    @Test func normalisesAPNsTokensToLowercase() {
        #expect(Self.apnsToken.utf8.count == 64)
        #expect(Identifiers.normalizedAPNsToken(Self.apnsToken) == Self.apnsToken)
        #expect(Identifiers.normalizedAPNsToken(Self.apnsToken.uppercased()) == Self.apnsToken)
        // Older, longer tokens (even length, up to 200) are accepted too.
        let long = String(repeating: "AB", count: 100)
        #expect(Identifiers.normalizedAPNsToken(long) == String(repeating: "ab", count: 100))
    }

    static let malformedAPNsTokens: [String] = {
        let short: String = String(apnsToken.dropLast())
        var list: [String] = ["", short, String(apnsToken.dropLast(2))]
        list.append(apnsToken + "a")
        list.append(short + "g")
        list.append(short + " ")
        list.append("<" + apnsToken + ">")
        list.append(String(repeating: "ab", count: 101))
        list.append("0x" + String(apnsToken.dropLast(2)))
        return list
    }()

    @Test(arguments: malformedAPNsTokens)
    func rejectsMalformedAPNsTokens(_ raw: String) {
        #expect(Identifiers.normalizedAPNsToken(raw) == nil)
    }

    static let fcmToken = "dQw4w9WgXcQ:APA91bH-_" + String(repeating: "Zz09", count: 30)

    @Test func acceptsFCMTokens() {
        #expect(Identifiers.isValidFCMToken(Self.fcmToken))
        #expect(Identifiers.isValidFCMToken(String(repeating: "a", count: 32)))
        #expect(Identifiers.isValidFCMToken(String(repeating: "a", count: 4096)))
    }

    static let malformedFCMTokens: [String] = {
        let forty = String(repeating: "a", count: 40)
        var list: [String] = ["", String(repeating: "a", count: 31), String(repeating: "a", count: 4097)]
        for bad in ["+", "/", "=", " ", ".", "é"] { list.append(forty + bad) }
        return list
    }()

    @Test(arguments: malformedFCMTokens)
    func rejectsMalformedFCMTokens(_ raw: String) {
        #expect(!Identifiers.isValidFCMToken(raw))
    }
}
