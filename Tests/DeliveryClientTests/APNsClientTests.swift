import APNs
import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Synchronization
import Testing

/// APNsClient's own logic over a scripted transport: transports per environment, the
/// ExpiredProviderToken renewal, local refusals and shutdown. (Real HTTP/2: APNsSimulatorTests.)
@Suite struct APNsClientTests {
    let credentials = TestCredentials.shared
    let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_000))
    static let expired = HTTP2Response.json(403, #"{"reason":"ExpiredProviderToken"}"#)

    typealias Responder = @Sendable (HTTP2ClientConfiguration, HTTP2Request, Int) -> ScriptedTransport.Answer

    func makeClient(_ responder: @escaping Responder)
        throws -> (APNsClient, TransportRecorder)
    {
        let recorder = TransportRecorder(responder: responder)
        var configuration = APNsConfiguration(
            keyFile: credentials.apnsKeyFile, keyID: credentials.apnsKeyID,
            teamID: credentials.apnsTeamID, topic: credentials.apnsTopic,
            productionURL: "https://prod.test", sandboxURL: "https://sandbox.test")
        configuration.connectionsPerEnvironment = 3
        let client = try APNsClient(configuration: configuration, clock: clock) { settings throws(HTTP2Error) in
            recorder.make(settings)
        }
        return (client, recorder)
    }

    func notification(_ environment: APNsEnvironment = .production, token: String = sampleDeviceToken)
        -> APNsNotification
    {
        APNsNotification(deviceToken: token, environment: environment, id: sampleAPNsID, payload: Array("{}".utf8))
    }

    @Test func oneLazyTransportPerEnvironmentWithAPNsSettings() async throws {
        let (client, recorder) = try makeClient { _, _, _ in .success(HTTP2Response(status: 200)) }
        #expect(recorder.count == 0)
        #expect(await client.send(notification(.production)) == .sent)
        #expect(await client.send(notification(.production)) == .sent)
        #expect(await client.send(notification(.sandbox)) == .sent)
        #expect(recorder.count == 2)
        let production = try #require(recorder["https://prod.test"])
        #expect(production.requests.count == 2)
        #expect(production.configuration.streamsUntilAuthenticated == 1)
        #expect(production.configuration.connectionCount == 3)
        #expect(recorder["https://sandbox.test"]?.requests.count == 1)
        // Both environments share one provider token.
        #expect(client.providerTokensIssued == 1)
        let authorization = try #require(production.requests.first?.header("authorization"))
        #expect(authorization.hasPrefix("bearer "))
        #expect(recorder["https://sandbox.test"]?.requests.first?.header("authorization") == authorization)
    }

    @Test func expiredProviderTokenRenewsRecyclesAndResendsOnce() async throws {
        let (client, recorder) = try makeClient { _, request, index in
            index == 0 ? .success(Self.expired) : .success(HTTP2Response(status: 200))
        }
        _ = try client.providerToken(for: .production).current()
        clock.advance(.seconds(25 * 60))
        #expect(await client.send(notification()) == .sent)
        let transport = try #require(recorder["https://prod.test"])
        #expect(transport.requests.count == 2)
        #expect(transport.recycles == 1)
        #expect(client.connectionRecycles == 1)
        #expect(client.providerTokensIssued == 2)
        #expect(transport.requests[0].header("authorization") != transport.requests[1].header("authorization"))
    }

    @Test func expiredProviderTokenTwiceIsASetupFault() async throws {
        let (client, recorder) = try makeClient { _, _, _ in .success(Self.expired) }
        _ = try client.providerToken(for: .production).current()
        clock.advance(.seconds(21 * 60))
        #expect(await client.send(notification()) == .setupFault(reason: "ExpiredProviderToken"))
        #expect(recorder["https://prod.test"]?.requests.count == 2)
        #expect(client.providerTokensIssued == 2)
    }

    @Test func expiredProviderTokenOnAYoungTokenIsNotRenewed() async throws {
        let (client, recorder) = try makeClient { _, _, _ in .success(Self.expired) }
        clock.advance(.seconds(60))
        #expect(await client.send(notification()) == .setupFault(reason: "ExpiredProviderToken"))
        // Resending with the same token would be refused again; renewing would break the 20-minute floor.
        #expect(recorder["https://prod.test"]?.requests.count == 1)
        #expect(recorder["https://prod.test"]?.recycles == 0)
        #expect(client.providerTokensIssued == 1)
    }

    @Test func malformedDeviceTokensAreRefusedWithoutSending() async throws {
        let (client, recorder) = try makeClient { _, _, _ in .success(HTTP2Response(status: 200)) }
        #expect(await client.send(notification(token: "../../admin")) == .tokenInvalid(reason: "malformed_token"))
        #expect(await client.send(notification(token: "")) == .tokenInvalid(reason: "malformed_token"))
        #expect(recorder.count == 0)
    }

    @Test func transportFailuresAndStatusesFlowThrough() async throws {
        let (client, _) = try makeClient { _, request, _ in
            switch request.path.suffix(2) {
            case "01": return .failure(HTTP2Error(.connectionLost, "peer closed"))
            case "02": return .success(.json(410, #"{"reason":"Unregistered","timestamp":1750000000000}"#))
            default:
                let retryAfter = [HTTP2Header("retry-after", "7")]
                return .success(.json(429, #"{"reason":"TooManyRequests"}"#, headers: retryAfter))
            }
        }
        let base = String(repeating: "ab", count: 31)
        #expect(
            await client.send(notification(token: base + "01"))
                == .retry(reason: "connection_lost", retryAfter: nil))
        #expect(
            await client.send(notification(token: base + "02"))
                == .tokenInvalid(reason: "Unregistered", since: Date(timeIntervalSince1970: 1_750_000_000)))
        #expect(
            await client.send(notification(token: base + "03"))
                == .retry(reason: "TooManyRequests", retryAfter: .seconds(7)))
    }

    @Test func connectOpensProductionOnly() async throws {
        let (client, recorder) = try makeClient { _, _, _ in .success(HTTP2Response(status: 200)) }
        client.connect()
        #expect(recorder.count == 1)
        #expect(recorder["https://prod.test"]?.connects == 1)
        #expect(recorder["https://prod.test"]?.requests.count == 0)
        #expect(await client.send(notification(.production)) == .sent)
        #expect(recorder.count == 1)
    }

    @Test func shutdownClosesTransportsAndLaterSendsRetry() async throws {
        let (client, recorder) = try makeClient { _, _, _ in .success(HTTP2Response(status: 200)) }
        #expect(await client.send(notification(.production)) == .sent)
        client.shutdown()
        #expect(recorder["https://prod.test"]?.shutdowns == 1)
        #expect(await client.send(notification(.sandbox)) == .retry(reason: "shutdown", retryAfter: nil))
        #expect(recorder.count == 1)
    }
}
