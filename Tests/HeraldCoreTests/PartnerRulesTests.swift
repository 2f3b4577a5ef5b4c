import HeraldCore
import Testing

@Suite struct PartnerRulesTests {
    @Test(arguments: [
        "Gacha", "A", "Pull & Win", "Ünïcode Ltd", "😀 Club", String(repeating: "x", count: 64),
        String(repeating: "😀", count: 64),
    ])
    func acceptsDisplayNames(_ name: String) throws {
        #expect(try PartnerRules.displayName(name) == name)
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 65), "[Bank]", "Fake] [Bank", "a[b", "a]b", " Gacha", "Gacha ", "\tGacha",
        "Gacha\n", "Ga\u{0}cha", "Ga\u{1B}cha", "\u{A0}Gacha",
    ])
    func rejectsDisplayNames(_ name: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "displayName") { () throws(HeraldError) in
            _ = try PartnerRules.displayName(name)
        }
    }

    /// The display name becomes the title prefix, and titles refuse U+007F-U+009F; the display
    /// name's rule says "no control characters" but only checks below U+0020.
    @Test(arguments: ["Ga\u{7F}cha", "Ga\u{85}cha", "Ga\u{9B}cha"])
    func rejectsDeleteAndC1ControlsInDisplayNames(_ name: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "displayName") { () throws(HeraldError) in
            _ = try PartnerRules.displayName(name)
        }
    }

    @Test(arguments: [
        "default", "chime.caf", "My Chime.aiff", "ping-2_final.wav", "é.caf", "a", "x.",
        String(repeating: "x", count: 64), String(repeating: "😀", count: 64),
    ])
    func acceptsSoundNames(_ name: String) throws {
        #expect(try PartnerRules.soundName(name) == name)
        #expect(try PartnerRules.sound(.string(name)) == .named(name))
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 65), "sounds/chime.caf", "/chime.caf", "..\\chime.caf", "a\\b", ".hidden.caf",
        ".", "..", " chime.caf", "chime.caf ", "\tchime", "chime\n", "chi\u{0}me", "chi\u{7F}me", "chi\u{202E}me",
        "\u{A0}chime", "chime\u{3000}",
    ])
    func rejectsSoundNames(_ name: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "sound") { () throws(HeraldError) in
            _ = try PartnerRules.soundName(name)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "sound") { () throws(HeraldError) in
            _ = try PartnerRules.sound(.string(name))
        }
    }

    @Test func soundNullIsSilentAndOtherTypesAreRefused() throws {
        #expect(try PartnerRules.sound(.null) == .silent)
        #expect(NotificationSound.silent.name == nil)
        #expect(NotificationSound(name: nil) == .silent)
        #expect(NotificationSound(name: "default") == .systemDefault)
        for value: JSONValue in [.number(1), .bool(false), .array([.string("chime.caf")]), .object([])] {
            let error = expectHeraldError(status: 400, code: "invalid_field", field: "sound") {
                () throws(HeraldError) in
                _ = try PartnerRules.sound(value)
            }
            #expect(error?.message.contains("null") == true)
        }
    }

    @Test(arguments: ["https://cdn.example.com/icons/gacha.png", "https://h/x.png"])
    func acceptsIconURLs(_ url: String) throws {
        #expect(try PartnerRules.iconURL(url) == url)
    }

    @Test(arguments: [
        "http://cdn.example.com/i.png", "https://", "cdn.example.com/i.png", "https://cdn.example.com/a b.png",
        "https://cdn.example.com/" + String(repeating: "a", count: 2030), "ftp://x/y.png", "",
    ])
    func rejectsIconURLs(_ url: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "iconUrl") { () throws(HeraldError) in
            _ = try PartnerRules.iconURL(url)
        }
    }

    @Test func iconURLsAreAtMost2048Bytes() throws {
        let prefix = "https://cdn.example.com/"
        let longest = prefix + String(repeating: "a", count: 2048 - prefix.utf8.count)
        _ = try PartnerRules.iconURL(longest)
        expectHeraldError(status: 400, code: "invalid_field", field: "iconUrl") { () throws(HeraldError) in
            _ = try PartnerRules.iconURL(longest + "a")
        }
    }

    @Test func miniAppAndTenantIDs() throws {
        #expect(try PartnerRules.miniAppID("fun.pull.gacha") == "fun.pull.gacha")
        expectHeraldError(status: 400, code: "invalid_field", field: "miniAppId") { () throws(HeraldError) in
            _ = try PartnerRules.miniAppID("fun/pull")
        }
        #expect(try PartnerRules.tenantID("tenant:1") == "tenant:1")
        expectHeraldError(status: 400, code: "invalid_field", field: "tenantId") { () throws(HeraldError) in
            _ = try PartnerRules.tenantID("tenant 1")
        }
    }

    @Test func rateLimitRanges() {
        #expect(PartnerRules.rateLimitPerMinuteRange.contains(60))
        #expect(!PartnerRules.rateLimitPerMinuteRange.contains(0))
        #expect(PartnerRules.rateLimitPerDayRange.contains(10_000))
        #expect(!PartnerRules.rateLimitPerDayRange.contains(0))
    }
}
