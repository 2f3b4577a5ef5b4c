import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto

/// A local APNs + FCM HTTP v1 + OAuth2 token endpoint on one HTTP/2 port (TLS or h2c), with a
/// control API under `/sim/` (see `ControlAPI`), and optionally Apple's broadcast channel management API on a
/// second port (`SimulatorConfiguration.channelPort`).
///
/// It checks what the real services check and answers with their status codes and reason
/// strings, fails requests on demand per device token or channel id (`setFault`), and records every APNs
/// (device push, broadcast, channel management) and FCM request it answered. Tests use it in-process;
/// `herald-sim` runs it as a process.
///
/// ```swift
/// let simulator = try Simulator(configuration: .init(tlsCertificateFile: cert, tlsKeyFile: key,
///                                                    apnsKeyFile: p8))
/// try simulator.start()
/// defer { simulator.stop() }
/// // send to https://127.0.0.1:\(simulator.port)/3/device/<token>, then:
/// #expect(simulator.received().map(\.status) == [200])
/// ```
///
/// Choices where Apple and Google document nothing (each one is also stated where it is made):
/// - APNs checks run in a fixed order and the first failure answers: path (404 BadPath), method
///   (405), a repeated apns-* header (400 DuplicateHeaders), provider token (403/429), topic,
///   push type, priority, expiration, collapse id, apns-id, device token, payload.
/// - `liveactivity` to a topic without `.push-type.liveactivity`: 400 InvalidPushType.
/// - No `apns-push-type`: accepted (Apple requires it only on watchOS) and ruled as an alert.
/// - `--apns-topics`: a topic that is neither a listed bundle id nor one with a push-type suffix
///   (`.push-type.<type>`, `.voip`, `.voip-ptt`, `.complication`, `.pushkit.fileprovider`,
///   `.location-query`) is 400 TopicDisallowed, checked right after MissingTopic. A device token
///   belongs to one app: the bundle bound with `PUT /sim/tokens/{token}`, else (with
///   `--apns-topics`) the bundle of the first request for it that passed every check. Under another
///   bundle it is 400 DeviceTokenNotForTopic, the last check.
/// - A payload that is not a JSON object: 400 PayloadEmpty (APNs documents no reason for it; of
///   the documented ones this is the closest, and like every 400 it means "do not retry").
/// - A `liveactivity` payload that breaks the rules Apple documents for ActivityKit pushes
///   (`LiveActivityPayloadValidator`): 400 PayloadEmpty too (APNs documents no reason; clients
///   report a 200 and a device that drops the push), with the broken rule as the record's `detail`.
///   Duplicate keys are refused in such a payload only (which `event` counts would be a guess).
/// - Any push whose `aps.thread-id` or `aps.category` is not a string, `aps.sound` neither a string nor a
///   dictionary, or `aps.interruption-level` not one of Apple's four values (`APSFieldsValidator`): 400 PayloadEmpty
///   with the rule as the record's `detail`, for the same reason (the device, not APNs, would ignore it).
/// - Background pushes need an explicit `apns-priority: 5` (absent means 10 to APNs); Live
///   Activities take 5 or 10; VoIP payloads may be 5120 bytes.
/// - TooManyProviderTokenUpdates compares the new token's `iat` with the connection's current
///   token's `iat` (20 minutes), so a client minting at most every 20 minutes never sees it.
/// - FCM: an access token sends for its service account's project only; under another project in the path it is
///   403 PERMISSION_DENIED without an FcmError detail (what Google's front end answers). A registration token
///   belongs to one project (`FCMTokenProjects`): the one bound with `PUT /sim/tokens/{token}`, else
///   `--fcm-token-project`, else whichever project sends. A send that passes every other check to a token of
///   another project than the path's is 403 SENDER_ID_MISMATCH (with its FcmError detail), the last check.
///   Topics and conditions belong to no project.
/// - Several service accounts (`--fcm-credentials-file` repeated): the token endpoint is served at each one's
///   `token_uri` path, and an assertion is checked against the account its `iss` names. Two files with one
///   `client_email` are refused at start-up (which key signs would be a guess).
/// - The token endpoint compares the assertion's `aud` with `token_uri` by path only; every
///   assertion problem is 400 `invalid_grant`, but an empty scope is 400 `invalid_scope`. A token
///   whose scopes include neither `firebase.messaging` nor `cloud-platform` is refused by FCM with
///   403 PERMISSION_DENIED (insufficient scopes).
/// - Faults apply only to requests that pass every check (so not to a DeviceTokenNotForTopic or
///   SENDER_ID_MISMATCH answer, and such a request does not use the fault up), and count against
///   `times` when they apply. Dropped and GOAWAY'd requests are not in `received()` (nothing was
///   answered) but are counted in statistics (`dropped`, `goaway`).
/// - `DELETE /sim/received` keeps the statistics (`DELETE /sim/stats` resets them).
/// - Latency (`--latency-ms N[,JITTER]`, `SimulatorConfiguration.latency`): every APNs answer (device push,
///   broadcast, channel management, unknown path), FCM answer and token-endpoint answer leaves N ms plus a uniform
///   0...JITTER ms after its request arrived, drawn per request and waited out on a timer, so one connection's
///   streams are delayed independently and concurrently. A fault's `delayMs` adds to it; drops and GOAWAYs wait too.
///   Control-API answers never wait. Records keep the arrival as `receivedAt` and are written when answered.
///
/// Broadcast channels (iOS 18 broadcast push; Apple's "Sending channel management requests to APNs" and "Sending
/// broadcast push notification requests to APNs"). What Apple documents is followed: channel management on a port
/// of its own, create `POST /1/apps/{bundleId}/channels` with `{"message-storage-policy":0|1,"push-type":
/// "LiveActivity"}` answered 201 with `apns-channel-id`, read (`GET`, `apns-channel-id`) 200 with the channel's
/// policy, list `GET .../all-channels` 200 `{"channels":[...]}`, delete 204; broadcasts `POST
/// /4/broadcasts/apps/{bundleId}` on the APNs port with `apns-channel-id` and `apns-push-type: liveactivity`;
/// 10,000 channels per app and environment; broadcast payloads of at most 5120 bytes; a nonzero `apns-expiration`
/// refused on a No Message Stored channel; `apns-request-id` echoed, or made when absent;
/// the reasons and statuses of the broadcast table of "Handling error responses from APNs". Where Apple is silent:
/// - Check order: `ChannelRequestValidator` and `BroadcastRequestValidator` state it; the first failure answers.
///   A repeated `authorization` or `apns-*` header is 400 DuplicateHeaders, as for device pushes.
/// - Without `--channel-port` no channel can exist and every well-formed broadcast is 400 ChannelNotRegistered.
///   Channel paths on the APNs port, and anything but channel paths on the channel port (broadcasts, `/sim/`),
///   are 404 BadPath. `FeatureNotEnabled` is never answered: every app may broadcast.
/// - Channel ids are 16 random bytes in padded standard base64 (24 characters), the form of Apple's examples. An
///   `apns-channel-id` that is not padded standard base64 of at least one byte, or is longer than 64 characters,
///   is 400 BadChannelId (Apple: "isn't properly encoded, or it's greater than the allowed length", no number).
/// - A channel belongs to the app it was created under: under another bundle id it is 400 ChannelNotRegistered,
///   for read, delete and broadcast alike (Apple lists ChannelNotRegistered among the 400s). The limit
///   (`--channel-limit`, default 10,000) counts one app's channels in the simulator's one environment; one more is
///   400 CannotCreateChannelConfig. Lists are in creation order.
/// - A create body that is not a JSON object is 400 BadRequestPayload; a member other than the two is 400
///   BadRequestParams; no `push-type` is 400 MissingPushType, one other than `LiveActivity` (in any case: Apple
///   spells the broadcast header's value `liveactivity` and `Liveactivity` too) 400 InvalidPushType; a
///   `message-storage-policy` missing or other than the number 0 or 1 is 400 MissingChannelQueueSize, a reason
///   missing from Apple's table that clients report APNs answers.
/// - The bundle id in a channel or broadcast path: with a push-type suffix (`.push-type.liveactivity`, `.voip`,
///   ...) or characters no bundle id has, 400 TopicDisallowed ("Ensure that no push type suffix is added to the
///   bundle ID"); with `--apns-topics`, one not listed is 403 TopicMismatch (the token's team has no such app).
///   Upper-case letters are taken: a developer-forum thread reports TopicMismatch for them from the channel
///   host, which reads as a fault of that host rather than a rule.
/// - `apns-request-id`: echoed on every answer when it is a lowercase canonical UUID, else a new one is made; a
///   malformed one is 400 BadMessageId (Apple's table gives that reason for an invalid id). Broadcast and channel
///   answers carry no `apns-id`. A broadcast's 200 has no body and, on the sandbox host only, `apns-unique-id`, as
///   device pushes do.
/// - Broadcasts: `apns-push-type` is required (400 MissingPushType, in Apple's broadcast table) and must be
///   `liveactivity` in any case (Apple's examples write both `liveactivity` and `Liveactivity`). `apns-priority`
///   is 5 or 10 (absent: 10), the rule of every Live Activity push: the broadcast article mentions low priority
///   only in general terms, and Apple ties no priority to a storage policy, so neither does the simulator.
///   `apns-expiration` is optional (absent is taken as 0); on a Most Recent Message Stored channel one beyond the
///   8 hours Apple keeps a message is taken (Apple documents no refusal). The payload (at most 5120 bytes, as
///   Apple documents) must keep the Live Activity rules of device pushes (`LiveActivityPayloadValidator`,
///   `APSFieldsValidator`) and may not be `event: start` (a broadcast updates or ends the subscribed activities):
///   400 PayloadEmpty with the rule as the record's `detail`, as for device pushes.
/// - Faults set for a channel id apply to its broadcasts that pass every check; a 400 fault without a reason
///   answers ChannelNotRegistered. Channel management takes no faults.
/// - Records: broadcasts and channel requests are `apns` records with a `kind` (`broadcast`, `channel-create`,
///   `channel-read`, `channel-list`, `channel-delete`, or `channel` for a path or method that names no
///   operation), the channel id as `token` (empty when the request names none), and `apns-request-id` as `id`;
///   statistics count them under `apns`. Device-push and FCM records have no `kind`.
public final class Simulator: Sendable {
    public let configuration: SimulatorConfiguration
    private let server: HTTP2Server
    /// Channel management, on a port of its own (`SimulatorConfiguration.channelPort`).
    private let channelServer: HTTP2Server?
    private let channelTable: BroadcastChannels
    private let log: RequestLog
    private let faults: FaultTable
    private let accessTokens: AccessTokenStore
    private let owners: TokenOwners
    private let fcmTokenProjects: FCMTokenProjects
    /// The first service account's project, when a credentials file was given.
    public let fcmProjectID: String?
    /// Every service account's project, the first account's first (repeats kept: a project may have several).
    public let fcmProjectIDs: [String]
    /// The path the OAuth2 token endpoint is served at for the first service account (the path of its
    /// `token_uri`, `/token` without one).
    public let tokenPath: String
    /// Every path the token endpoint is served at, `tokenPath` first.
    public let tokenPaths: [String]

    /// Reads the key and credentials files and prepares the server; nothing listens until
    /// `start()`.
    public init(configuration: SimulatorConfiguration) throws(SimulatorError) {
        try configuration.validate()
        self.configuration = configuration
        let apnsKey = try configuration.apnsKeyFile.map { file throws(SimulatorError) in try Self.readAPNsKey(file) }
        let accounts = try Self.readServiceAccounts(configuration.fcmCredentialsFiles)
        let identifiers = Identifiers()
        log = RequestLog(limit: configuration.recordLimit)
        faults = FaultTable()
        accessTokens = AccessTokenStore()
        owners = TokenOwners(learns: configuration.apnsTopics != nil)
        fcmTokenProjects = FCMTokenProjects(defaultProject: configuration.fcmTokenProject)
        channelTable = BroadcastChannels(limit: configuration.channelLimit)
        let topics = TopicPolicy(bundles: configuration.apnsTopics)
        fcmProjectIDs = accounts.map(\.projectID)
        fcmProjectID = fcmProjectIDs.first
        // A verifier per server: it remembers tokens by connection id, and connection ids are per server. Device
        // pushes and broadcasts share one: a connection's token is the connection's, whatever it sends.
        let verifier = {
            ProviderTokenVerifier(
                key: apnsKey, clock: configuration.clock, environment: configuration.apnsEnvironment,
                keyEnvironments: configuration.apnsKeyEnvironments)
        }
        let apnsVerifier = verifier()
        let oauth = OAuthTokenEndpoint(accounts: accounts, tokens: accessTokens, identifiers: identifiers)
        tokenPaths = oauth.paths
        tokenPath = oauth.paths[0]
        let handler = SimulatorHandler(
            clock: configuration.clock,
            apns: APNsRequestValidator(verifier: apnsVerifier, topics: topics, owners: owners),
            broadcast: BroadcastRequestValidator(verifier: apnsVerifier, topics: topics, channels: channelTable),
            fcm: FCMRequestValidator(tokens: accessTokens, tokenProjects: fcmTokenProjects),
            oauth: oauth, faults: faults, owners: owners, fcmTokenProjects: fcmTokenProjects, log: log,
            identifiers: identifiers,
            apnsEnvironment: configuration.apnsEnvironment, latency: configuration.latency)
        var serverConfiguration = HTTP2ServerConfiguration(
            host: configuration.host, port: configuration.port, tlsCertificateFile: configuration.tlsCertificateFile,
            tlsKeyFile: configuration.tlsKeyFile)
        serverConfiguration.loopCount = configuration.loopCount
        do {
            server = try HTTP2Server(configuration: serverConfiguration, handler: handler)
        } catch {
            throw SimulatorError(.serverFailed, "cannot create the HTTP/2 server: \(error)")
        }
        if let channelPort = configuration.channelPort {
            let channelHandler = ChannelManagementHandler(
                clock: configuration.clock,
                validator: ChannelRequestValidator(verifier: verifier(), topics: topics),
                channels: channelTable, answers: AnswerScheduler(latency: configuration.latency, log: log),
                identifiers: identifiers)
            var channelConfiguration = serverConfiguration
            channelConfiguration.port = channelPort
            // Channel management is a handful of requests: one loop.
            channelConfiguration.loopCount = 1
            do {
                channelServer = try HTTP2Server(configuration: channelConfiguration, handler: channelHandler)
            } catch {
                throw SimulatorError(.serverFailed, "cannot create the channel management server: \(error)")
            }
        } else {
            channelServer = nil
        }
    }

    /// Starts listening (and the servers' loop threads).
    public func start() throws(SimulatorError) {
        do {
            try server.start()
        } catch {
            throw SimulatorError(
                .serverFailed, "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        guard let channelServer else { return }
        do {
            try channelServer.start()
        } catch {
            server.stop()
            throw SimulatorError(
                .serverFailed,
                "cannot listen for channel management on "
                    + "\(configuration.host):\(configuration.channelPort ?? 0): \(error)")
        }
    }

    /// The port listened on (the one picked when the configuration said 0).
    public var port: Int { server.port }

    /// The channel management port; nil when it is not served.
    public var channelPort: Int? { channelServer?.port }

    /// `https://host:port` or `http://host:port`, for clients.
    public var url: String { url(port: port) }

    /// The channel management origin, like `url`; nil when it is not served.
    public var channelURL: String? { channelPort.map { url(port: $0) } }

    private func url(port: Int) -> String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(configuration.tlsCertificateFile == nil ? "http" : "https")://\(host):\(port)"
    }

    /// Closes the listeners and every connection; idempotent.
    public func stop() {
        channelServer?.stop()
        server.stop()
    }

    // MARK: In-process access (the same data as the control API)

    /// The APNs and FCM requests answered, oldest first (at most `recordLimit`).
    public func received() -> [SimulatorRecord] {
        log.entries().map(\.record)
    }

    /// The answered requests for one device token (APNs) or FCM target.
    public func received(token: String) -> [SimulatorRecord] {
        log.entries().filter { $0.token == token }.map(\.record)
    }

    /// Forgets the recorded requests; statistics keep counting.
    public func clearReceived() {
        log.clear()
    }

    /// Answers by service and status since start (or `resetStatistics()`).
    public var statistics: SimulatorStatistics { log.statistics }

    public func resetStatistics() {
        log.resetStatistics()
    }

    /// APNs, FCM and token requests that arrived and wait out their latency or a fault's delay: the signal that a
    /// request reached the simulator before its answer does.
    public var answersWaiting: Int { log.waiting }

    /// Answers ever held back for a latency or a delay: the same signal for a reader that may look only after the
    /// answer went out (a test on a machine busy with the whole suite).
    public var answersHeld: Int { log.heldTotal }

    /// Makes requests for `token` (an APNs device token, or an FCM token / `/topics/name`)
    /// fail as `fault` says, replacing any fault it had.
    public func setFault(_ fault: SimulatorFault, token: String) {
        faults.set(fault, token: token)
    }

    public func clearFaults() {
        faults.removeAll()
    }

    /// Makes `token` (an APNs device token) belong to the app `bundleID`: a request for it under another
    /// bundle's topic is answered 400 DeviceTokenNotForTopic.
    public func bindToken(_ token: String, bundleID: String) {
        owners.bind(token: token, bundleID: bundleID)
    }

    /// Makes `token` (an FCM registration token) belong to the Firebase project `fcmProject`: a send to it under
    /// another project's `messages:send` is answered 403 SENDER_ID_MISMATCH.
    public func bindToken(_ token: String, fcmProject: String) {
        fcmTokenProjects.bound.set(fcmProject, token: token)
    }

    /// Forgets which app or project every token belongs to (bound or learned); `fcmTokenProject` stays.
    public func clearTokenOwners() {
        owners.removeAll()
        fcmTokenProjects.bound.removeAll()
    }

    /// The broadcast channels, by bundle id (sorted), each app's oldest first.
    public func channels() -> [SimulatorChannel] {
        channelTable.all().flatMap(\.channels)
    }

    /// Forgets every broadcast channel.
    public func clearChannels() {
        channelTable.removeAll()
    }

    /// The service accounts of `files`, in order; refuses two with one `client_email`.
    private static func readServiceAccounts(_ files: [String]) throws(SimulatorError) -> [ServiceAccount] {
        var accounts: [ServiceAccount] = []
        for file in files {
            let account = try ServiceAccount(file: file)
            if let index = accounts.firstIndex(where: { $0.clientEmail == account.clientEmail }) {
                throw SimulatorError(
                    .invalidServiceAccount,
                    "the FCM credentials files \(files[index]) and \(file) "
                        + "are both \(account.clientEmail): give each service account once")
            }
            accounts.append(account)
        }
        return accounts
    }

    private static func readAPNsKey(_ file: String) throws(SimulatorError) -> ES256VerifyingKey {
        guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw SimulatorError(.invalidAPNsKey, "cannot read the APNs key file \(file)")
        }
        do {
            return try ES256VerifyingKey(pem: pem)
        } catch {
            throw SimulatorError(.invalidAPNsKey, "the APNs key file \(file) is not an EC P-256 key (\(error.code))")
        }
    }
}
