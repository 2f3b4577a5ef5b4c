import Foundation

/// A configuration problem found at start-up; the message names the variable.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let variable: String
    public let problem: String
    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "\(variable): \(problem)" }
}

/// Reads settings from environment variables; every error names the variable.
public struct EnvironmentReader: Sendable {
    public let environment: [String: String]

    public init(environment: [String: String]) { self.environment = environment }

    public func optional(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    public func required(_ name: String) throws(ConfigurationError) -> String {
        guard let value = optional(name) else { throw ConfigurationError(variable: name, problem: "is required") }
        return value
    }

    /// A bearer token: required, long enough not to be guessed, and not a value copied from an example.
    public func secret(_ name: String) throws(ConfigurationError) -> String {
        let value = try required(name)
        guard value.utf8.count >= 16 else {
            throw ConfigurationError(variable: name, problem: "must be at least 16 characters")
        }
        // The message names the variable and the rule, never the value.
        guard !Self.isPlaceholder(value) else {
            throw ConfigurationError(
                variable: name,
                problem: "is a placeholder (it contains change-me, changeme, example or placeholder): "
                    + "set a random value, e.g. openssl rand -hex 32")
        }
        return value
    }

    /// Words that mark an example value. Every token shipped in deploy/ and the docs contains one
    /// (`CHANGE-ME-admin-token`, deploy/k8s/examples/secret.example.yaml's `CHANGE-ME-...-at-least-16-chars`), so
    /// a file copied and applied as it is cannot open the admin or host API with a value anyone can read.
    static let placeholderMarks = ["change-me", "changeme", "example", "placeholder"]

    static func isPlaceholder(_ value: String) -> Bool {
        let lowered = value.lowercased()
        return placeholderMarks.contains { lowered.contains($0) }
    }

    /// A secret that may be unset (nil), checked like `secret` when set.
    public func optionalSecret(_ name: String) throws(ConfigurationError) -> String? {
        guard optional(name) != nil else { return nil }
        return try secret(name)
    }

    /// A whole number; the caller's `validate()` checks its range.
    public func integer(_ name: String, default fallback: Int) throws(ConfigurationError) -> Int {
        guard let text = optional(name) else { return fallback }
        guard let value = Int(text) else { throw ConfigurationError(variable: name, problem: "must be a whole number") }
        return value
    }

    public func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError)
        -> Int
    {
        guard let text = optional(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(
                variable: name, problem: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A switch written `0` or `1`.
    public func flag(_ name: String, default fallback: Bool) throws(ConfigurationError) -> Bool {
        guard let text = optional(name) else { return fallback }
        switch text {
        case "0": return false
        case "1": return true
        default: throw ConfigurationError(variable: name, problem: "must be 0 or 1")
        }
    }
}
