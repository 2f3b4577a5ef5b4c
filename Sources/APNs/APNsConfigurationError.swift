import HeraldCore

/// A configuration value the APNs client cannot work with; `.invalidKey` means the key file is not an
/// EC P-256 private key.
public typealias APNsConfigurationError = SettingError<APNsSetting>

/// Which `APNsConfiguration` property is wrong.
public enum APNsSetting: String, ClientSetting {
    case productionURL
    case sandboxURL
    case keyFile
    case keyID
    case sandboxKeyFile
    case sandboxKeyID
    case productionKeyFile
    case productionKeyID
    case teamID
    case topic
    case caFile
    case connectionsPerEnvironment
    case requestTimeout
    case connectTimeout

    public static var service: String { "APNs" }
}
