import APNs

/// What `herald-sim` was asked to do, from its arguments.
///
/// ```
/// herald-sim [--host H] [--port P] [--tls-cert F --tls-key F] [--apns-key-file F]
///            [--apns-topics A,B] [--apns-environment production|sandbox] [--apns-key-environment K=ENV]...
///            [--fcm-credentials-file F]...
///            [--fcm-token-project P] [--channel-port P] [--channel-limit N] [--record-limit N] [--loops N]
///            [--latency-ms N[,JITTER]]
/// herald-sim mint-apns-jwt --apns-key-file F --key-id K --team-id T
/// ```
/// Flags take their value as the next argument or after `=`; only `--fcm-credentials-file` and
/// `--apns-key-environment` may be repeated.
public enum SimulatorCommand: Sendable {
    /// Listen until SIGTERM or SIGINT.
    case serve(SimulatorConfiguration)
    /// Print a provider token and exit.
    case mintAPNsJWT(keyFile: String, keyID: String, teamID: String)
    /// Print the usage and exit 0.
    case help
    /// Print `herald-sim <release>` and exit 0.
    case version

    /// The default port of the executable (the library's default is 0, any free port).
    public static let defaultPort = 8443

    public static let usage = """
        usage: herald-sim [options]
               herald-sim --version
               herald-sim mint-apns-jwt --apns-key-file FILE --key-id KEYID --team-id TEAMID

        A local APNs + FCM + OAuth2 token endpoint simulator (HTTP/2) with a control API under /sim/.

        options:
          --host ADDRESS               numeric address to listen on (default 127.0.0.1)
          --port PORT                  port (default 8443; 0 picks a free one)
          --tls-cert FILE              PEM certificate: HTTP/2 over TLS (cleartext h2c without it); clients
                                       offering ALPN get h2, clients sending no ALPN get HTTP/2 all the same
          --tls-key FILE               PEM key of the certificate
          --apns-key-file FILE         APNs .p8 key; provider tokens are checked against its public half
          --apns-topics A,B            the team's bundle ids: another apns-topic is 400 TopicDisallowed
                                       (A.push-type.liveactivity, A.voip and Apple's other push-type topics
                                       of a listed bundle are allowed), and a device token belongs to the
                                       bundle of its first accepted request: under another bundle it is
                                       400 DeviceTokenNotForTopic. Without it every topic is accepted.
                                       PUT /sim/tokens/{token} {"bundleId":"A"} binds a token either way.
          --apns-environment ENV       production (default) or sandbox: the APNs host the simulator stands
                                       for; a sandbox 200 answer also carries apns-unique-id
          --apns-key-environment K=ENV the key id K is scoped to ENV (production or sandbox), as Apple
                                       issues keys now: a valid token signed with it under the other
                                       environment is 403 BadEnvironmentKeyIdInToken. Repeat it for more
                                       keys; an unlisted key id is valid in both environments.
          --fcm-credentials-file FILE  FCM service-account JSON; OAuth2 assertions are checked against it and
                                       its access tokens send for its project_id only (another project in
                                       the path is 403 PERMISSION_DENIED). Repeat it for more accounts: an
                                       assertion is checked against the account its iss names, and the
                                       token endpoint is served at each account's token_uri path. Without
                                       it any assertion's shape and times suffice and any project goes.
          --fcm-token-project P        the Firebase project that issued every FCM registration token: a
                                       send to one through another project's messages:send is 403
                                       SENDER_ID_MISMATCH. Without it a token belongs to whichever project
                                       sends. PUT /sim/tokens/{token} {"fcmProject":"P"} binds one token
                                       either way.
          --channel-port PORT          also serve Apple's channel management API (create, read, list and
                                       delete broadcast channels: /1/apps/BUNDLE/channels, .../all-channels)
                                       on this port, with the same TLS and provider-token checks (0 picks a
                                       free one; Apple uses 2195 development, 2196 production). Without it no
                                       channel can exist and every broadcast (POST /4/broadcasts/apps/BUNDLE
                                       on --port) is 400 ChannelNotRegistered.
          --channel-limit N            channels an app may hold (default 10000, Apple's); one more is
                                       400 CannotCreateChannelConfig
          --record-limit N             requests kept for GET /sim/received (default 100000)
          --loops N                    event-loop threads (default 1)
          --latency-ms N[,JITTER]      answer every APNs, FCM and OAuth token request N ms (plus a random
                                       0 to JITTER ms, drawn per request) after it arrived, on a timer: the
                                       streams of one connection wait concurrently. Whole numbers, 0-60000
                                       each (default 0: at once). A fault's delayMs adds to it; /sim/
                                       answers are never delayed.
          -h, --help                   this text

        Prints "herald-sim listening on HOST:PORT (tls|h2c)" once listening (after "herald-sim channel
        management on HOST:PORT (tls|h2c)" with --channel-port); SIGTERM or SIGINT stops it.
        """

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws(UsageError) -> SimulatorCommand {
        if arguments == ["--version"] { return .version }
        if arguments.first == "mint-apns-jwt" {
            let values = try Flags(Array(arguments.dropFirst()), allowed: ["--apns-key-file", "--key-id", "--team-id"])
            if values["help"] != nil { return .help }
            guard let keyFile = values["--apns-key-file"], let keyID = values["--key-id"],
                let teamID = values["--team-id"]
            else { throw UsageError("mint-apns-jwt needs --apns-key-file, --key-id and --team-id") }
            guard keyID.utf8.count == 10 else { throw UsageError("--key-id must be 10 characters (got \"\(keyID)\")") }
            guard teamID.utf8.count == 10 else {
                throw UsageError("--team-id must be 10 characters (got \"\(teamID)\")")
            }
            return .mintAPNsJWT(keyFile: keyFile, keyID: keyID, teamID: teamID)
        }
        let values = try Flags(
            arguments,
            allowed: [
                "--host", "--port", "--tls-cert", "--tls-key", "--apns-key-file", "--apns-topics", "--apns-environment",
                "--fcm-credentials-file", "--fcm-token-project", "--channel-port", "--channel-limit", "--record-limit",
                "--loops", "--latency-ms", "--apns-key-environment",
            ], repeatable: ["--fcm-credentials-file", "--apns-key-environment"])
        if values["help"] != nil { return .help }
        var configuration = SimulatorConfiguration(port: defaultPort)
        if let host = values["--host"] {
            guard !host.isEmpty else { throw UsageError("--host must not be empty") }
            configuration.host = host
        }
        if let text = values["--port"] {
            guard let port = Int(text), (0...65_535).contains(port) else {
                throw UsageError("--port must be a number from 0 to 65535 (got \"\(text)\")")
            }
            configuration.port = port
        }
        configuration.tlsCertificateFile = values["--tls-cert"]
        configuration.tlsKeyFile = values["--tls-key"]
        guard (configuration.tlsCertificateFile == nil) == (configuration.tlsKeyFile == nil) else {
            throw UsageError("--tls-cert and --tls-key go together")
        }
        configuration.apnsKeyFile = values["--apns-key-file"]
        let credentialsFiles = values.all("--fcm-credentials-file")
        configuration.fcmCredentialsFile = credentialsFiles.first
        configuration.fcmAdditionalCredentialsFiles = Array(credentialsFiles.dropFirst())
        if let project = values["--fcm-token-project"] {
            if let problem = FCMTokenProjects.problem(withProject: project) {
                throw UsageError("--fcm-token-project: \(problem)")
            }
            configuration.fcmTokenProject = project
        }
        if let list = values["--apns-topics"] {
            let bundles = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if let problem = TopicPolicy.problem(with: bundles) {
                throw UsageError("--apns-topics: \(problem) (got \"\(list)\")")
            }
            configuration.apnsTopics = bundles
        }
        if let text = values["--apns-environment"] {
            guard let environment = APNsEnvironment(rawValue: text) else {
                throw UsageError("--apns-environment must be production or sandbox (got \"\(text)\")")
            }
            configuration.apnsEnvironment = environment
        }
        for pair in values.all("--apns-key-environment") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0].utf8.count == 10, let environment = APNsEnvironment(rawValue: parts[1])
            else {
                throw UsageError(
                    "--apns-key-environment must be KEYID=production or KEYID=sandbox, a 10-character key id"
                        + " (got \"\(pair)\")")
            }
            configuration.apnsKeyEnvironments[parts[0]] = environment
        }
        if let text = values["--channel-port"] {
            guard let port = Int(text), (0...65_535).contains(port) else {
                throw UsageError("--channel-port must be a number from 0 to 65535 (got \"\(text)\")")
            }
            guard port == 0 || port != configuration.port else {
                throw UsageError("--channel-port must differ from --port (both \(port))")
            }
            configuration.channelPort = port
        }
        if let text = values["--channel-limit"] {
            guard let limit = Int(text), limit >= 1 else {
                throw UsageError("--channel-limit must be a whole number, 1 or more (got \"\(text)\")")
            }
            configuration.channelLimit = limit
        }
        if let text = values["--record-limit"] {
            guard let limit = Int(text), limit >= 0 else {
                throw UsageError("--record-limit must be a whole number, 0 or more (got \"\(text)\")")
            }
            configuration.recordLimit = limit
        }
        if let text = values["--loops"] {
            guard let loops = Int(text), (1...64).contains(loops) else {
                throw UsageError("--loops must be a number from 1 to 64 (got \"\(text)\")")
            }
            configuration.loopCount = loops
        }
        if let text = values["--latency-ms"] {
            guard let latency = SimulatorLatency(argument: text) else {
                let most = SimulatorLatency.range.upperBound
                throw UsageError(
                    "--latency-ms must be N or N,JITTER, whole numbers from 0 to \(most) each"
                        + " (got \"\(text)\")")
            }
            configuration.latency = latency
        }
        return .serve(configuration)
    }
}

/// `--flag value` and `--flag=value` pairs; `-h`/`--help` is reported as the key "help". A flag not in
/// `repeatable` may be given once.
private struct Flags {
    private var values: [String: [String]] = [:]

    init(_ arguments: [String], allowed: Set<String>, repeatable: Set<String> = []) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" {
                values["help"] = [""]
                continue
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard allowed.contains(name) else { throw UsageError("unknown argument \"\(argument)\"") }
            if value == nil {
                guard index < arguments.count else { throw UsageError("\(name) needs a value") }
                value = arguments[index]
                index += 1
            }
            guard values[name] == nil || repeatable.contains(name) else { throw UsageError("\(name) given twice") }
            values[name, default: []].append(value ?? "")
        }
    }

    /// The flag's (first) value.
    subscript(name: String) -> String? { values[name]?.first }

    /// Every value of a repeatable flag, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
}

/// Arguments `herald-sim` cannot run with: printed with the usage, exit status 2.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
