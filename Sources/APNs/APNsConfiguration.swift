import HTTP2

/// Everything the APNs client needs: where APNs is, the token-auth key and ids, and how many
/// connections to keep. Every value but the four credentials has a default.
///
/// `keyFile` and `keyID` sign the requests of both environments unless `sandboxKey` or `productionKey` overrides
/// them for that environment alone: Apple issues keys scoped to one environment, and answers a token signed with a
/// key of the other 403 BadEnvironmentKeyIdInToken.
///
/// The worker fills it from `HERALD_APNS_*` and maps
/// `APNsConfigurationError.setting` back to the variable's name.
public struct APNsConfiguration: Sendable {
    /// `https://api.push.apple.com` by default.
    public var productionURL: String
    /// `https://api.sandbox.push.apple.com` by default (devices registered as `sandbox`).
    public var sandboxURL: String
    /// The `.p8` token-auth key (PKCS#8 PEM, EC P-256).
    public var keyFile: String
    /// The key's 10-character id (JWT `kid`).
    public var keyID: String
    /// The key of the sandbox alone, in place of `keyFile`/`keyID` (HERALD_APNS_SANDBOX_KEY_FILE).
    public var sandboxKey: APNsKey?
    /// The key of production alone (HERALD_APNS_PRODUCTION_KEY_FILE).
    public var productionKey: APNsKey?
    /// The 10-character team id (JWT `iss`).
    public var teamID: String
    /// The app's bundle id: `apns-topic` (Live Activities append `.push-type.liveactivity`).
    public var topic: String
    /// An extra trusted CA certificate (the simulator's).
    public var caFile: String?
    /// Long-lived HTTP/2 connections per environment; streams are multiplexed over them.
    public var connectionsPerEnvironment: Int
    /// How long one request may take before it counts as a `timeout` (and is retried later).
    public var requestTimeout: Duration
    /// How long a TCP + TLS connect may take.
    public var connectTimeout: Duration

    public static let defaultProductionURL = "https://api.push.apple.com"
    public static let defaultSandboxURL = "https://api.sandbox.push.apple.com"

    public init(
        keyFile: String, keyID: String, teamID: String, topic: String,
        productionURL: String = APNsConfiguration.defaultProductionURL,
        sandboxURL: String = APNsConfiguration.defaultSandboxURL,
        caFile: String? = nil, connectionsPerEnvironment: Int = 3,
        requestTimeout: Duration = .seconds(10), connectTimeout: Duration = .seconds(5)
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.keyFile = keyFile
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.caFile = caFile
        self.connectionsPerEnvironment = connectionsPerEnvironment
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
    }

    /// The key that signs `environment`'s requests: its own, else the shared one.
    public func key(for environment: APNsEnvironment) -> APNsKey {
        let own = environment == .sandbox ? sandboxKey : productionKey
        return own ?? APNsKey(file: keyFile, id: keyID)
    }

    /// The base URL of an environment.
    public func url(for environment: APNsEnvironment) -> String {
        switch environment {
        case .production: return productionURL
        case .sandbox: return sandboxURL
        }
    }

    /// Checks every value's shape (the key file itself is read by `APNsClient.init`).
    public func validate() throws(APNsConfigurationError) {
        try Self.checkURL(productionURL, .productionURL)
        try Self.checkURL(sandboxURL, .sandboxURL)
        guard !keyFile.isEmpty else { throw APNsConfigurationError(.keyFile, .missing, "is required") }
        try Self.checkIdentifier(keyID, .keyID)
        if let sandboxKey { try sandboxKey.validate(file: .sandboxKeyFile, id: .sandboxKeyID) }
        if let productionKey { try productionKey.validate(file: .productionKeyFile, id: .productionKeyID) }
        try Self.checkIdentifier(teamID, .teamID)
        guard !topic.isEmpty else { throw APNsConfigurationError(.topic, .missing, "is required") }
        guard topic.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw APNsConfigurationError(.topic, .invalid, "must be a bundle id (printable ASCII, no spaces)")
        }
        if let caFile, caFile.isEmpty {
            throw APNsConfigurationError(.caFile, .invalid, "must be a file path when set")
        }
        guard (1...64).contains(connectionsPerEnvironment) else {
            throw APNsConfigurationError(.connectionsPerEnvironment, .invalid, "must be between 1 and 64")
        }
        guard requestTimeout > .zero else {
            throw APNsConfigurationError(.requestTimeout, .invalid, "must be positive")
        }
        guard connectTimeout > .zero else {
            throw APNsConfigurationError(.connectTimeout, .invalid, "must be positive")
        }
    }

    /// `https://host[:port]` or `http://host[:port]` (cleartext, the simulator without TLS), with
    /// no path: requests carry their own.
    static func checkURL(_ url: String, _ setting: APNsConfigurationError.Setting) throws(APNsConfigurationError) {
        guard !url.isEmpty else { throw APNsConfigurationError(setting, .missing, "is required") }
        guard url.hasPrefix("https://") || url.hasPrefix("http://") else {
            throw APNsConfigurationError(setting, .invalid, "must start with https:// or http://")
        }
        guard let parsed = try? UpstreamURL(url), parsed.isOrigin else {
            throw APNsConfigurationError(setting, .invalid, "must be a scheme, host and optional port, without a path")
        }
    }

    /// Apple's key and team ids are 10 ASCII letters or digits.
    static func checkIdentifier(_ value: String, _ setting: APNsConfigurationError.Setting)
        throws(APNsConfigurationError)
    {
        guard !value.isEmpty else { throw APNsConfigurationError(setting, .missing, "is required") }
        let alphanumeric = value.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        }
        guard value.utf8.count == 10, alphanumeric else {
            throw APNsConfigurationError(setting, .invalid, "must be 10 letters or digits")
        }
    }
}

/// A token-auth key: its `.p8` file (PKCS#8 PEM, EC P-256) and its 10-character id (JWT `kid`).
public struct APNsKey: Sendable, Hashable {
    public var file: String
    public var id: String

    public init(file: String, id: String) {
        self.file = file
        self.id = id
    }

    /// The file is named and the id has Apple's shape; `file` and `id` are the settings errors name.
    func validate(file fileSetting: APNsSetting, id idSetting: APNsSetting) throws(APNsConfigurationError) {
        guard !file.isEmpty else { throw APNsConfigurationError(fileSetting, .missing, "is required") }
        try APNsConfiguration.checkIdentifier(id, idSetting)
    }
}
