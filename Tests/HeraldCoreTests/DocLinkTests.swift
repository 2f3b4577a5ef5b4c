import Foundation
import Testing

/// Every relative link of README.md and docs/**/*.md resolves: the file exists and, for a link to a
/// Markdown heading (`file.md#anchor`), the heading does, by GitHub's anchor rules. Links inside fenced
/// code blocks and links with a scheme (`https:`, `mailto:`) are not checked.
@Suite struct DocLinkTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md and every Markdown file under docs/, as paths relative to the repository root.
    static func documents() -> [String] {
        var paths = ["README.md"]
        let enumerator = FileManager.default.enumerator(atPath: root.appendingPathComponent("docs").path)
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".md") { paths.append("docs/" + path) }
        }
        return paths.sorted()
    }

    /// The lines of a document outside fenced code blocks, with their line numbers.
    static func prose(_ text: String) -> [(number: Int, line: Substring)] {
        var inFence = false
        var lines: [(number: Int, line: Substring)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                inFence.toggle()
            } else if !inFence {
                lines.append((index + 1, line))
            }
        }
        return lines
    }

    /// GitHub's anchor of a heading: lowercased, punctuation but `-` and `_` dropped, spaces made `-`.
    static func anchor(_ heading: Substring) -> String {
        let kept = heading.lowercased().unicodeScalars.filter {
            CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
        }
        return String(kept).replacingOccurrences(of: " ", with: "-")
    }

    /// The anchors of a document's headings; a repeated heading's anchors get `-1`, `-2`, ...
    static func anchors(_ text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors = Set<String>()
        for (_, line) in prose(text) where line.hasPrefix("#") {
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let base = anchor(Substring(title))
            let count = seen[base, default: 0]
            seen[base] = count + 1
            anchors.insert(count == 0 ? base : "\(base)-\(count)")
        }
        return anchors
    }

    /// The targets of the `[text](target)` links of a line.
    static func targets(_ line: Substring) -> [String] {
        var targets: [String] = []
        var rest = line[...]
        while let open = rest.range(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            let target = after[..<close]
            if !target.contains(" ") { targets.append(String(target)) }
            rest = after[close...]
        }
        return targets
    }

    @Test func everyRelativeLinkOfTheDocsResolves() throws {
        var broken: [String] = []
        var checked = 0
        for document in Self.documents() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
            let folder = URL(fileURLWithPath: document).deletingLastPathComponent().relativePath
            for (number, line) in Self.prose(text) {
                for target in Self.targets(line) where !target.contains(":") {
                    checked += 1
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                    let path = parts[0].isEmpty ? document : (folder == "." ? "" : folder + "/") + parts[0]
                    let url = Self.root.appendingPathComponent(path).standardizedFileURL
                    guard FileManager.default.fileExists(atPath: url.path) else {
                        broken.append("\(document):\(number): \(target): no such file")
                        continue
                    }
                    guard parts.count == 2, url.pathExtension == "md" else { continue }
                    let destination = try String(contentsOf: url, encoding: .utf8)
                    if !Self.anchors(destination).contains(String(parts[1])) {
                        broken.append("\(document):\(number): \(target): no such heading")
                    }
                }
            }
        }
        #expect(checked > 100)
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test func anchorsFollowGitHubsRules() {
        #expect(
            Self.anchor("Replaying failed deliveries (`heraldctl replay`)")
                == "replaying-failed-deliveries-heraldctl-replay")
        #expect(Self.anchors("# A\n## B b\n```\n# not a heading\n```\n## B b\n") == ["a", "b-b", "b-b-1"])
    }
}
