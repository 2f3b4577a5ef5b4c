import HeraldCore

/// Why the simulator could not be set up or started. `code` is stable for scripts and tests;
/// `message` names the file or flag at fault but never quotes key material.
public typealias SimulatorError = CodedError<SimulatorErrorCode>

/// The stable codes of `SimulatorError`.
public enum SimulatorErrorCode: String, FailureCode {
    /// A configuration value is unusable (a port out of range, a certificate without a key).
    case invalidConfiguration = "invalid_configuration"
    /// The APNs key file (.p8) could not be read or is not an EC P-256 key.
    case invalidAPNsKey = "invalid_apns_key"
    /// The FCM service-account file could not be read or lacks a usable field.
    case invalidServiceAccount = "invalid_service_account"
    /// The HTTP/2 server could not be created or could not listen.
    case serverFailed = "server_failed"
    /// A provider token could not be minted (`herald-sim mint-apns-jwt`).
    case mintFailed = "mint_failed"
}
