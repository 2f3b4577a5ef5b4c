import Foundation
import HeraldTestSupport
import Testing

/// The throwaway credentials every delivery test relies on are well formed.
@Suite struct CredentialsTests {
    @Test func makeCredentialsWritesEveryFile() throws {
        let credentials = TestCredentials.shared
        for file in [
            credentials.caFile, credentials.serverCertificateFile, credentials.serverKeyFile,
            credentials.apnsKeyFile, credentials.fcmCredentialsFile, credentials.fcmOtherCredentialsFile,
            credentials.fcmOtherPrivateKeyFile,
        ] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(!text.isEmpty, "\(file) is empty")
        }
        #expect(
            try String(contentsOfFile: credentials.apnsKeyFile, encoding: .utf8).hasPrefix(
                "-----BEGIN PRIVATE KEY-----"))
    }

    @Test func serviceAccountCopyPointsAtTheGivenTokenURI() throws {
        let file = try TestCredentials.shared.fcmCredentialsFile(tokenURI: "https://127.0.0.1:1234/token")
        let object =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(object?["token_uri"] as? String == "https://127.0.0.1:1234/token")
        #expect(object?["project_id"] as? String == "herald-sim")
    }

    @Test func theOtherServiceAccountIsAnotherProjectsWithItsOwnKey() throws {
        let credentials = TestCredentials.shared
        let file = try credentials.fcmCredentialsFile(tokenURI: "https://127.0.0.1:1234/token", other: true)
        let object =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(object?["token_uri"] as? String == "https://127.0.0.1:1234/token")
        #expect(object?["project_id"] as? String == credentials.fcmOtherProjectID)
        #expect(object?["client_email"] as? String == credentials.fcmOtherClientEmail)
        let first =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: credentials.fcmCredentialsFile))) as? [String: Any]
        #expect(first?["client_email"] as? String == credentials.fcmClientEmail)
        #expect(object?["private_key"] as? String != first?["private_key"] as? String)
        #expect((object?["private_key"] as? String)?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)
    }
}
