/// A configuration value the FCM client cannot work with. `setting` names the value (the worker
/// maps it to its `HERALD_FCM_*` variable); `code` is stable; `message` never quotes the private
/// key or any other part of the credentials file but the name of the missing field.
public struct FCMConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which `FCMConfiguration` property is wrong.
    public enum Setting: String, Sendable, CaseIterable {
        case url
        case credentialsFile
        case caFile
        case connections
        case requestTimeout
        case connectTimeout
    }

    public enum Code: String, Sendable {
        /// Required and empty.
        case missing
        /// Present but of the wrong shape (including a credentials file missing a field).
        case invalid
        /// The file cannot be read.
        case unreadable
        /// The service account's `private_key` is not an RSA private key.
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

    public var description: String { "FCM \(setting.rawValue) \(message) (\(code.rawValue))" }
}
