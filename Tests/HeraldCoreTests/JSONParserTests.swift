import HeraldCore
import Testing

@Suite struct JSONParserTests {
    // MARK: Accepted documents

    @Test func parsesEveryValueKindKeepingObjectOrder() throws {
        let value = try json(#" { "b" : [1, -2.5, 3e2, true, false, null] , "a" : { "x" : "y" } } "#)
        #expect(
            value
                == .object([
                    ("b", .array([.number(1), .number(-2.5), .number(300), .bool(true), .bool(false), .null])),
                    ("a", .object([("x", .string("y"))])),
                ]))
        // Order is significant: the same members reversed are a different value.
        #expect(
            value
                != .object([
                    ("a", .object([("x", .string("y"))])),
                    ("b", .array([.number(1), .number(-2.5), .number(300), .bool(true), .bool(false), .null])),
                ]))
    }

    @Test(arguments: [
        ("1", JSONValue.number(1)),
        ("-0", .number(0)),
        ("0", .number(0)),
        ("\"x\"", .string("x")),
        ("true", .bool(true)),
        ("false", .bool(false)),
        ("null", .null),
        (" \t\r\n 42 \t\r\n ", .number(42)),
        ("[]", .array([])),
        ("{}", .object([])),
    ])
    func acceptsBareValuesAtTopLevel(_ input: String, _ expected: JSONValue) throws {
        #expect(try json(input) == expected)
    }

    @Test(arguments: [
        ("0.5", 0.5), ("-0.5", -0.5), ("1E2", 100), ("1e+2", 100), ("1e-2", 0.01), ("12.25e1", 122.5),
        ("123456789", 123_456_789), ("-9007199254740991", -9_007_199_254_740_991),
    ])
    func parsesNumbers(_ input: String, _ expected: Double) throws {
        #expect(try json(input) == .number(expected))
    }

    // MARK: Strictness

    @Test(arguments: [
        "[1,]", "[1,2,]", #"{"a":1,}"#, "[,1]", "[1,,2]", "{,}",
    ])
    func rejectsTrailingAndStrayCommas(_ input: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test(arguments: [
        "// c\n1", "/* c */ 1", "[1 /* c */]", "[1] // c", "# c\n1", #"{"a":1 /* c */}"#,
    ])
    func rejectsComments(_ input: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#,
        #"{"a":1,"b":2,"a":1}"#,
        #"{"a":1,"\u0061":2}"#,  // the same key spelled with an escape
        #"{"x":{"k":true,"k":false}}"#,
    ])
    func rejectsDuplicateKeys(_ input: String) {
        let error = #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
        #expect(error?.message.contains("duplicate") == true)
    }

    @Test func sameKeyInSiblingObjectsIsNotADuplicate() throws {
        #expect(
            try json(#"[{"a":1},{"a":2}]"#) == .array([.object([("a", .number(1))]), .object([("a", .number(2))])]))
    }

    @Test(arguments: [
        "01", "-01", "00", "[01]", #"{"a":01}"#, "0123",
    ])
    func rejectsLeadingZeros(_ input: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test(arguments: [
        "-", "+1", ".5", "1.", "1.e2", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity", "1e400", "- 1", "1_000",
    ])
    func rejectsMalformedNumbers(_ input: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test(arguments: [
        "", " ", "tru", "True", "nul", "NULL", "falsey", "undefined", "'x'", "{a:1}", #"{"a" 1}"#, #"{1:2}"#,
        "[1 2]", "1 2", "[1]]", "{}}", "[", "{", #"{"a":"#, #""abc"#, "\u{FEFF}1", "\u{0C}1", "\u{A0}1",
    ])
    func rejectsOtherSyntaxErrors(_ input: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test func failureReportsTheOffendingOffset() {
        let error = #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("[1,]") }
        #expect(error?.offset == 3)
        let trailing = #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("{} x") }
        #expect(trailing?.offset == 3)
    }

    // MARK: Strings

    @Test(arguments: Array(UInt8(0x00)...UInt8(0x1F)))
    func rejectsRawControlCharactersInStrings(_ byte: UInt8) {
        let input: [UInt8] = [0x22, 0x61, byte, 0x62, 0x22]
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test func acceptsRawDeleteAndNonASCIIInStrings() throws {
        #expect(try json("\"a\u{7F}b\"") == .string("a\u{7F}b"))
        #expect(try json("\"é😀\u{2028}\"") == .string("é😀\u{2028}"))
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22],  // never valid in UTF-8
            [0x22, 0xC3, 0x22],  // truncated two-byte sequence
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // a UTF-16 surrogate encoded as UTF-8
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0x61, 0x5C, 0x6E, 0x80, 0x22],  // stray continuation byte after an escape
        ] as [[UInt8]])
    func rejectsInvalidUTF8InStrings(_ input: [UInt8]) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test(arguments: [
        (#""\"""#, "\""), (#""\\""#, "\\"), (#""\/""#, "/"), (#""\b""#, "\u{08}"), (#""\f""#, "\u{0C}"),
        (#""\n""#, "\n"), (#""\r""#, "\r"), (#""\t""#, "\t"),
        (#""\u0000""#, "\u{0}"), (#""\u001f""#, "\u{1F}"), (#""\u0041\u00e9""#, "Aé"), (#""\u00E9""#, "é"),
        (#""\uFFFF""#, "\u{FFFF}"), (#""\ud83d\ude00""#, "😀"), (#""\uD83D\uDE00""#, "😀"),
        (#""\uDBFF\uDFFF""#, "\u{10FFFF}"), (#""\uD800\uDC00""#, "\u{10000}"),
        (#""a\u0000b""#, "a\u{0}b"), (#""x\ud83d\ude00y""#, "x😀y"),
    ])
    func decodesEscapes(_ input: String, _ expected: String) throws {
        let value = try json(input)
        #expect(value == .string(expected))
        // Compare scalars too: String equality is canonical equivalence, this is exact.
        #expect(value.stringValue.map { Array($0.unicodeScalars) } == Array(expected.unicodeScalars))
    }

    @Test(arguments: [
        #""\ud800""#, #""\udc00""#, #""\ud83d x""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ud83d\ud83d""#,
        #""\ude00\ud83d""#, #""\ud83d\n""#, #""\ud83d\""#, #""\udfff""#,
    ])
    func rejectsLoneSurrogates(_ input: String) {
        let error = #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
        #expect(error != nil)
    }

    @Test(arguments: [
        #""\x41""#, #""\a""#, #""\'""#, #""\U0041""#, #""\u41""#, #""\u00g1""#, #""\u""#, #""\"#, #""\0""#,
    ])
    func rejectsInvalidEscapes(_ input: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    // MARK: Depth

    private static func nestedArrays(_ depth: Int, around inner: String) -> String {
        String(repeating: "[", count: depth) + inner + String(repeating: "]", count: depth)
    }

    private static func nestedObjects(_ depth: Int, around inner: String) -> String {
        String(repeating: #"{"k":"#, count: depth) + inner + String(repeating: "}", count: depth)
    }

    @Test func defaultDepthLimitIs32Containers() throws {
        // 32 containers around a value: allowed.
        _ = try json(Self.nestedArrays(32, around: "1"))
        _ = try json(Self.nestedObjects(32, around: "1"))
        _ = try json(Self.nestedArrays(16, around: Self.nestedObjects(16, around: "\"x\"")))
        // 33 containers around a value, and 34 around nothing: refused.
        for input in [
            Self.nestedArrays(33, around: "1"), Self.nestedObjects(33, around: "1"),
            Self.nestedArrays(34, around: ""), Self.nestedObjects(34, around: "{}"),
        ] {
            let error = #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
            #expect(error?.message.contains("deep") == true)
        }
    }

    @Test func hostileNestingFailsCleanly() {
        // Far beyond the limit: must fail with an error, not overflow the stack.
        let input = String(repeating: "[", count: 200_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(input) }
    }

    @Test func depthLimitIsConfigurable() throws {
        _ = try JSONParser.parse(Array("[[1]]".utf8), maxDepth: 2)
        _ = try JSONParser.parse(Array("[1]".utf8), maxDepth: 1)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("[[[1]]]".utf8), maxDepth: 2) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("[[1]]".utf8), maxDepth: 1) }
        _ = try JSONParser.parse(Array("1".utf8), maxDepth: 0)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("[1]".utf8), maxDepth: 0) }
    }

    // MARK: Accessors

    @Test func accessorsAndTypeNames() throws {
        let value = try json(#"{"s":"x","n":2,"a":[true],"o":{},"z":null}"#)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.numberValue == 2)
        #expect(value["a"]?.arrayValue == [.bool(true)])
        #expect(value["o"]?.objectMembers?.isEmpty == true)
        #expect(value["z"] == .null)
        #expect(value["missing"] == nil)
        #expect(value["s"]?.numberValue == nil)
        #expect(value["n"]?.stringValue == nil)
        #expect(JSONValue.string("x")["s"] == nil)
        #expect(
            [value["s"], value["n"], value["a"], value["o"], value["z"], .bool(false)].map { $0?.typeName }
                == ["string", "number", "array", "object", "null", "boolean"])
    }
}
