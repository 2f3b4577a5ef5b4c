import APNs
import FCM
import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Simulator

/// An in-process simulator over real TLS HTTP/2 with the test credentials, and APNs and FCM
/// clients pointed at it. The simulator and the clients have separate clocks, so a test can make
/// the simulator see a token as older than the client thinks it is.
final class DeliveryHarness: Sendable {
    let credentials = TestCredentials.shared
    let simulatorClock: TestClock
    let clientClock: TestClock
    let simulator: Simulator
    let apns: APNsClient
    let fcm: FCMClient

    /// `sharedClock`: the clients use the simulator's clock.
    init(sharedClock: Bool = false, requestTimeout: Duration = .seconds(10)) throws {
        let start = Date()
        simulatorClock = TestClock(start)
        clientClock = sharedClock ? simulatorClock : TestClock(start)
        simulator = try Simulator(configuration: SimulatorConfiguration(
            tlsCertificateFile: credentials.serverCertificateFile, tlsKeyFile: credentials.serverKeyFile,
            apnsKeyFile: credentials.apnsKeyFile, fcmCredentialsFile: credentials.fcmCredentialsFile,
            clock: simulatorClock))
        try simulator.start()
        apns = try APNsClient(configuration: APNsConfiguration(
            keyFile: credentials.apnsKeyFile, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID,
            topic: credentials.apnsTopic, productionURL: simulator.url, sandboxURL: simulator.url,
            caFile: credentials.caFile, requestTimeout: requestTimeout), clock: clientClock)
        let serviceAccount = try credentials.fcmCredentialsFile(tokenURI: simulator.url + "/token")
        fcm = try FCMClient(configuration: FCMConfiguration(
            credentialsFile: serviceAccount, url: simulator.url, caFile: credentials.caFile,
            requestTimeout: requestTimeout), clock: clientClock)
    }

    deinit {
        apns.shutdown()
        fcm.shutdown()
        simulator.stop()
    }

    static let alertPayload = #"{"aps":{"alert":{"title":"Hi","body":"There"}}}"#

    /// A fresh 64-hex device token per call, so faults never leak between tests.
    static func deviceToken() -> String {
        (UUID().uuidString + UUID().uuidString).replacingOccurrences(of: "-", with: "").lowercased()
    }

    static func notification(token: String = deviceToken(), environment: APNsEnvironment = .production,
                             pushType: String = "alert", payload: String = DeliveryHarness.alertPayload)
        -> APNsNotification {
        APNsNotification(deviceToken: token, environment: environment, id: UUID().uuidString.lowercased(),
                         pushType: pushType, payload: Array(payload.utf8))
    }

    static func fcmMessage(token: String = "fcm-" + UUID().uuidString, ttlSeconds: Int? = 120) -> FCMMessage {
        FCMMessage(token: token, message: Array(#"{"android":{"priority":"HIGH"},"data":{"title":"Hi","n":"1"}}"#.utf8),
                   ttlSeconds: ttlSeconds)
    }
}
