import HTTP2

/// Everything the FCM client needs: where FCM is, the service-account file, and how many
/// connections to keep. Every value but the credentials file has a default.
///
/// The worker fills it from `HERALD_FCM_*` and `HERALD_CA_FILE` and maps
/// `FCMConfigurationError.setting` back to the variable's name.
public struct FCMConfiguration: Sendable {
    public static let defaultURL = "https://fcm.googleapis.com"

    /// `https://fcm.googleapis.com` by default; scheme, host and optional port, no path.
    public var url: String
    /// The Firebase service-account JSON (`project_id`, `client_email`, `private_key`, `token_uri`).
    public var credentialsFile: String
    /// An extra trusted CA certificate (the simulator's); used for FCM and the token endpoint.
    public var caFile: String?
    /// Long-lived HTTP/2 connections to FCM; streams are multiplexed over them.
    public var connections: Int
    /// How long one request may take before it counts as a `timeout` (and is retried later).
    public var requestTimeout: Duration
    /// How long a TCP + TLS connect may take.
    public var connectTimeout: Duration

    public init(
        credentialsFile: String, url: String = FCMConfiguration.defaultURL, caFile: String? = nil,
        connections: Int = 3, requestTimeout: Duration = .seconds(10), connectTimeout: Duration = .seconds(5)
    ) {
        self.url = url
        self.credentialsFile = credentialsFile
        self.caFile = caFile
        self.connections = connections
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
    }

    /// Checks every value's shape (the credentials file itself is read by `FCMClient.init`).
    public func validate() throws(FCMConfigurationError) {
        guard !url.isEmpty else { throw FCMConfigurationError(.url, .missing, "is required") }
        guard let origin = try? UpstreamURL(url), origin.isOrigin else {
            throw FCMConfigurationError(
                .url, .invalid,
                "must be https:// or http:// with a host and optional port, without a path")
        }
        guard !credentialsFile.isEmpty else { throw FCMConfigurationError(.credentialsFile, .missing, "is required") }
        if let caFile, caFile.isEmpty {
            throw FCMConfigurationError(.caFile, .invalid, "must be a file path when set")
        }
        guard (1...64).contains(connections) else {
            throw FCMConfigurationError(.connections, .invalid, "must be between 1 and 64")
        }
        guard requestTimeout > .zero else { throw FCMConfigurationError(.requestTimeout, .invalid, "must be positive") }
        guard connectTimeout > .zero else { throw FCMConfigurationError(.connectTimeout, .invalid, "must be positive") }
    }
}
