import HTTPServer
import Testing

@Suite("Optional whitespace around header values")
struct OptionalWhitespaceTests {
    @Test(
        "spaces and tabs around a value go, those inside stay, other characters stay",
        arguments: [
            ("  bearer abc \t", "bearer abc"),
            ("\tapplication/json", "application/json"),
            ("wait=5", "wait=5"),
            (" \t ", ""),
            ("", ""),
            ("\u{00A0}tok\u{00A0}", "\u{00A0}tok\u{00A0}"),
            (" é ", "é"),
        ])
    func trimmed(value: String, expected: String) {
        #expect(value.trimmingASCIIWhitespace() == expected)
        #expect(value[...].trimmingASCIIWhitespace() == expected)
    }
}
