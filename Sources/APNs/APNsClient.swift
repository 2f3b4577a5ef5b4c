import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import Synchronization

/// Sends notifications to APNs over HTTP/2 with token authentication, and classifies each
/// answer into a `DeliveryResult` for the worker.
///
/// One `HTTP2Client` per environment (production, sandbox), made on first use (production's by `connect()`), with
/// `connectionsPerEnvironment` long-lived connections; a new connection carries one stream until
/// an answer on it proves the provider token was accepted (APNs' rule for token auth: any status but 403). Each
/// environment signs with its key (`APNsConfiguration.key(for:)`): one provider token per key, shared by the
/// environments that share the key, each renewed as `APNsProviderToken` describes. On 403
/// ExpiredProviderToken or InvalidProviderToken the client renews the token (when it is old enough to be
/// replaced), recycles that environment's connections and resends once; a second refusal is a setup fault.
///
/// Thread-safe; `send` never blocks. Completions run on the transport's thread: keep them short.
public final class APNsClient: Sendable {
    /// Makes the transport of one environment from its HTTP/2 configuration.
    public typealias TransportFactory = @Sendable (HTTP2ClientConfiguration) throws(HTTP2Error) -> any APNsTransport

    public let configuration: APNsConfiguration
    /// Each environment's provider token manager; environments with the same key hold the same one.
    private let providerTokens: [APNsEnvironment: APNsProviderToken]
    /// One provider token manager per key.
    private let keyTokens: [APNsProviderToken]
    private let clock: any HeraldClock
    private let makeTransport: TransportFactory
    private let transports = Mutex<[APNsEnvironment: any APNsTransport]>([:])
    private let isShutDown = Atomic<Bool>(false)
    private let recycles = Atomic<Int>(0)

    /// Validates `configuration`, reads the key file and checks the CA file. No connection is
    /// made until the first send to an environment.
    public convenience init(configuration: APNsConfiguration, clock: any HeraldClock = SystemClock())
        throws(APNsConfigurationError)
    {
        try self.init(configuration: configuration, clock: clock) {
            (settings) throws(HTTP2Error) -> any APNsTransport in try HTTP2Client(configuration: settings)
        }
    }

    /// As above, with the transport of each environment made by `transportFactory`.
    public init(
        configuration: APNsConfiguration, clock: any HeraldClock = SystemClock(),
        transportFactory: @escaping TransportFactory
    ) throws(APNsConfigurationError) {
        try configuration.validate()
        if let caFile = configuration.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw APNsConfigurationError(.caFile, .unreadable, "cannot be read")
        }
        var tokens: [APNsKey: APNsProviderToken] = [:]
        var byEnvironment: [APNsEnvironment: APNsProviderToken] = [:]
        for environment in [APNsEnvironment.production, .sandbox] {
            let key = configuration.key(for: environment)
            if let shared = tokens[key] {
                byEnvironment[environment] = shared
                continue
            }
            let fileSetting: APNsSetting =
                key == configuration.sandboxKey
                ? .sandboxKeyFile : key == configuration.productionKey ? .productionKeyFile : .keyFile
            let token = APNsProviderToken(
                signingKey: try Self.signingKey(key.file, setting: fileSetting), keyID: key.id,
                teamID: configuration.teamID, clock: clock)
            tokens[key] = token
            byEnvironment[environment] = token
        }
        self.configuration = configuration
        self.clock = clock
        self.makeTransport = transportFactory
        self.providerTokens = byEnvironment
        self.keyTokens = Array(tokens.values)
    }

    /// Reads and parses one `.p8` file; errors name `setting` and never quote the file.
    private static func signingKey(_ file: String, setting: APNsSetting) throws(APNsConfigurationError)
        -> ES256SigningKey
    {
        let pem: String
        do {
            pem = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw APNsConfigurationError(setting, .unreadable, "cannot be read")
        }
        do {
            return try ES256SigningKey(pem: pem)
        } catch {
            throw APNsConfigurationError(setting, .invalidKey, "is not a PKCS#8 EC P-256 private key (\(error.code))")
        }
    }

    /// The provider token `environment`'s requests carry (channel management and broadcasts use it too).
    public func providerToken(for environment: APNsEnvironment) -> APNsProviderToken {
        providerTokens[environment]!
    }

    /// Sends `notification` and reports what came of it. Never throws: every problem is a result
    /// (`retry` for transport trouble, `tokenInvalid` for a malformed device token).
    public func send(_ notification: APNsNotification, completion: @escaping @Sendable (DeliveryResult) -> Void) {
        send(notification, renewed: false, completion: completion)
    }

    /// `send(_:completion:)` for async callers.
    public func send(_ notification: APNsNotification) async -> DeliveryResult {
        await withCheckedContinuation { continuation in
            send(notification) { continuation.resume(returning: $0) }
        }
    }

    /// Opens the production environment's connections now (a worker's start), so that its first claim does not wait
    /// for them. The sandbox's open at its first send: few devices are there, and the TLS context is already made.
    public func connect() {
        try? transport(for: .production).connect()
    }

    /// Closes every connection. Later sends complete with `retry("shutdown")`.
    public func shutdown() {
        let all = transports.withLock { transports in
            isShutDown.store(true, ordering: .sequentiallyConsistent)
            defer { transports.removeAll() }
            return Array(transports.values)
        }
        for transport in all { transport.shutdown() }
    }

    /// Provider tokens signed so far, over every key.
    public var providerTokensIssued: Int { keyTokens.reduce(0) { $0 + $1.issuedCount } }

    /// Times an environment's connections were recycled after ExpiredProviderToken or InvalidProviderToken.
    public var connectionRecycles: Int { recycles.load(ordering: .relaxed) }

    /// The statistics of each environment's HTTP/2 client made so far (a scripted transport has none): its streams
    /// in flight and still available say how full the pipe to APNs is.
    public var transportStatistics: [HTTP2ClientStatistics] {
        transports.withLock { $0.values.compactMap { ($0 as? HTTP2Client)?.statistics } }
    }

    private func send(
        _ notification: APNsNotification, renewed: Bool,
        completion: @escaping @Sendable (DeliveryResult) -> Void
    ) {
        guard !isShutDown.load(ordering: .relaxed) else {
            return completion(.retry(reason: HTTP2Error.Code.shutdown.rawValue, retryAfter: nil))
        }
        // A token that is not hex would corrupt the request path. No setup of Herald's makes it valid, so it is
        // dead at once (APNs' own BadDeviceToken is only suspect: the classifier).
        guard APNsRequestBuilder.isWellFormedDeviceToken(notification.deviceToken) else {
            return completion(.tokenInvalid(reason: "malformed_token"))
        }
        let transport: any APNsTransport
        let jwt: String
        let authorization: String
        do throws(HTTP2Error) {
            transport = try self.transport(for: notification.environment)
        } catch {
            return completion(APNsResponseClassifier.classify(error))
        }
        do throws(CryptoError) {
            (jwt, authorization) = try providerToken(for: notification.environment).currentWithAuthorization()
        } catch {
            return completion(.retry(reason: "provider_token_\(error.code)", retryAfter: nil))
        }
        let request = APNsRequestBuilder.request(
            for: notification, topic: configuration.topic,
            authorization: authorization)
        transport.send(request) { [self] result in
            switch result {
            case .failure(let error):
                completion(APNsResponseClassifier.classify(error))
            case .success(let response):
                switch APNsResponseClassifier.classify(response, now: clock.now) {
                case .result(let outcome):
                    completion(outcome)
                case .renewProviderToken(let reason):
                    renewAndResend(
                        notification, seen: jwt, reason: reason, transport: transport, renewed: renewed,
                        completion: completion)
                }
            }
        }
    }

    /// 403 ExpiredProviderToken or InvalidProviderToken (`reason`) for `seen`: renew (unless another request
    /// already did, or the token is too young to replace), recycle the connections, and resend once.
    private func renewAndResend(
        _ notification: APNsNotification, seen: String, reason: APNsErrorReason,
        transport: any APNsTransport, renewed: Bool,
        completion: @escaping @Sendable (DeliveryResult) -> Void
    ) {
        guard !renewed else { return completion(APNsResponseClassifier.providerTokenRefused(reason)) }
        let providerToken = providerToken(for: notification.environment)
        if providerToken.invalidate(seen: seen) {
            recycles.add(1, ordering: .relaxed)
            transport.recycleConnections()
        }
        // Resending with the very token APNs just refused would only fail again.
        guard let next = try? providerToken.current(), next != seen else {
            return completion(APNsResponseClassifier.providerTokenRefused(reason))
        }
        send(notification, renewed: true, completion: completion)
    }

    func transport(for environment: APNsEnvironment) throws(HTTP2Error) -> any APNsTransport {
        try transports.withLock { (transports) throws(HTTP2Error) -> any APNsTransport in
            if let existing = transports[environment] { return existing }
            // Checked under the lock so a send racing `shutdown()` cannot leave a live transport behind.
            guard !isShutDown.load(ordering: .sequentiallyConsistent) else {
                throw HTTP2Error(.shutdown, "the APNs client was shut down")
            }
            let settings = HTTP2ClientConfiguration(
                url: configuration.url(for: environment), caFile: configuration.caFile,
                connectionCount: configuration.connectionsPerEnvironment, streamsUntilAuthenticated: 1,
                connectTimeout: configuration.connectTimeout, requestTimeout: configuration.requestTimeout,
                responseHeaders: APNsResponseClassifier.readHeaders)
            let transport = try makeTransport(settings)
            transports[environment] = transport
            return transport
        }
    }
}
