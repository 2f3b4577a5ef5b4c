/// A configuration value the APNs client cannot work with. `setting` names the value (the worker
/// maps it to its `HERALD_APNS_*` variable); `code` is stable; `message` never quotes key material.
public struct APNsConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which `APNsConfiguration` property is wrong.
    public enum Setting: String, Sendable, CaseIterable {
        case productionURL
        case sandboxURL
        case keyFile
        case keyID
        case teamID
        case topic
        case caFile
        case connectionsPerEnvironment
        case requestTimeout
        case connectTimeout
    }

    public enum Code: String, Sendable {
        /// Required and empty.
        case missing
        /// Present but of the wrong shape.
        case invalid
        /// The key file cannot be read.
        case unreadable
        /// The key file is not an EC P-256 private key.
        case invalidKey = "invalid_key"
    }

    public let setting: Setting
    public let code: Code
    public let message: String

    public init(_ setting: Setting, _ code: Code, _ message: String) {
        self.setting = setting
        self.code = code
        self.message = message
    }

    public var description: String { "APNs \(setting.rawValue) \(message) (\(code.rawValue))" }
}
