import HeraldCore

/// A configuration value the FCM client cannot work with; `.invalidKey` means the service account's
/// `private_key` is not an RSA private key.
public typealias FCMConfigurationError = SettingError<FCMSetting>

/// Which `FCMConfiguration` property is wrong.
public enum FCMSetting: String, ClientSetting {
    case url
    case credentialsFile
    case caFile
    case connections
    case requestTimeout
    case connectTimeout

    public static var service: String { "FCM" }
}
