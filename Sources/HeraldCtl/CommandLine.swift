import Foundation

/// A usage error: exit status 2.
public struct UsageError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Parsed `--name value` options and `--flag` switches after the subcommand words.
public struct Arguments {
    public private(set) var positional: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// `flagNames` are options without a value (`--json`, `--dry-run`).
    public init(_ words: [String], flagNames: Set<String>) throws(UsageError) {
        var index = 0
        while index < words.count {
            let word = words[index]
            if word.hasPrefix("--") {
                let name = String(word.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    options[String(name[..<equals])] = String(name[name.index(after: equals)...])
                } else if flagNames.contains(name) {
                    flags.insert(name)
                } else {
                    guard index + 1 < words.count else { throw UsageError(message: "--\(name) needs a value") }
                    options[name] = words[index + 1]
                    index += 1
                }
            } else {
                positional.append(word)
            }
            index += 1
        }
    }

    public func flag(_ name: String) -> Bool { flags.contains(name) }
    public func option(_ name: String) -> String? { options[name] }

    public func requiredOption(_ name: String) throws(UsageError) -> String {
        guard let value = options[name] else { throw UsageError(message: "--\(name) is required") }
        return value
    }

    public func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text) else { throw UsageError(message: "--\(name) must be a whole number") }
        return value
    }

    /// Rejects options the command does not know, so typos are not silently ignored.
    public func allowOnly(_ names: Set<String>) throws(UsageError) {
        for name in options.keys where !names.contains(name) { throw UsageError(message: "unknown option --\(name)") }
        for name in flags where !names.contains(name) { throw UsageError(message: "unknown option --\(name)") }
    }
}
