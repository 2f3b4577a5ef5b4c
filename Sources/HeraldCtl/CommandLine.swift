import Foundation
import HeraldCore

/// A usage error: exit status 2.
public struct UsageError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Parsed `--name value` options and `--flag` switches after the subcommand words. An option may be
/// given several times (`--request A --request B`); `values` returns each, `option` the last.
public struct Arguments {
    public private(set) var positional: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// `flagNames` are options without a value (`--json`, `--dry-run`). `--help` and `-h` are flags of
    /// every command.
    public init(_ words: [String], flagNames: Set<String>) throws(UsageError) {
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "-h" {
                flags.insert("help")
            } else if word.hasPrefix("--") {
                let name = String(word.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    options[String(name[..<equals]), default: []].append(String(name[name.index(after: equals)...]))
                } else if flagNames.contains(name) || name == "help" {
                    flags.insert(name)
                } else {
                    guard index + 1 < words.count else { throw UsageError(message: "--\(name) needs a value") }
                    options[name, default: []].append(words[index + 1])
                    index += 1
                }
            } else {
                positional.append(word)
            }
            index += 1
        }
    }

    public func flag(_ name: String) -> Bool { flags.contains(name) }
    public func option(_ name: String) -> String? { options[name]?.last }

    /// The selectors as given, for the audit trail: each option's values and the flags but `json`.
    public var auditJSON: JSONValue {
        .object(
            options.keys.sorted().map { name in (name, .array(options[name]!.map { .string($0) })) }
                + flags.subtracting(["json", "help"]).sorted().map { ($0, .bool(true)) })
    }
    public func values(_ name: String) -> [String] { options[name] ?? [] }

    public func requiredOption(_ name: String) throws(UsageError) -> String {
        guard let value = option(name) else { throw UsageError(message: "--\(name) is required") }
        return value
    }

    public func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = option(name) else { return nil }
        guard let value = Int(text) else { throw UsageError(message: "--\(name) must be a whole number") }
        return value
    }

    /// An ISO 8601 time (`2026-12-01T09:00:00Z`) or a duration before now (`90s`, `15m`, `2h`, `7d`).
    public func time(_ name: String, now: Date) throws(UsageError) -> Date? {
        guard let text = option(name) else { return nil }
        if let date = ISO8601.parse(text) { return date }
        if let seconds = Self.seconds(text) { return now.addingTimeInterval(-Double(seconds)) }
        throw UsageError(
            message: "--\(name) must be an ISO 8601 time (2026-12-01T09:00:00Z) or an age like 30m, 2h, 7d")
    }

    /// A duration in whole seconds: `90s`, `15m`, `2h`, `7d`, or a bare number of seconds.
    public func duration(_ name: String) throws(UsageError) -> Int? {
        guard let text = option(name) else { return nil }
        guard let seconds = Int(text).flatMap({ $0 >= 0 ? $0 : nil }) ?? Self.seconds(text) else {
            throw UsageError(message: "--\(name) must be a duration like 90s, 15m, 24h, 7d")
        }
        return seconds
    }

    private static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let amount = Int(text.dropLast()), amount >= 0,
            amount <= Int.max / unit
        else { return nil }
        return amount * unit
    }

    /// Rejects options the command does not know, so typos are not silently ignored.
    public func allowOnly(_ names: Set<String>) throws(UsageError) {
        for name in options.keys where !names.contains(name) { throw UsageError(message: "unknown option --\(name)") }
        for name in flags where !names.contains(name) && name != "help" {
            throw UsageError(message: "unknown option --\(name)")
        }
    }

    /// The options that may be given once only, given twice, are a usage error rather than a silent pick.
    public func single(_ names: Set<String>) throws(UsageError) {
        for name in names where values(name).count > 1 { throw UsageError(message: "--\(name) may be given once") }
    }
}
