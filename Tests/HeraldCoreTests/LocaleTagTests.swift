import Foundation
import Testing

@testable import HeraldCore

/// BCP 47 tags as a user's `locale` and a push's `localized` keys: syntax, canonical case, and the lookup rule.
@Suite struct LocaleTagTests {
    @Test("well-formed tags in any case come back in canonical case: language lower, script title, region upper")
    func canonicalCase() {
        let cases: [(String, String)] = [
            ("de", "de"), ("DE", "de"), ("pt-br", "pt-BR"), ("PT-br", "pt-BR"), ("zh-hant-tw", "zh-Hant-TW"),
            ("ZH-HANS", "zh-Hans"), ("es-419", "es-419"), ("sr-Latn-RS", "sr-Latn-RS"), ("de-CH-1996", "de-CH-1996"),
            // Well-formed, though not valid (RFC 5646 section 2.2.9): a repeated variant or singleton.
            ("de-1996-1996", "de-1996-1996"), ("en-a-bb-a-cc", "en-a-bb-a-cc"),
            ("zh-yue-HK", "zh-yue-HK"), ("en-US-u-ca-gregory", "en-US-u-ca-gregory"), ("x-Private", "x-private"),
            ("en-a-BB-x-CC", "en-a-bb-x-cc"), ("haw", "haw"),
        ]
        for (given, canonical) in cases {
            #expect(LocaleTag(given)?.text == canonical, "\(given)")
        }
    }

    @Test("malformed tags, wrong characters and tags over 35 characters are refused")
    func malformed() {
        let refused = [
            "", "d", "de_DE", "de-", "-de", "de--DE", "123", "de-DE-DE", "en-a",
            "deutsch-de-ch", "x", "x-", "en-x-toolongsubtag", "de DE", "dé",
            "en-US-" + String(repeating: "a", count: 30),
            "a1",
        ]
        for tag in refused {
            #expect(LocaleTag(tag) == nil, "\(tag)")
        }
        // 35 characters is the most.
        #expect(LocaleTag("zh-Hant-TW-u-ca-chinese-nu-hanidecx")?.text == "zh-Hant-TW-u-ca-chinese-nu-hanidecx")
        #expect(LocaleTag("zh-Hant-TW-u-ca-chinese-nu-hanidec-x-a") == nil)
    }

    @Test("lookup: the exact tag, then the tag cut subtag by subtag down to the language, else the default")
    func lookup() {
        let available = ["de", "pt", "zh-Hant", "en-GB"]
        #expect(LocaleTag.lookup("de", in: available) == "de")
        #expect(LocaleTag.lookup("DE-at", in: available) == "de")
        #expect(LocaleTag.lookup("pt-BR", in: available) == "pt")
        #expect(LocaleTag.lookup("zh-Hant-TW", in: available) == "zh-Hant")
        #expect(LocaleTag.lookup("zh-Hans-CN", in: available) == nil)
        // A less specific locale never takes a more specific variant (RFC 4647 lookup).
        #expect(LocaleTag.lookup("en", in: available) == nil)
        #expect(LocaleTag.lookup("fr", in: available) == nil)
        #expect(LocaleTag.lookup(nil, in: available) == nil)
        #expect(LocaleTag("en-a-bb-cc")?.lookupChain == ["en-a-bb-cc", "en-a-bb", "en"])
        #expect(LocaleTag("pt-BR")?.lookupChain == ["pt-BR", "pt"])
    }

    @Test("a user body's locale: absent keeps, null clears, a tag sets in canonical case, a bad one is 400")
    func update() throws {
        let parse = { (text: String) throws(HeraldError) -> LocaleUpdate in
            try LocaleUpdate.parse(JSONFields(try! json(text), allowed: ["locale"]))
        }
        #expect(try parse("{}") == .keep)
        #expect(try parse(#"{"locale":null}"#) == .set(nil))
        #expect(try parse(#"{"locale":"pt-br"}"#) == .set(LocaleTag("pt-BR")))
        expectHeraldError(status: 400, code: "invalid_locale", field: "locale") { () throws(HeraldError) in
            _ = try parse(#"{"locale":"pt_BR"}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "locale") { () throws(HeraldError) in
            _ = try parse(#"{"locale":7}"#)
        }
    }
}

/// A push's `localized` variants: validated as the default title and body are, with their own field paths.
@Suite struct LocalizedPushTests {
    static func validate(_ localized: String, rules: PushRules = PushRules()) throws(HeraldError) -> PushRequest {
        try PushRequestValidator.validate(
            try! json(#"{"recipients":{"emails":["a@example.com"]},"title":"Hi","localized":\#(localized)}"#),
            miniAppID: Fixtures.miniAppID, rules: rules, now: Fixtures.now)
    }

    @Test("variants keep the partner's order, tags in canonical case, body optional; the user's is looked up")
    func variants() throws {
        let push = try Self.validate(#"{"DE":{"title":"Hallo","body":"Welt"},"pt":{"title":"Olá"}}"#)
        #expect(
            push.localized == [
                LocalizedText(tag: "de", title: "Hallo", body: "Welt"),
                LocalizedText(tag: "pt", title: "Olá", body: ""),
            ])
        #expect(push.variant(for: "pt-BR")?.title == "Olá")
        #expect(push.variant(for: "fr") == nil)
    }

    @Test("bad tags, titles, bodies and members, too many variants are 400, a tag twice 422, each with its field")
    func refusals() {
        expectHeraldError(status: 400, code: "invalid_locale", field: "localized.de_DE") { () throws(HeraldError) in
            _ = try Self.validate(#"{"de_DE":{"title":"Hallo"}}"#)
        }
        expectHeraldError(status: 422, code: "duplicate_locale", field: "localized.pt-br") { () throws(HeraldError) in
            _ = try Self.validate(#"{"pt-BR":{"title":"Olá"},"pt-br":{"title":"Oi"}}"#)
        }
        expectHeraldError(status: 400, code: "missing_field", field: "localized.de.title") { () throws(HeraldError) in
            _ = try Self.validate(#"{"de":{"body":"Welt"}}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "localized.de.title") { () throws(HeraldError) in
            _ = try Self.validate(#"{"de":{"title":"\#(String(repeating: "x", count: 121))"}}"#)
        }
        expectHeraldError(status: 400, code: "title_bracket_prefix", field: "localized.de.title") {
            () throws(HeraldError) in
            _ = try Self.validate(#"{"de":{"title":"[Bank] Hallo"}}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "localized.de.body") { () throws(HeraldError) in
            _ = try Self.validate(#"{"de":{"title":"Hallo","body":"a\u0007b"}}"#)
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "localized.de.deepLink") {
            () throws(HeraldError) in
            _ = try Self.validate(#"{"de":{"title":"Hallo","deepLink":"x"}}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "localized") { () throws(HeraldError) in
            _ = try Self.validate("[]")
        }
        let many = (0..<21).map { #""l\#(Character(UnicodeScalar(97 + $0)!))x":{"title":"t"}"# }
        expectHeraldError(status: 400, code: "too_many_variants", field: "localized") { () throws(HeraldError) in
            _ = try Self.validate("{" + many.joined(separator: ",") + "}")
        }
    }

    @Test("every variant is rendered with the brand prefix and size-checked: an oversized one is 422 with its field")
    func renderedAndChecked() throws {
        let partner = Fixtures.partner()
        let body = { (localized: String) in
            try! json(#"{"recipients":{"emails":["a@example.com"]},"title":"Hi","localized":\#(localized)}"#)
        }
        let checked = try PushPreparation.check(
            body(#"{"de":{"title":"Hallo"},"pt":{"title":"Olá"}}"#), partner: partner, rules: PushRules(),
            signer: Fixtures.signer, now: Fixtures.now)
        #expect(checked.template(for: "de-AT").content.title == "[Gacha] Hallo")
        #expect(checked.template(for: "pt-BR").content.title == "[Gacha] Olá")
        #expect(checked.template(for: nil).content.title == "[Gacha] Hi")
        let huge = String(repeating: "😀", count: 1000)
        expectHeraldError(status: 422, code: "payload_too_large", field: "localized.de.body") {
            () throws(HeraldError) in
            _ = try PushPreparation.check(
                body(#"{"de":{"title":"Hallo","body":"\#(huge)"}}"#), partner: partner, rules: PushRules(),
                signer: Fixtures.signer, now: Fixtures.now)
        }
    }
}
