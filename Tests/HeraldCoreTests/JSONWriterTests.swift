import HeraldCore
import Testing

@Suite struct JSONWriterTests {
    @Test func writesCompactJSONWithoutWhitespace() {
        let value = JSONValue.object([
            ("b", .array([.number(1), .bool(true), .bool(false), .null, .string("s")])),
            ("a", .object([("x", .array([])), ("y", .object([]))])),
        ])
        #expect(JSONWriter.string(value) == #"{"b":[1,true,false,null,"s"],"a":{"x":[],"y":{}}}"#)
        #expect(JSONWriter.bytes(value) == Array(JSONWriter.string(value).utf8))
    }

    @Test func writeAppendsToExistingBuffer() {
        var out = Array("prefix:".utf8)
        JSONWriter.write(.array([.number(1)]), into: &out)
        #expect(text(out) == "prefix:[1]")
    }

    // MARK: Numbers

    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-1.0, "-1"), (42.0, "42"), (1_000_000.0, "1000000"),
        (86_400.0, "86400"), (4096.0, "4096"), (123_456_789_012_345.0, "123456789012345"),
        (-99_999_999_999_999.0, "-99999999999999"),
    ])
    func integersHaveNoFraction(_ number: Double, _ expected: String) {
        #expect(JSONWriter.string(.number(number)) == expected)
    }

    @Test(arguments: [
        0.5, -0.25, 0.1, 1.5e-7, 3.141592653589793, 1e15, 1e21, -1.7976931348623157e308, Double.leastNonzeroMagnitude,
        9_007_199_254_740_993.0, 123_456.789,
    ])
    func nonIntegersRoundTripExactly(_ number: Double) throws {
        let written = JSONWriter.string(.number(number))
        #expect(try JSONParser.parse(written) == .number(number), "\(written)")
        #expect(!written.contains(" "))
    }

    // MARK: Strings (RFC 8785 escaping)

    /// Every control character, as RFC 8785 (ECMAScript JSON.stringify) writes it.
    static let controlEscapes: [(UInt8, String)] = [
        (0x00, #"\u0000"#), (0x01, #"\u0001"#), (0x02, #"\u0002"#), (0x03, #"\u0003"#),
        (0x04, #"\u0004"#), (0x05, #"\u0005"#), (0x06, #"\u0006"#), (0x07, #"\u0007"#),
        (0x08, #"\b"#), (0x09, #"\t"#), (0x0A, #"\n"#), (0x0B, #"\u000b"#),
        (0x0C, #"\f"#), (0x0D, #"\r"#), (0x0E, #"\u000e"#), (0x0F, #"\u000f"#),
        (0x10, #"\u0010"#), (0x11, #"\u0011"#), (0x12, #"\u0012"#), (0x13, #"\u0013"#),
        (0x14, #"\u0014"#), (0x15, #"\u0015"#), (0x16, #"\u0016"#), (0x17, #"\u0017"#),
        (0x18, #"\u0018"#), (0x19, #"\u0019"#), (0x1A, #"\u001a"#), (0x1B, #"\u001b"#),
        (0x1C, #"\u001c"#), (0x1D, #"\u001d"#), (0x1E, #"\u001e"#), (0x1F, #"\u001f"#),
    ]

    @Test(arguments: controlEscapes)
    func escapesControlCharactersExactly(_ byte: UInt8, _ escaped: String) {
        let value = String(Character(Unicode.Scalar(byte)))
        #expect(JSONWriter.string(.string("a" + value + "b")) == "\"a" + escaped + "b\"")
    }

    @Test func escapesQuoteAndBackslashOnly() {
        #expect(JSONWriter.string(.string(#"say "hi" \ bye"#)) == #""say \"hi\" \\ bye""#)
    }

    @Test(arguments: [
        "/", "\u{7F}", "\u{80}", "\u{9F}", "é", "€", "\u{2028}", "\u{2029}", "😀", "\u{FEFF}", "<>&'", "\u{10FFFF}",
        "\u{E000}",
    ])
    func writesEverythingElseVerbatimAsUTF8(_ value: String) {
        let written = JSONWriter.bytes(.string(value))
        #expect(written == [0x22] + Array(value.utf8) + [0x22])
    }

    @Test func keysAreEscapedLikeValues() {
        #expect(JSONWriter.string(.object([("a\"\n\u{1}", .string("v"))])) == #"{"a\"\n\u0001":"v"}"#)
    }

    @Test func everyByteBelow0x80RoundTrips() throws {
        let all = String(decoding: Array(UInt8(0)..<UInt8(0x80)), as: UTF8.self)
        let written = JSONWriter.string(.string(all))
        #expect(try JSONParser.parse(written) == .string(all))
        // No raw control bytes survive in the output.
        #expect(!JSONWriter.bytes(.string(all)).contains { $0 < 0x20 })
    }

    // MARK: Round trips

    static let samples: [JSONValue] = [
        .null, .bool(true), .bool(false), .number(0), .number(-12.5), .string(""), .string("\u{0}"),
        .string("tab\there \"quoted\" back\\slash / é 😀 \u{1F}\u{7F}"),
        .array([]), .object([]),
        .array([.null, .number(1), .string("x"), .array([.object([("k", .array([]))])])]),
        .object([
            ("recipients", .object([("emails", .array([.string("alice@example.com")])), ("wallets", .array([]))])),
            ("title", .string("Deposit pending")), ("ttlSeconds", .number(86_400)), ("ratio", .number(0.125)),
            ("z", .null), ("a", .bool(true)), ("\u{10000}", .string("astral key")),
        ]),
    ]

    @Test(arguments: samples)
    func parseOfWriteIsIdentity(_ value: JSONValue) throws {
        #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
    }

    @Test(arguments: [
        #"{"a":[1,2.5,-3,true,false,null],"b":{"c":"d\n\u0000\"\\"},"e":""}"#,
        #"[{"k":"v"},[],{},"😀"]"#,
    ])
    func writeOfParseIsIdentityForCompactDocuments(_ document: String) throws {
        #expect(JSONWriter.string(try json(document)) == document)
    }

    @Test func normalisesEscapesThatNeedNone() throws {
        // Input escapes that JCS does not use are written as raw characters, and \u001F lowercase.
        let value = try json(#""\/\u00e9\u20AC\ud83d\ude00\u001F""#)
        #expect(JSONWriter.string(value) == "\"/é€😀\\u001f\"")
    }
}
