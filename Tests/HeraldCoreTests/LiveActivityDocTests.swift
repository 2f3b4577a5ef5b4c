import Foundation
import HeraldCore
import Testing

/// docs/live-activity-payloads.md shows one payload per template, event and platform. Each example
/// follows a marker `<!-- example <template> <event> <ios|android> -->` and must equal what the
/// renderer produces for `LiveActivityFixtures` (same members, same order, same values). Run with
/// HERALD_WRITE_DOC_EXAMPLES=1 to rewrite the examples from the renderer after a deliberate change.
@Suite struct LiveActivityDocTests {
    static let docsURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")
    static let docURL = docsURL.appendingPathComponent("live-activity-payloads.md")

    static func doc() throws -> String { try String(contentsOf: docURL, encoding: .utf8) }

    /// docs/live-activities.md: the lifecycle and the Widget Extension's structs.
    static func lifecycleDoc() throws -> String {
        try String(contentsOf: docsURL.appendingPathComponent("live-activities.md"), encoding: .utf8)
    }

    static let platforms = ["ios", "android"]

    static func rendered(_ template: LiveActivityTemplate, _ event: LiveActivityEvent, _ platform: String) -> [UInt8] {
        let rendered = LiveActivityFixtures.render(template, event)
        return platform == "ios" ? rendered.apns : rendered.fcm
    }

    /// The range of the JSON text of the fenced block after `marker`.
    static func exampleRange(_ marker: String, in text: String) -> Range<String.Index>? {
        guard let found = text.range(of: marker),
            let open = text.range(of: "```json\n", range: found.upperBound..<text.endIndex),
            text[found.upperBound..<open.lowerBound].allSatisfy(\.isWhitespace),
            let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex)
        else { return nil }
        return open.upperBound..<close.lowerBound
    }

    @Test func everyExampleIsTheRenderersOutput() throws {
        var text = try Self.doc()
        let rewrite = ProcessInfo.processInfo.environment["HERALD_WRITE_DOC_EXAMPLES"] == "1"
        for template in LiveActivityTemplate.allCases {
            for event in LiveActivityEvent.allCases {
                for platform in Self.platforms {
                    let marker = "<!-- example \(template) \(event) \(platform) -->"
                    let range = try #require(
                        Self.exampleRange(marker, in: text), "docs/live-activity-payloads.md lacks \(marker)")
                    let expected = try JSONParser.parse(Self.rendered(template, event, platform))
                    if rewrite {
                        text.replaceSubrange(range, with: Self.pretty(expected))
                    } else {
                        let shown = try JSONParser.parse(String(text[range]))
                        #expect(shown == expected, "\(marker) differs; expected:\n\(Self.pretty(expected))")
                    }
                }
            }
        }
        if rewrite { try text.write(to: Self.docURL, atomically: true, encoding: .utf8) }
    }

    @Test func theLifecycleDocKeepsTheDeliveryHeading() throws {
        #expect(try Self.lifecycleDoc().contains("\n## Delivery\n"))
    }

    /// JSON for people: a container on one line when that fits in 100 columns, else one member a line.
    static func pretty(_ value: JSONValue, indent: Int = 0, keyWidth: Int = 0) -> String {
        let inline = oneLine(value)
        if indent + keyWidth + inline.count <= 100 { return inline }
        let pad = String(repeating: " ", count: indent + 2)
        switch value {
        case .array(let items):
            return "[\n" + items.map { pad + pretty($0, indent: indent + 2) }.joined(separator: ",\n")
                + "\n" + String(repeating: " ", count: indent) + "]"
        case .object(let members):
            return "{\n"
                + members.map { member in
                    let key = JSONWriter.string(.string(member.key)) + ": "
                    return pad + key + pretty(member.value, indent: indent + 2, keyWidth: key.count)
                }.joined(separator: ",\n") + "\n" + String(repeating: " ", count: indent) + "}"
        default:
            return inline
        }
    }

    static func oneLine(_ value: JSONValue) -> String {
        switch value {
        case .array(let items): return "[" + items.map(oneLine).joined(separator: ", ") + "]"
        case .object(let members):
            return "{"
                + members.map { JSONWriter.string(.string($0.key)) + ": " + oneLine($0.value) }.joined(separator: ", ")
                + "}"
        default: return JSONWriter.string(value)
        }
    }
}
