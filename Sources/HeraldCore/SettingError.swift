/// The settings of one upstream client, and the name of the service they configure.
public protocol ClientSetting: RawRepresentable, Hashable, Sendable, CaseIterable where RawValue == String {
    /// How the service is named in messages ("APNs", "FCM").
    static var service: String { get }
}

/// The stable codes of `SettingError`.
public enum SettingErrorCode: String, FailureCode {
    /// Required and empty.
    case missing
    /// Present but of the wrong shape (including a credentials file missing a field).
    case invalid
    /// The file cannot be read.
    case unreadable
    /// The key is not a private key of the kind the service signs with.
    case invalidKey = "invalid_key"
}

/// A configuration value an upstream client cannot work with. `setting` names the value (the worker
/// maps it to its environment variable); `code` is stable; `message` never quotes key material or
/// any other part of a credentials file but the name of a missing field.
public struct SettingError<Property: ClientSetting>: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Setting = Property
    public typealias Code = SettingErrorCode

    public let setting: Setting
    public let code: Code
    public let message: String

    public init(_ setting: Setting, _ code: Code, _ message: String) {
        self.setting = setting
        self.code = code
        self.message = message
    }

    public var description: String { "\(Setting.service) \(setting.rawValue) \(message) (\(code.rawValue))" }
}
