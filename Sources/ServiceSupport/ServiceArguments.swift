import Foundation
import HeraldCore

/// The command line of a service that takes its configuration from the environment (herald-intake, herald-worker):
/// `--version` prints `<program> <release>`, `--help` its usage; anything else is a usage error (exit 2) rather
/// than an argument silently ignored.
public enum ServiceArguments {
    public enum Action: Equatable, Sendable {
        case serve
        case printVersion
        case printUsage
    }

    public static func action(_ arguments: [String]) -> Action? {
        switch arguments {
        case []: .serve
        case ["--version"]: .printVersion
        case ["--help"], ["-h"]: .printUsage
        default: nil
        }
    }

    /// What `--version` prints.
    public static func versionLine(_ program: String) -> String { "\(program) \(HeraldVersion.current)" }

    /// Acts on the process's arguments: returns to serve, or prints and exits.
    public static func handle(_ arguments: [String], program: String) {
        let usage =
            "usage: \(program) [--version | --help]\nIts settings are environment variables: heraldctl settings.\n"
        switch action(arguments) {
        case .serve: return
        case .printVersion:
            FileHandle.standardOutput.write(Data((versionLine(program) + "\n").utf8))
            exit(0)
        case .printUsage:
            FileHandle.standardOutput.write(Data(usage.utf8))
            exit(0)
        case nil:
            FileHandle.standardError.write(Data("\(program): unknown arguments \(arguments)\n\(usage)".utf8))
            exit(2)
        }
    }
}
