import APNs
import Foundation
import HeraldTestSupport
import Testing

@Suite struct APNsConfigurationTests {
    let credentials = TestCredentials.shared

    var valid: APNsConfiguration {
        APNsConfiguration(
            keyFile: credentials.apnsKeyFile, keyID: credentials.apnsKeyID,
            teamID: credentials.apnsTeamID, topic: credentials.apnsTopic)
    }

    @Test func defaultsAreApplesHostsAndTwoConnections() throws {
        let configuration = valid
        #expect(configuration.productionURL == "https://api.push.apple.com")
        #expect(configuration.sandboxURL == "https://api.sandbox.push.apple.com")
        #expect(configuration.connectionsPerEnvironment == 3)
        #expect(configuration.caFile == nil)
        #expect(configuration.url(for: .sandbox) == "https://api.sandbox.push.apple.com")
        try configuration.validate()
    }

    typealias Case = (
        String, @Sendable (inout APNsConfiguration) -> Void, APNsConfigurationError.Setting,
        APNsConfigurationError.Code
    )

    static let invalid: [Case] = [
        ("empty production URL", { $0.productionURL = "" }, .productionURL, .missing),
        ("ftp URL", { $0.productionURL = "ftp://api.push.apple.com" }, .productionURL, .invalid),
        ("URL with a path", { $0.sandboxURL = "https://api.sandbox.push.apple.com/3/device" }, .sandboxURL, .invalid),
        ("empty key file", { $0.keyFile = "" }, .keyFile, .missing),
        ("empty key id", { $0.keyID = "" }, .keyID, .missing),
        ("short key id", { $0.keyID = "ABC" }, .keyID, .invalid),
        ("team id with a dash", { $0.teamID = "ABCDE-1234" }, .teamID, .invalid),
        ("empty topic", { $0.topic = "" }, .topic, .missing),
        ("topic with a space", { $0.topic = "app herald" }, .topic, .invalid),
        ("empty CA file", { $0.caFile = "" }, .caFile, .invalid),
        ("no connections", { $0.connectionsPerEnvironment = 0 }, .connectionsPerEnvironment, .invalid),
        ("zero timeout", { $0.requestTimeout = .zero }, .requestTimeout, .invalid),
    ]

    @Test(arguments: invalid.indices)
    func invalidValuesNameTheirSetting(_ index: Int) {
        let (name, change, setting, code) = Self.invalid[index]
        var configuration = valid
        change(&configuration)
        #expect(throws: APNsConfigurationError.self, "\(name)") { try configuration.validate() }
        do {
            try configuration.validate()
        } catch {
            #expect(error.setting == setting, "\(name)")
            #expect(error.code == code, "\(name)")
        }
    }

    @Test func trailingSlashAndPortAndCleartextAreAccepted() throws {
        var configuration = valid
        configuration.productionURL = "https://127.0.0.1:8443/"
        configuration.sandboxURL = "http://localhost:8080"
        try configuration.validate()
    }

    @Test func clientRefusesAMissingOrWrongKeyFile() throws {
        var configuration = valid
        configuration.keyFile = "/nonexistent/key.p8"
        #expect(throws: APNsConfigurationError(.keyFile, .unreadable, "cannot be read")) {
            try APNsClient(configuration: configuration)
        }
        configuration.keyFile = credentials.fcmPrivateKeyFile
        do {
            _ = try APNsClient(configuration: configuration)
            Issue.record("an RSA key was accepted")
        } catch {
            #expect(error.setting == .keyFile)
            #expect(error.code == .invalidKey)
            #expect(!error.description.contains("PRIVATE"))
        }
        configuration = valid
        configuration.caFile = "/nonexistent/ca.pem"
        #expect(throws: APNsConfigurationError(.caFile, .unreadable, "cannot be read")) {
            try APNsClient(configuration: configuration)
        }
    }
}
