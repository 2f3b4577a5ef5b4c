import Foundation
import HeraldCore
import HeraldTestSupport
import ServiceSupport
import Testing

/// One release everywhere: the executables' `--version`, CHANGELOG.md's newest entry and the images' label.
@Suite struct ReleaseTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("CHANGELOG.md's newest release is the version, with an Upgrading note; both images carry it as a label")
    func oneVersion() throws {
        let changelog = try Self.read("CHANGELOG.md")
        // `## Unreleased`, when present, collects what the next release will bring; the newest release follows it.
        let newest = try #require(
            changelog.split(separator: "\n").first { $0.hasPrefix("## ") && $0 != "## Unreleased" })
        #expect(newest.hasPrefix("## \(HeraldVersion.current) ("), "\(newest)")
        let entry = try #require(changelog.components(separatedBy: String(newest)).last)
        let body = entry.components(separatedBy: "\n## ").first ?? ""
        #expect(body.contains("### Upgrading"))
        for file in ["deploy/Containerfile", "deploy/Containerfile.prebuilt"] {
            #expect(
                try Self.read(file).contains("LABEL org.opencontainers.image.version=\"\(HeraldVersion.current)\""),
                "\(file)")
        }
    }

    @Test("a service's arguments: none serves, --version and --help print, anything else is a usage error")
    func serviceArguments() {
        #expect(ServiceArguments.action([]) == .serve)
        #expect(ServiceArguments.action(["--version"]) == .printVersion)
        #expect(ServiceArguments.action(["-h"]) == .printUsage)
        #expect(ServiceArguments.action(["--port", "1"]) == nil)
        #expect(ServiceArguments.action(["--version", "x"]) == nil)
        #expect(ServiceArguments.versionLine("herald-worker") == "herald-worker \(HeraldVersion.current)")
    }

    @Test("every executable answers --version with its name and the release, and exits 0")
    func executablesAnswer() throws {
        for program in ["herald-intake", "herald-worker", "herald-sim", "heraldctl"] {
            let binary = TestEnvironment.binDirectory.appendingPathComponent(program)
            let result = try ChildProcess.run(binary, ["--version"], environment: [:])
            #expect(result.status == 0, "\(program): \(result.output)")
            #expect(
                result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(program) \(HeraldVersion.current)")
        }
        let refused = try ChildProcess.run(
            TestEnvironment.binDirectory.appendingPathComponent("herald-intake"), ["--port"], environment: [:])
        #expect(refused.status == 2)
    }
}
