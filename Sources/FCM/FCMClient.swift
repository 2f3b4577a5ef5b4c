import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import Synchronization

/// Sends data messages through the FCM HTTP v1 API and classifies each answer into a
/// `DeliveryResult` for the worker.
///
/// `connections` long-lived HTTP/2 connections to FCM carry one request per message
/// (`POST /v1/projects/{project_id}/messages:send`); a separate connection reaches the service
/// account's token endpoint. Access tokens come from `FCMAccessTokenProvider`; on 401 the client
/// drops the token, fetches a new one and resends once (a second 401 is a setup fault). A send that cannot get a
/// token comes to the exchange's classification: a setup fault when the token endpoint refused the service
/// account, a retry when it could not be reached.
///
/// Thread-safe; `send` never blocks. Completions run on the transport's thread: keep them short.
public final class FCMClient: Sendable {
    /// Makes a transport from its HTTP/2 configuration (one for FCM, one for the token endpoint).
    public typealias TransportFactory = @Sendable (HTTP2ClientConfiguration) throws(HTTP2Error) -> any FCMTransport

    public let configuration: FCMConfiguration
    /// The project every message is sent to (from the credentials file).
    public let projectID: String
    /// The access-token manager (exposed for metrics: `tokensFetched`).
    public let accessTokens: FCMAccessTokenProvider
    private let clock: any HeraldClock
    private let messages: any FCMTransport
    private let oauth: any FCMTransport
    private let sendPath: String
    private let isShutDown = Atomic<Bool>(false)

    /// Validates `configuration`, reads the credentials file and its key, and sets up the
    /// connections (which open on first use).
    public convenience init(configuration: FCMConfiguration, clock: any HeraldClock = SystemClock())
        throws(FCMConfigurationError)
    {
        try self.init(configuration: configuration, clock: clock) {
            (settings) throws(HTTP2Error) -> any FCMTransport in try HTTP2Client(configuration: settings)
        }
    }

    /// As above, with the transports made by `transportFactory`.
    public init(
        configuration: FCMConfiguration, clock: any HeraldClock = SystemClock(),
        transportFactory: TransportFactory
    ) throws(FCMConfigurationError) {
        try configuration.validate()
        let account = try FCMServiceAccount(contentsOfFile: configuration.credentialsFile)
        let key: RS256SigningKey
        do {
            key = try RS256SigningKey(pem: account.privateKey)
        } catch {
            throw FCMConfigurationError(
                .credentialsFile, .invalidKey,
                "has a private_key that is not an RSA private key (\(error.code))")
        }
        if let caFile = configuration.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw FCMConfigurationError(.caFile, .unreadable, "cannot be read")
        }
        guard let tokenEndpoint = try? UpstreamURL(account.tokenURI),
            let fcm = try? UpstreamURL(configuration.url)
        else {
            throw FCMConfigurationError(.credentialsFile, .invalid, "has a token_uri that is not an http(s) URL")
        }
        do throws(HTTP2Error) {
            messages = try transportFactory(
                HTTP2ClientConfiguration(
                    url: fcm.origin, caFile: configuration.caFile, connectionCount: configuration.connections,
                    connectTimeout: configuration.connectTimeout, requestTimeout: configuration.requestTimeout,
                    responseHeaders: FCMResponseClassifier.readHeaders))
        } catch {
            throw FCMConfigurationError(.url, .invalid, "cannot be used (\(error.code.rawValue))")
        }
        do throws(HTTP2Error) {
            // One connection is plenty: a token exchange happens about once an hour.
            oauth = try transportFactory(
                HTTP2ClientConfiguration(
                    url: tokenEndpoint.origin, caFile: configuration.caFile, connectionCount: 1,
                    connectTimeout: configuration.connectTimeout, requestTimeout: configuration.requestTimeout))
        } catch {
            messages.shutdown()
            throw FCMConfigurationError(
                .credentialsFile, .invalid,
                "has a token_uri that cannot be used (\(error.code.rawValue))")
        }
        self.configuration = configuration
        self.clock = clock
        self.projectID = account.projectID
        self.sendPath = "/v1/projects/\(account.projectID)/messages:send"
        self.accessTokens = FCMAccessTokenProvider(
            serviceAccount: account, signingKey: key, transport: oauth,
            clock: clock)
    }

    /// Sends `message` and reports what came of it. Never throws: every problem is a result.
    public func send(_ message: FCMMessage, completion: @escaping @Sendable (DeliveryResult) -> Void) {
        guard !isShutDown.load(ordering: .relaxed) else {
            return completion(.retry(reason: HTTP2Error.Code.shutdown.rawValue, retryAfter: nil))
        }
        let body: [UInt8]
        do throws(FCMMessageBuilder.Failure) {
            body = try FCMMessageBuilder.body(for: message)
        } catch {
            return completion(.failed(reason: error.reason))
        }
        send(body: body, renewed: false, completion: completion)
    }

    /// `send(_:completion:)` for async callers.
    public func send(_ message: FCMMessage) async -> DeliveryResult {
        await withCheckedContinuation { continuation in
            send(message) { continuation.resume(returning: $0) }
        }
    }

    /// Opens the connections to FCM and fetches the access token now (a worker's start), so that the first sends
    /// wait for neither. A failed exchange backs off as one started by a send would.
    public func connect() {
        guard !isShutDown.load(ordering: .relaxed) else { return }
        messages.connect()
        accessTokens.accessToken { _ in }
    }

    /// The statistics of the HTTP/2 client to FCM (nil for a scripted transport): its streams in flight and still
    /// available say how full the pipe is. The token endpoint's client is not counted.
    public var transportStatistics: HTTP2ClientStatistics? { (messages as? HTTP2Client)?.statistics }

    /// Closes every connection. Later sends complete with `retry("shutdown")`.
    public func shutdown() {
        guard !isShutDown.exchange(true, ordering: .sequentiallyConsistent) else { return }
        messages.shutdown()
        oauth.shutdown()
    }

    /// The request for one message body under an access token.
    func request(body: [UInt8], accessToken: String) -> HTTP2Request {
        HTTP2Request(
            method: "POST", path: sendPath,
            headers: [
                HTTP2Header("authorization", "Bearer " + accessToken),
                HTTP2Header("content-type", "application/json; charset=utf-8"),
            ], body: body)
    }

    private func send(body: [UInt8], renewed: Bool, completion: @escaping @Sendable (DeliveryResult) -> Void) {
        accessTokens.accessToken { [self] result in
            let token: String
            switch result {
            case .failure(let failure): return completion(failure.deliveryResult)
            case .success(let value): token = value
            }
            messages.send(request(body: body, accessToken: token)) { [self] result in
                switch result {
                case .failure(let error):
                    completion(FCMResponseClassifier.classify(error))
                case .success(let response):
                    switch FCMResponseClassifier.classify(response, now: clock.now) {
                    case .result(let outcome):
                        completion(outcome)
                    case .renewAccessToken(let reason):
                        guard !renewed else {
                            return completion(FCMResponseClassifier.unauthenticatedAfterRenewal(reason))
                        }
                        accessTokens.invalidate(seen: token)
                        send(body: body, renewed: true, completion: completion)
                    }
                }
            }
        }
    }
}
