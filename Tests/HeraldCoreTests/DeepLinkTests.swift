import HeraldCore
import Testing

@Suite struct DeepLinkTests {
    static let app = "fun.pull.gacha"
    static let root = "basedapp://miniapp/fun.pull.gacha"

    static func under(_ suffixes: [String]) -> [String] { suffixes.map { root + $0 } }

    static let inside: [String] = under([
        "",
        "/",
        "/deposits/0xabc",
        "/a/b/c/",
        "?tab=history",
        "#top",
        "/deposits?id=1&x=y#frag",
        "?next=../../other",  // dots in the query are not path segments
        "#/../../other",
        "/a..b/...",  // dots inside a segment are fine
        "/caf%C3%A9",
        "/é/😀",
        "/100%25",
        "/a%2520b",
        "/%25",
        "/%2525zz",
    ])

    @Test(arguments: inside)
    func acceptsLinksInsideTheNamespace(_ link: String) throws {
        try DeepLink.validate(link, scheme: "basedapp", miniAppID: Self.app)
    }

    static let outside: [String] =
        [
            "basedapp://miniapp/other.app",
            "basedapp://miniapp/other.app/fun.pull.gacha",
            "basedapp://miniapp/fun.pull.gachaEVIL",
            "basedapp://miniapp/fun.pull.gacha.evil",
            "basedapp://miniapp/fun.pull.gacha-2/x",
            "basedapp://miniapp/fun.pull.gacha:8080/x",
            "basedapp://miniapp/fun.pull.gacha@evil.com/x",
            "basedapp://miniapp/fun.pull",
            "basedapp://miniapp/FUN.PULL.GACHA",
            "basedapp://miniapp/",
            "basedapp://miniapp",
            "basedapp://miniapp//fun.pull.gacha",
            "basedapp://Miniapp/fun.pull.gacha",
            "basedapp:/miniapp/fun.pull.gacha",
            "basedapp:miniapp/fun.pull.gacha",
            "BASEDAPP://miniapp/fun.pull.gacha",
            "https://miniapp/fun.pull.gacha",
            "https://evil.example/basedapp://miniapp/fun.pull.gacha",
            "otherapp://miniapp/fun.pull.gacha",
            "xbasedapp://miniapp/fun.pull.gacha",
            "javascript:alert(1)//basedapp://miniapp/fun.pull.gacha",
            "",
        ]
        + under([
            // Traversal, literal and encoded.
            "/..",
            "/../other.app",
            "/a/../../other.app",
            "/./x",
            "/.",
            "/../fun.pull.gacha/x",
            "/%2e%2e/other.app",
            "/%2E%2E/other.app",
            "/.%2e/other.app",
            "/%2e./other.app",
            "%2F..%2Fother.app",
            "/x%2F..%2F..%2Fother.app",
            "/x%2f",
            "/x%5c..",
            "/x%5C..",
            // Encoded again, at any depth: a router that decodes twice would see `.`, `/` or `\`.
            "/%252e%252e/other.app",
            "/%252E%252E/other.app",
            "/x%25252f..",
            "/x%255c..",
            "/x%2525252F",
            "/%25%32%65%25%32%65/other.app",
            "/%%32e",
            "/..?q=1",
            "/..#f",
        ])

    @Test(arguments: outside)
    func refusesLinksOutsideTheNamespaceWith403(_ link: String) {
        let error = expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") {
            () throws(HeraldError) in try DeepLink.validate(link, scheme: "basedapp", miniAppID: Self.app)
        }
        #expect(error?.message.contains(Self.root) == true)
    }

    static let malformed: [String] =
        under([
            "/a b", " ", "/a\tb", "/a\nb", "\r\n", "/\u{0}", "/\u{7F}", "/\u{1B}", "\\..\\other.app", "/a\\b",
        ]) + [" " + root, "basedapp:\\\\miniapp\\fun.pull.gacha", "not a link"]

    @Test(arguments: malformed)
    func refusesMalformedLinksWith400(_ link: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate(link, scheme: "basedapp", miniAppID: Self.app)
        }
    }

    /// DeepLink.validate's own error message promises "no whitespace, control characters or
    /// backslashes"; non-ASCII whitespace and C1 controls are whitespace and control characters too.
    @Test(
        arguments: under([
            "/a\u{85}b",  // NEXT LINE: a C1 control and whitespace
            "/a\u{9B}b",  // CSI: a C1 control
            "/a\u{A0}b",  // NO-BREAK SPACE
            "/a\u{2028}b",  // LINE SEPARATOR
            "/a\u{3000}b",  // IDEOGRAPHIC SPACE
        ]))
    func refusesUnicodeWhitespaceAndC1Controls(_ link: String) {
        expectHeraldError(status: 400, code: "invalid_field", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate(link, scheme: "basedapp", miniAppID: Self.app)
        }
    }

    @Test func linksAreAtMost2048Characters() throws {
        let prefix = Self.root + "/"
        let longest = prefix + String(repeating: "a", count: DeepLink.maxLength - prefix.utf8.count)
        #expect(longest.utf8.count == 2048)
        try DeepLink.validate(longest, scheme: "basedapp", miniAppID: Self.app)
        expectHeraldError(status: 400, code: "invalid_field", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate(longest + "a", scheme: "basedapp", miniAppID: Self.app)
        }
        // Unicode scalars, as the schema's maxLength counts them, not bytes.
        let wide = prefix + String(repeating: "é", count: DeepLink.maxLength - prefix.unicodeScalars.count)
        #expect(wide.utf8.count > 2048)
        try DeepLink.validate(wide, scheme: "basedapp", miniAppID: Self.app)
        #expect(
            heraldError { () throws(HeraldError) in
                try DeepLink.validate(wide + "é", scheme: "basedapp", miniAppID: Self.app)
            }?.status == 400)
    }

    @Test func schemeIsConfigurable() throws {
        try DeepLink.validate("herald://miniapp/fun.pull.gacha/x", scheme: "herald", miniAppID: Self.app)
        expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate(Self.root + "/x", scheme: "herald", miniAppID: Self.app)
        }
        expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate("heraldx://miniapp/fun.pull.gacha", scheme: "herald", miniAppID: Self.app)
        }
    }

    @Test func namespaceIsThePartnersOwnMiniApp() throws {
        try DeepLink.validate("basedapp://miniapp/other.app/x", scheme: "basedapp", miniAppID: "other.app")
        expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate("basedapp://miniapp/other.app/x", scheme: "basedapp", miniAppID: Self.app)
        }
        // A mini-app whose id is a prefix of another's cannot reach into it.
        expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate("basedapp://miniapp/fun.pull.gacha/x", scheme: "basedapp", miniAppID: "fun.pull")
        }
    }

    /// The check is documented as "on the raw string": a link whose bytes do not start with the
    /// root is outside, even when Swift's Character comparison calls it equal. U+212A KELVIN SIGN
    /// is canonically equivalent to "K", so `String.hasPrefix` accepts it in place of the K of
    /// the mini-app id.
    @Test func rootIsComparedByBytesNotByCanonicalEquivalence() throws {
        try DeepLink.validate("basedapp://miniapp/KittyApp/x", scheme: "basedapp", miniAppID: "KittyApp")
        let lookalike = "basedapp://miniapp/\u{212A}ittyApp/x"
        #expect(lookalike.hasPrefix("basedapp://miniapp/KittyApp"))  // what String thinks
        #expect(!lookalike.utf8.starts(with: "basedapp://miniapp/KittyApp".utf8))  // what the bytes say
        expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
            try DeepLink.validate(lookalike, scheme: "basedapp", miniAppID: "KittyApp")
        }
    }
}
