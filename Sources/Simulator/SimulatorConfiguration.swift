import APNs
import HeraldCore

/// Everything one simulator needs: where it listens, its TLS identity, and the credentials whose
/// public halves it checks clients' tokens against. Every argument has a default, so a test
/// names only what it cares about.
public struct SimulatorConfiguration: Sendable {
    /// A numeric address to listen on.
    public var host: String = "127.0.0.1"
    /// 0 picks a free port; read it back from `Simulator.port` after `start()`.
    public var port: Int = 0
    /// PEM certificate and key: HTTP/2 over TLS (ALPN h2). Both nil: cleartext h2c.
    public var tlsCertificateFile: String?
    public var tlsKeyFile: String?
    /// The APNs token-auth key (.p8, the same file the worker signs with). Provider tokens are
    /// checked against its public half. nil: signatures are not checked (shape, `kid`, `iss`
    /// and `iat` still are), which suits sandbox users without the key.
    public var apnsKeyFile: String?
    /// The FCM service-account JSON (the first `--fcm-credentials-file`). OAuth2 assertions are checked against
    /// its key and `client_email`, an access token it gets may send for its `project_id` only, and the token
    /// endpoint is served at the path of its `token_uri`. nil: assertions are checked for shape and times only,
    /// any project is accepted and the token endpoint is `/token`.
    public var fcmCredentialsFile: String?
    /// More service accounts (`--fcm-credentials-file` given again), each checked as the first is: an assertion
    /// is verified against the account its `iss` names and its access token sends for that account's project.
    /// Accounts whose `token_uri` paths differ are each served at their own path. Needs `fcmCredentialsFile`.
    public var fcmAdditionalCredentialsFiles: [String] = []
    /// The Firebase project that issued every FCM registration token (`--fcm-token-project`): a send to a
    /// token through another project's `messages:send` is 403 SENDER_ID_MISMATCH. `PUT /sim/tokens/{token}`
    /// with `{"fcmProject":...}` overrides it per token. nil: a token belongs to whichever project sends to it
    /// unless bound.
    public var fcmTokenProject: String?
    /// The team's bundle ids (`--apns-topics`). A request whose `apns-topic` is none of them (nor one with a
    /// push-type suffix, `<bundle>.push-type.liveactivity`, `<bundle>.voip`, ...) is 400 TopicDisallowed, and a
    /// device token belongs to the bundle of its first accepted request (400 DeviceTokenNotForTopic under
    /// another). nil: every topic is accepted and tokens belong to a bundle only when bound through the control
    /// API.
    public var apnsTopics: [String]?
    /// Which APNs host the simulator stands for (`--apns-environment`). As with the real ones, a 200 answer of the
    /// sandbox (development) host carries `apns-unique-id` beside `apns-id`; one of production `apns-id` only.
    public var apnsEnvironment: APNsEnvironment = .production
    /// Key ids Apple scoped to one environment (`--apns-key-environment KEYID=ENV`): a valid token signed by one of
    /// them under the other environment is 403 BadEnvironmentKeyIdInToken, on device pushes, broadcasts and channel
    /// management alike. A key id not listed is a team key, valid in both.
    public var apnsKeyEnvironments: [String: APNsEnvironment] = [:]
    /// Where Apple's channel management API is served (`--channel-port`; Apple serves it on ports of its own, 2195
    /// development and 2196 production): same host, TLS identity and provider-token checks as APNs. 0 picks a free
    /// port (`Simulator.channelPort`); nil serves none, so no channel exists and every broadcast is
    /// 400 ChannelNotRegistered.
    public var channelPort: Int?
    /// Broadcast channels an app may hold (`--channel-limit`); Apple's is 10,000 per environment. A create beyond it
    /// is 400 CannotCreateChannelConfig.
    public var channelLimit: Int = Self.appleChannelLimit
    /// At most this many requests are kept for `GET /sim/received` (the oldest are dropped
    /// first; statistics keep counting). 0 keeps none.
    public var recordLimit: Int = 100_000
    /// The time source of provider-token and access-token age checks.
    public var clock: any HeraldClock = SystemClock()
    /// Event-loop threads (each with its own listening socket, SO_REUSEPORT). One keeps a core
    /// free for the client on a small machine; more help when the client runs elsewhere.
    public var loopCount: Int = 1
    /// How long every APNs (device push, broadcast, channel management), FCM and token-endpoint answer waits after
    /// its request arrived (`--latency-ms N[,JITTER]`), on a timer: the event loop goes on reading and answering
    /// other streams meanwhile. A fault's `delayMs` adds to it; the control API is answered at once.
    public var latency: SimulatorLatency = .zero

    /// Apple's limit of broadcast channels per app and environment.
    public static let appleChannelLimit = 10_000

    /// Checks what can be checked without touching the files.
    func validate() throws(SimulatorError) {
        guard (0...65_535).contains(port) else {
            throw SimulatorError(.invalidConfiguration, "port must be 0-65535 (got \(port))")
        }
        guard (tlsCertificateFile == nil) == (tlsKeyFile == nil) else {
            throw SimulatorError(.invalidConfiguration, "a TLS certificate needs a key and a key needs a certificate")
        }
        guard recordLimit >= 0 else {
            throw SimulatorError(.invalidConfiguration, "recordLimit must not be negative (got \(recordLimit))")
        }
        guard (1...64).contains(loopCount) else {
            throw SimulatorError(.invalidConfiguration, "loopCount must be 1-64 (got \(loopCount))")
        }
        if let channelPort {
            guard (0...65_535).contains(channelPort) else {
                throw SimulatorError(.invalidConfiguration, "channelPort must be 0-65535 (got \(channelPort))")
            }
            guard channelPort == 0 || channelPort != port else {
                throw SimulatorError(.invalidConfiguration, "channelPort must differ from port (both \(port))")
            }
        }
        guard channelLimit >= 1 else {
            throw SimulatorError(.invalidConfiguration, "channelLimit must be at least 1 (got \(channelLimit))")
        }
        if let problem = latency.problem {
            throw SimulatorError(.invalidConfiguration, "latency: \(problem)")
        }
        guard !host.isEmpty else { throw SimulatorError(.invalidConfiguration, "host must not be empty") }
        for keyID in apnsKeyEnvironments.keys where keyID.utf8.count != 10 {
            throw SimulatorError(.invalidConfiguration, "apnsKeyEnvironments: a key id must be 10 characters")
        }
        if let apnsTopics, let problem = TopicPolicy.problem(with: apnsTopics) {
            throw SimulatorError(.invalidConfiguration, "apnsTopics: \(problem)")
        }
        guard fcmAdditionalCredentialsFiles.isEmpty || fcmCredentialsFile != nil else {
            throw SimulatorError(
                .invalidConfiguration,
                "fcmAdditionalCredentialsFiles needs fcmCredentialsFile (the first service account)")
        }
        if let fcmTokenProject, let problem = FCMTokenProjects.problem(withProject: fcmTokenProject) {
            throw SimulatorError(.invalidConfiguration, "fcmTokenProject: \(problem)")
        }
    }

    /// Every service-account file, the first (`fcmCredentialsFile`) first.
    public var fcmCredentialsFiles: [String] { (fcmCredentialsFile.map { [$0] } ?? []) + fcmAdditionalCredentialsFiles }

    /// "tls" or "h2c", as the executable prints it.
    public var transportName: String { tlsCertificateFile == nil ? "h2c" : "tls" }
}
