import Foundation
import ServiceSupport
import Testing

/// The settings catalog (Sources/ServiceSupport/Settings*.swift) is the one place a setting is declared: no
/// process reads a `HERALD_*` variable it lacks, it lists nothing no process reads, and docs/configuration.md is
/// what it generates.
@Suite("The settings catalog")
struct SettingsCatalogTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let sources = root.appendingPathComponent("Sources")

    /// The catalog's own files, which declare every name.
    static func isCatalog(_ path: String) -> Bool {
        path.hasPrefix("ServiceSupport/Settings") && path.hasSuffix(".swift")
    }

    /// The files whose names count: Swift and SQL under Sources/, but for the test helpers (their variables are
    /// the test scripts', not a process's) and the numbered migrations (append-only: their comments are history).
    static func readSources() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        var files: [(String, String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" || url.pathExtension == "sql" {
            let path = String(url.standardizedFileURL.path.dropFirst(sources.standardizedFileURL.path.count + 1))
            if path.hasPrefix("HeraldTestSupport/") { continue }
            if path.hasPrefix("Store/Migrations/"), url.lastPathComponent.first?.isNumber == true { continue }
            files.append((path, try String(contentsOf: url, encoding: .utf8)))
        }
        return files
    }

    static func matches(_ pattern: String, in text: String) -> [[String]] {
        let expression = try! NSRegularExpression(pattern: pattern)
        let whole = NSRange(text.startIndex..., in: text)
        return expression.matches(in: text, range: whole).map { match in
            (0..<match.numberOfRanges).map { index in
                Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
            }
        }
    }

    /// `public static let key = Setting(\n "NAME"` in the catalog's files: each property and the name it holds.
    static func declaredKeys(_ files: [(path: String, text: String)]) -> [String: String] {
        var keys: [String: String] = [:]
        for file in files where isCatalog(file.path) {
            for match in matches(#"static let (\w+) = Setting\(\s*"(HERALD_[A-Z0-9_]+)""#, in: file.text) {
                keys[match[1]] = match[2]
            }
        }
        return keys
    }

    @Test("docs/configuration.md is what the catalog generates")
    func theDocumentIsUpToDate() throws {
        let committed = try String(
            contentsOf: Self.root.appendingPathComponent("docs/configuration.md"),
            encoding: .utf8)
        #expect(
            committed == SettingsDocument.markdown(),
            "docs/configuration.md differs from the catalog: run `\(SettingsDocument.regenerateCommand)`")
    }

    @Test("each setting is declared once, listed in Settings.all, and its default lies in its range")
    func eachSettingOnce() throws {
        let names = Settings.all.map(\.name)
        #expect(Set(names).count == names.count, "a name is listed twice")
        let declared = Self.declaredKeys(try Self.readSources())
        #expect(Set(declared.values) == Set(names), "a catalog property is missing from Settings.all, or the reverse")
        #expect(declared.count == names.count)
        for setting in Settings.all {
            #expect(!setting.readers.isEmpty, "\(setting.name) has no reader")
            #expect(setting.summary.hasSuffix("."), "\(setting.name)'s summary is not a sentence")
            if case .integer(let value) = setting.defaultValue {
                #expect(setting.range?.contains(value) == true, "\(setting.name)'s default is outside its range")
            }
            if setting.range == nil {
                #expect(setting.format != nil, "\(setting.name) says neither its range nor its format")
            }
        }
    }

    @Test("every HERALD_ name in Sources is a setting of the catalog, and every setting is read")
    func noSettingOutsideTheCatalog() throws {
        let files = try Self.readSources()
        let names = Set(Settings.all.map(\.name))
        let keys = Self.declaredKeys(files)
        var used: Set<String> = []
        for file in files where !Self.isCatalog(file.path) {
            // A name, or a family of them (`HERALD_APNS_*`).
            for match in Self.matches(#"(HERALD_[A-Z0-9_]*[A-Z0-9])(_\*)?"#, in: file.text) {
                if match[2].isEmpty {
                    #expect(names.contains(match[1]), "\(file.path) names \(match[1]), which the catalog lacks")
                    used.insert(match[1])
                } else {
                    #expect(
                        names.contains { $0.hasPrefix(match[1] + "_") },
                        "\(file.path) names \(match[1])_*, which no setting of the catalog matches")
                }
            }
            for match in Self.matches(#"\bSettings\.(\w+)"#, in: file.text) {
                if let name = keys[match[1]] { used.insert(name) }
            }
        }
        for name in names.subtracting(used).sorted() {
            Issue.record("the catalog lists \(name), which nothing in Sources reads")
        }
    }

    @Test("a time setting's default and range are whole numbers of its unit")
    func timeSettings() {
        #expect(Settings.pollInterval.duration == .seconds(1))
        #expect(Settings.pollInterval.durationBounds == .milliseconds(10)...(.seconds(60)))
        #expect(Settings.intakeBatchWindow.duration == .microseconds(250))
        #expect(Settings.consoleIdleMinutes.duration(2) == .seconds(120))
    }
}
