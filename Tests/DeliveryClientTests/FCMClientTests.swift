import FCM
import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

/// FCMClient's own logic over scripted transports: paths and headers, the 401 renewal, token
/// reuse, local refusals and shutdown. (Real HTTP/2: FCMSimulatorTests.)
@Suite struct FCMClientTests {
    let credentials = TestCredentials.shared
    let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_000))
    static let fcmURL = "https://fcm.test"
    static let tokenOrigin = "https://127.0.0.1:8443"

    /// `messages` answers FCM requests; the token endpoint issues `token-<n>`.
    func makeClient(_ messages: @escaping @Sendable (HTTP2Request, Int) -> ScriptedTransport.Answer)
        throws -> (FCMClient, TransportRecorder)
    {
        let recorder = TransportRecorder { configuration, request, index in
            if configuration.url == Self.tokenOrigin {
                return .success(.json(200, #"{"access_token":"token-\#(index)","expires_in":3600}"#))
            }
            return messages(request, index)
        }
        let configuration = FCMConfiguration(
            credentialsFile: credentials.fcmCredentialsFile, url: Self.fcmURL,
            connections: 3)
        let client = try FCMClient(configuration: configuration, clock: clock) { settings throws(HTTP2Error) in
            recorder.make(settings)
        }
        return (client, recorder)
    }

    let message = FCMMessage(
        token: "device-registration-token",
        message: Array(#"{"android":{"priority":"HIGH"},"data":{"k":"v"}}"#.utf8),
        ttlSeconds: 120)

    @Test func sendsToTheProjectPathWithABearerToken() async throws {
        let (client, recorder) = try makeClient { _, _ in
            .success(.json(200, #"{"name":"projects/herald-sim/messages/1"}"#))
        }
        #expect(client.projectID == "herald-sim")
        #expect(await client.send(message) == .sent)
        let fcm = try #require(recorder[Self.fcmURL])
        #expect(fcm.configuration.connectionCount == 3)
        #expect(recorder[Self.tokenOrigin]?.configuration.connectionCount == 1)
        let request = try #require(fcm.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/v1/projects/herald-sim/messages:send")
        #expect(request.header("authorization") == "Bearer token-0")
        #expect(request.header("content-type") == "application/json; charset=utf-8")
        #expect(
            request.bodyText == #"{"message":{"android":{"priority":"HIGH","ttl":"120s"},"data":{"k":"v"},"#
                + #""token":"device-registration-token"}}"#)
    }

    @Test func connectOpensTheConnectionsAndFetchesTheToken() async throws {
        let (client, recorder) = try makeClient { _, _ in .success(HTTP2Response(status: 200)) }
        client.connect()
        #expect(recorder[Self.fcmURL]?.connects == 1)
        #expect(recorder[Self.fcmURL]?.requests.count == 0)
        #expect(recorder[Self.tokenOrigin]?.requests.count == 1)
        #expect(client.accessTokens.tokensFetched == 1)
        #expect(await client.send(message) == .sent)
        #expect(recorder[Self.tokenOrigin]?.requests.count == 1)
    }

    @Test func accessTokenIsReusedAcrossSends() async throws {
        let (client, recorder) = try makeClient { _, _ in .success(HTTP2Response(status: 200)) }
        for _ in 0..<20 { #expect(await client.send(message) == .sent) }
        #expect(recorder[Self.tokenOrigin]?.requests.count == 1)
        #expect(client.accessTokens.tokensFetched == 1)
        #expect(Set(recorder[Self.fcmURL]!.requests.compactMap { $0.header("authorization") }) == ["Bearer token-0"])
    }

    @Test func unauthenticatedRenewsTheTokenAndResendsOnce() async throws {
        let (client, recorder) = try makeClient { request, _ in
            request.header("authorization") == "Bearer token-0"
                ? .success(.json(401, #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#))
                : .success(HTTP2Response(status: 200))
        }
        #expect(await client.send(message) == .sent)
        #expect(recorder[Self.fcmURL]?.requests.count == 2)
        #expect(client.accessTokens.tokensFetched == 2)
    }

    @Test func unauthenticatedTwiceIsASetupFault() async throws {
        let (client, recorder) = try makeClient { _, _ in
            .success(.json(401, #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#))
        }
        #expect(await client.send(message) == .setupFault(reason: "UNAUTHENTICATED"))
        #expect(recorder[Self.fcmURL]?.requests.count == 2)
        #expect(client.accessTokens.tokensFetched == 2)
    }

    /// A client whose token endpoint answers `answer` (FCM itself would accept everything).
    func clientWithTokenEndpoint(_ answer: ScriptedTransport.Answer) throws -> (FCMClient, TransportRecorder) {
        let recorder = TransportRecorder { configuration, _, _ in
            configuration.url == Self.tokenOrigin ? answer : .success(HTTP2Response(status: 200))
        }
        let configuration = FCMConfiguration(credentialsFile: credentials.fcmCredentialsFile, url: Self.fcmURL)
        let client = try FCMClient(configuration: configuration, clock: clock) { settings throws(HTTP2Error) in
            recorder.make(settings)
        }
        return (client, recorder)
    }

    @Test func aRefusedTokenExchangeIsASetupFaultWithoutSending() async throws {
        let (client, recorder) = try clientWithTokenEndpoint(.success(.json(400, #"{"error":"invalid_grant"}"#)))
        #expect(await client.send(message) == .setupFault(reason: "oauth_invalid_grant"))
        #expect(recorder[Self.fcmURL]?.requests.count == 0)
    }

    @Test func anUnreachableTokenEndpointIsARetryWithoutSending() async throws {
        let (client, recorder) = try clientWithTokenEndpoint(.failure(HTTP2Error(.connectFailed, "refused")))
        #expect(await client.send(message) == .retry(reason: "oauth_connect_failed", retryAfter: nil))
        #expect(recorder[Self.fcmURL]?.requests.count == 0)
    }

    @Test func invalidStoredMessagesFailWithoutSending() async throws {
        let (client, recorder) = try makeClient { _, _ in .success(HTTP2Response(status: 200)) }
        let broken = FCMMessage(token: "t", message: Array("not json".utf8))
        #expect(await client.send(broken) == .failed(reason: "invalid_message"))
        #expect(recorder[Self.fcmURL]?.requests.count == 0)
        #expect(recorder[Self.tokenOrigin]?.requests.count == 0)
    }

    @Test func shutdownClosesBothTransports() async throws {
        let (client, recorder) = try makeClient { _, _ in .success(HTTP2Response(status: 200)) }
        client.shutdown()
        client.shutdown()
        #expect(recorder[Self.fcmURL]?.shutdowns == 1)
        #expect(recorder[Self.tokenOrigin]?.shutdowns == 1)
        #expect(await client.send(message) == .retry(reason: "shutdown", retryAfter: nil))
    }
}
