import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto

/// What came of one channel management request or broadcast (Apple's "Sending channel management requests to
/// APNs" and "Sending broadcast push notification requests to APNs").
public enum APNsChannelResult: Sendable, Equatable {
    /// 2xx; a create's answer carries the new channel's `apns-channel-id`.
    case done(channelID: String?)
    /// 2xx to a list: the ids of every channel the app has in the environment.
    case listed(channelIDs: [String])
    /// 400 ChannelNotRegistered (or 404 on a delete): APNs does not know the channel (deleted, expired, another app's).
    case unknownChannel(reason: String)
    /// Refused for good for this request (every other 4xx but 403 and 429).
    case refused(reason: String)
    /// Worth trying again later (429, 5xx, timeouts, connection loss, a provider token being renewed).
    case retry(reason: String, retryAfter: Duration?)
    /// APNs refused Herald's credentials or bundle id, not this channel.
    case setupFault(reason: String)

    /// A non-2xx answer in the words of `APNsResponseClassifier` (the one place APNs' statuses are ruled on).
    static func classify(_ result: DeliveryResult) -> APNsChannelResult {
        switch result {
        case .sent: return .done(channelID: nil)
        case .retry(let reason, let after): return .retry(reason: reason, retryAfter: after)
        case .setupFault(let reason): return .setupFault(reason: reason)
        case .failed(let reason), .tokenInvalid(let reason, _), .tokenSuspect(let reason):
            return reason == APNsChannels.channelNotRegistered
                ? .unknownChannel(reason: reason) : .refused(reason: reason)
        }
    }
}

/// Broadcast channels over APNs for the app `APNsConfiguration.topic`, in one environment: creates and deletes
/// channels on the channel management host (its own port), and sends broadcasts over the APNs client's connections
/// to that environment. The provider token is the client's for that environment.
///
/// Thread-safe; completions run on the transports' threads: keep them short.
public final class APNsChannels: Sendable {
    /// Apple's reason for a channel it does not know.
    public static let channelNotRegistered = "ChannelNotRegistered"
    /// `https://api-manage-broadcast.push.apple.com:2196` (production) and `...sandbox...:2195` (Apple's article).
    public static let defaultProductionManagementURL = "https://api-manage-broadcast.push.apple.com:2196"
    public static let defaultSandboxManagementURL = "https://api-manage-broadcast.sandbox.push.apple.com:2195"

    public let environment: APNsEnvironment
    private let client: APNsClient
    private let management: any APNsTransport

    /// `managementURL` defaults to Apple's host of `environment`.
    public convenience init(client: APNsClient, environment: APNsEnvironment, managementURL: String? = nil)
        throws(HTTP2Error)
    {
        let url = managementURL ?? Self.defaultManagementURL(environment)
        let settings = HTTP2ClientConfiguration(
            url: url, caFile: client.configuration.caFile, connectionCount: 1, streamsUntilAuthenticated: 1,
            connectTimeout: client.configuration.connectTimeout, requestTimeout: client.configuration.requestTimeout,
            responseHeaders: APNsResponseClassifier.readHeaders + ["apns-channel-id"])
        try self.init(client: client, environment: environment, management: try HTTP2Client(configuration: settings))
    }

    public init(client: APNsClient, environment: APNsEnvironment, management: any APNsTransport) throws(HTTP2Error) {
        self.client = client
        self.environment = environment
        self.management = management
    }

    public static func defaultManagementURL(_ environment: APNsEnvironment) -> String {
        environment == .production ? defaultProductionManagementURL : defaultSandboxManagementURL
    }

    /// Creates a Live Activity channel; `storesLatest` asks APNs to keep the most recent message for phones that are
    /// offline (`message-storage-policy` 1).
    public func create(storesLatest: Bool, completion: @escaping @Sendable (APNsChannelResult) -> Void) {
        let body = JSONWriter.bytes(
            .object([
                ("message-storage-policy", .number(storesLatest ? 1 : 0)), ("push-type", .string("LiveActivity")),
            ]))
        call(management, method: "POST", path: channelsPath, headers: [], body: body, completion: completion)
    }

    /// Deletes a channel; one APNs no longer knows answers `unknownChannel`.
    public func delete(channelID: String, completion: @escaping @Sendable (APNsChannelResult) -> Void) {
        call(
            management, method: "DELETE", path: channelsPath, headers: [HTTP2Header("apns-channel-id", channelID)],
            body: [], completion: completion)
    }

    /// Lists every channel the app has in this environment, Herald's or not (`GET /1/apps/{bundleId}/all-channels`,
    /// answered `{"channels":[ids]}`): `listed`, or a failure as for any call. A body of another shape is a retry.
    public func list(completion: @escaping @Sendable (APNsChannelResult) -> Void) {
        call(
            management, method: "GET", path: "/1/apps/" + client.configuration.topic + "/all-channels", headers: [],
            body: [], completion: completion
        ) { response in
            let members = (try? JSONParser.parse(response.body))?["channels"]?.arrayValue
            guard let ids = members?.compactMap(\.stringValue), ids.count == members?.count else {
                return .retry(reason: "malformed_channel_list", retryAfter: nil)
            }
            return .listed(channelIDs: ids)
        }
    }

    /// Sends one `liveactivity` broadcast to every phone following `channelID`. `expiration` (UNIX seconds) is how
    /// long APNs may keep it for a phone that is offline; nil sends none (0 to APNs).
    public func broadcast(
        channelID: String, payload: [UInt8], priority: Int, expiration: Int?,
        completion: @escaping @Sendable (APNsChannelResult) -> Void
    ) {
        let transport: any APNsTransport
        do throws(HTTP2Error) {
            transport = try client.transport(for: environment)
        } catch {
            return completion(APNsChannelResult.classify(APNsResponseClassifier.classify(error)))
        }
        var headers = [
            HTTP2Header("apns-channel-id", channelID), HTTP2Header("apns-push-type", "liveactivity"),
            HTTP2Header("apns-priority", String(priority)),
        ]
        if let expiration { headers.append(HTTP2Header("apns-expiration", String(expiration))) }
        call(
            transport, method: "POST", path: "/4/broadcasts/apps/" + client.configuration.topic, headers: headers,
            body: payload, completion: completion)
    }

    /// Closes the management connection (the broadcasts' are the client's).
    public func shutdown() { management.shutdown() }

    private var channelsPath: String { "/1/apps/" + client.configuration.topic + "/channels" }

    /// One call; a 2xx answer is `success`'s (by default `done` with the `apns-channel-id` a create answers).
    private func call(
        _ transport: any APNsTransport, method: String, path: String, headers: [HTTP2Header],
        body: [UInt8], completion: @escaping @Sendable (APNsChannelResult) -> Void,
        success: @escaping @Sendable (HTTP2Response) -> APNsChannelResult = {
            .done(channelID: $0.header("apns-channel-id"))
        }
    ) {
        let jwt: String, authorization: String
        do throws(CryptoError) {
            (jwt, authorization) = try client.providerToken(for: environment).currentWithAuthorization()
        } catch {
            return completion(.retry(reason: "provider_token_\(error.code)", retryAfter: nil))
        }
        // apns-request-id: APNs echoes it, so a log line of either side names the same request.
        let all =
            [
                HTTP2Header("authorization", authorization),
                HTTP2Header("apns-request-id", UUID().uuidString.lowercased(), neverIndexed: true),
            ] + headers
        transport.send(HTTP2Request(method: method, path: path, headers: all, body: body)) {
            [client, environment] result in
            switch result {
            case .failure(let error):
                completion(APNsChannelResult.classify(APNsResponseClassifier.classify(error)))
            case .success(let response) where (200..<300).contains(response.status):
                completion(success(response))
            case .success(let response) where response.status == 404 && method == "DELETE":
                completion(.unknownChannel(reason: "http_404"))
            case .success(let response):
                switch APNsResponseClassifier.classify(response, now: Date()) {
                case .result(let result):
                    completion(APNsChannelResult.classify(result))
                case .renewProviderToken(let reason):
                    // The next call signs a new token (unless another request renewed it already).
                    _ = client.providerToken(for: environment).invalidate(seen: jwt)
                    completion(.retry(reason: reason.rawValue, retryAfter: nil))
                }
            }
        }
    }
}
