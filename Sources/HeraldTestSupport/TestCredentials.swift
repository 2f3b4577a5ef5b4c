import Foundation

/// Throwaway credentials made by `scripts/make-credentials`: the simulator's TLS certificate and
/// its CA, an APNs `.p8` key and two FCM service accounts of two projects (`herald-sim`, and `herald-sim-other`
/// for tests of another project's credentials or tokens). Made once per test process.
public struct TestCredentials: Sendable {
    public let directory: URL
    public var caFile: String { directory.appendingPathComponent("ca.pem").path }
    public var serverCertificateFile: String { directory.appendingPathComponent("server.pem").path }
    public var serverKeyFile: String { directory.appendingPathComponent("server.key").path }
    public var apnsKeyFile: String { directory.appendingPathComponent("apns-key.p8").path }
    public var fcmPrivateKeyFile: String { directory.appendingPathComponent("fcm-key.pem").path }
    /// The service account as made, with token_uri `https://127.0.0.1:8443/token`.
    public var fcmCredentialsFile: String { directory.appendingPathComponent("fcm-service-account.json").path }
    public let apnsKeyID = "SIMKEY0001"
    public let apnsTeamID = "SIMTEAM001"
    public let apnsTopic = "app.herald.demo"
    public let fcmProjectID = "herald-sim"
    public let fcmClientEmail = "herald@herald-sim.iam.gserviceaccount.com"
    /// The second service account, of another project, as made (token_uri `https://127.0.0.1:8443/token`).
    public var fcmOtherCredentialsFile: String {
        directory.appendingPathComponent("fcm-service-account-other.json").path
    }
    public var fcmOtherPrivateKeyFile: String { directory.appendingPathComponent("fcm-key-other.pem").path }
    public let fcmOtherProjectID = "herald-sim-other"
    public let fcmOtherClientEmail = "herald@herald-sim-other.iam.gserviceaccount.com"

    /// The credentials of this test process.
    public static let shared: TestCredentials = {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("herald-credentials-\(UUID().uuidString)")
        let script = TestEnvironment.repositoryRoot.appendingPathComponent("scripts/make-credentials")
        do {
            let result = try ChildProcess.run(
                script, [directory.path], environment: ProcessInfo.processInfo.environment)
            guard result.status == 0 else { fatalError("scripts/make-credentials failed: \(result.output)") }
        } catch {
            fatalError("scripts/make-credentials could not run: \(error)")
        }
        return TestCredentials(directory: directory)
    }()

    /// A copy of the service-account file (`other`: the other project's) whose token_uri is `tokenURI` (the
    /// simulator's, once its port is known). Returns the new file's path.
    public func fcmCredentialsFile(tokenURI: String, other: Bool = false) throws -> String {
        let text = try String(contentsOfFile: other ? fcmOtherCredentialsFile : fcmCredentialsFile, encoding: .utf8)
            .replacingOccurrences(of: "https://127.0.0.1:8443/token", with: tokenURI)
        let file = directory.appendingPathComponent("fcm-service-account-\(UUID().uuidString).json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }
}
