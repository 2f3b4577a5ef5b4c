import Foundation
import HeraldTestSupport
import Testing

/// The throwaway credentials every delivery test relies on are well formed.
@Suite struct CredentialsTests {
    @Test func makeCredentialsWritesEveryFile() throws {
        let credentials = TestCredentials.shared
        for file in [credentials.caFile, credentials.serverCertificateFile, credentials.serverKeyFile,
                     credentials.apnsKeyFile, credentials.fcmCredentialsFile] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(!text.isEmpty, "\(file) is empty")
        }
        #expect(try String(contentsOfFile: credentials.apnsKeyFile, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }

    @Test func serviceAccountCopyPointsAtTheGivenTokenURI() throws {
        let file = try TestCredentials.shared.fcmCredentialsFile(tokenURI: "https://127.0.0.1:1234/token")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(object?["token_uri"] as? String == "https://127.0.0.1:1234/token")
        #expect(object?["project_id"] as? String == "herald-sim")
    }
}
