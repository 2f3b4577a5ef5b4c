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

    /// A bearer token: required and long enough not to be guessed.
    public func secret(_ name: String) throws(ConfigurationError) -> String {
        let value = try required(name)
        guard value.utf8.count >= 16 else { throw ConfigurationError(variable: name, problem: "must be at least 16 characters") }
        return value
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

    public func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let text = optional(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(variable: name, problem: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
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
