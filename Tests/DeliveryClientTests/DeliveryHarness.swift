import APNs
import FCM
import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Synchronization

@testable import Simulator

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

    /// `sharedClock`: the clients use the simulator's clock. `otherFCMAccount`: the simulator also knows the other
    /// project's service account (`TestCredentials.fcmOtherCredentialsFile`); `fcmTokenProject`: the project every
    /// FCM token belongs to (SimulatorConfiguration.fcmTokenProject).
    init(
        sharedClock: Bool = false, requestTimeout: Duration = .seconds(10), otherFCMAccount: Bool = false,
        fcmTokenProject: String? = nil
    ) throws {
        let start = Date()
        simulatorClock = TestClock(start)
        clientClock = sharedClock ? simulatorClock : TestClock(start)
        simulator = try Simulator(
            configuration: SimulatorConfiguration(
                tlsCertificateFile: credentials.serverCertificateFile, tlsKeyFile: credentials.serverKeyFile,
                apnsKeyFile: credentials.apnsKeyFile, fcmCredentialsFile: credentials.fcmCredentialsFile,
                fcmAdditionalCredentialsFiles: otherFCMAccount ? [credentials.fcmOtherCredentialsFile] : [],
                fcmTokenProject: fcmTokenProject, clock: simulatorClock))
        try simulator.start()
        apns = try APNsClient(
            configuration: Self.apnsConfiguration(url: simulator.url, requestTimeout: requestTimeout),
            clock: clientClock)
        let serviceAccount = try credentials.fcmCredentialsFile(tokenURI: simulator.url + "/token")
        fcm = try FCMClient(
            configuration: FCMConfiguration(
                credentialsFile: serviceAccount, url: simulator.url, caFile: credentials.caFile,
                requestTimeout: requestTimeout), clock: clientClock)
    }

    /// The APNs client's configuration for a simulator at `url`.
    static func apnsConfiguration(url: String, connections: Int = 2, requestTimeout: Duration = .seconds(10))
        -> APNsConfiguration
    {
        let credentials = TestCredentials.shared
        return APNsConfiguration(
            keyFile: credentials.apnsKeyFile, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID,
            topic: credentials.apnsTopic, productionURL: url, sandboxURL: url, caFile: credentials.caFile,
            connectionsPerEnvironment: connections, requestTimeout: requestTimeout)
    }

    /// An FCM client of its own for this simulator: its service account (`other`: the other project's) has the
    /// token endpoint `tokenURI` (the simulator's by default) and the project `projectID` (the account's by default).
    func fcmClient(tokenURI: String? = nil, projectID: String? = nil, other: Bool = false) throws -> FCMClient {
        var file = try credentials.fcmCredentialsFile(tokenURI: tokenURI ?? simulator.url + "/token", other: other)
        if let projectID {
            let ownProjectID = other ? credentials.fcmOtherProjectID : credentials.fcmProjectID
            let text = try String(contentsOfFile: file, encoding: .utf8)
                .replacingOccurrences(
                    of: #""project_id": "\#(ownProjectID)""#,
                    with: #""project_id": "\#(projectID)""#)
            file += ".\(projectID).json"
            try text.write(toFile: file, atomically: true, encoding: .utf8)
        }
        return try FCMClient(
            configuration: FCMConfiguration(
                credentialsFile: file, url: simulator.url,
                caFile: credentials.caFile), clock: clientClock)
    }

    /// An APNs client of its own for this simulator whose HTTP/2 clients (real ones) the test can watch.
    func observedAPNsClient(connections: Int = 1, connectBackoff: ExponentialBackoff? = nil)
        throws -> (APNsClient, HTTP2Clients)
    {
        let made = HTTP2Clients()
        let client = try APNsClient(
            configuration: Self.apnsConfiguration(url: simulator.url, connections: connections),
            clock: clientClock
        ) { settings throws(HTTP2Error) -> any APNsTransport in
            var settings = settings
            if let connectBackoff { settings.connectBackoff = connectBackoff }
            return try made.make(settings)
        }
        return (client, made)
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

    static func notification(
        token: String = deviceToken(), environment: APNsEnvironment = .production,
        pushType: String = "alert", payload: String = DeliveryHarness.alertPayload
    )
        -> APNsNotification
    {
        APNsNotification(
            deviceToken: token, environment: environment, id: UUID().uuidString.lowercased(),
            pushType: pushType, payload: Array(payload.utf8))
    }

    static func fcmMessage(token: String = "fcm-" + UUID().uuidString, ttlSeconds: Int? = 120) -> FCMMessage {
        FCMMessage(
            token: token, message: Array(#"{"android":{"priority":"HIGH"},"data":{"title":"Hi","n":"1"}}"#.utf8),
            ttlSeconds: ttlSeconds)
    }
}

/// The HTTP/2 clients a client under test made, in order.
final class HTTP2Clients: Sendable {
    private let made = Mutex<[HTTP2Client]>([])

    func make(_ configuration: HTTP2ClientConfiguration) throws(HTTP2Error) -> HTTP2Client {
        let client = try HTTP2Client(configuration: configuration)
        made.withLock { $0.append(client) }
        return client
    }

    var all: [HTTP2Client] { made.withLock { $0 } }
    var first: HTTP2Client? { all.first }
}
