import FCM
import Foundation
import HeraldTestSupport
import Testing

@Suite struct FCMConfigurationTests {
    let credentials = TestCredentials.shared

    @Test func defaultsAndValidation() throws {
        var configuration = FCMConfiguration(credentialsFile: credentials.fcmCredentialsFile)
        #expect(configuration.url == "https://fcm.googleapis.com")
        #expect(configuration.connections == 3)
        try configuration.validate()
        configuration.url = "https://fcm.googleapis.com/v1"
        #expect(throws: FCMConfigurationError.self) { try configuration.validate() }
        configuration.url = "fcm.googleapis.com"
        #expect(throws: FCMConfigurationError.self) { try configuration.validate() }
        configuration.url = "http://127.0.0.1:9000/"
        try configuration.validate()
        configuration.credentialsFile = ""
        #expect(throws: FCMConfigurationError(.credentialsFile, .missing, "is required")) {
            try configuration.validate()
        }
        configuration.credentialsFile = credentials.fcmCredentialsFile
        configuration.connections = 0
        #expect(throws: FCMConfigurationError(.connections, .invalid, "must be between 1 and 64")) {
            try configuration.validate()
        }
    }

    @Test func serviceAccountIsParsedWithoutShowingTheKey() throws {
        let account = try FCMServiceAccount(contentsOfFile: credentials.fcmCredentialsFile)
        #expect(account.projectID == "herald-sim")
        #expect(account.clientEmail == "herald@herald-sim.iam.gserviceaccount.com")
        #expect(account.tokenURI == "https://127.0.0.1:8443/token")
        #expect(account.privateKey.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(!account.description.contains("BEGIN"))
        #expect(!"\(account)".contains(account.privateKey))
    }

    @Test(arguments: [
        ("{}", "has no project_id"),
        (#"{"project_id":"p","client_email":"e","private_key":"k"}"#, "has no token_uri"),
        (#"{"project_id":"p","token_uri":"https://t/token","private_key":"k"}"#, "has no client_email"),
        (#"{"project_id":"p","token_uri":"https://t/token","client_email":"e"}"#, "has no private_key"),
        (
            #"{"project_id":"p","token_uri":"ftp://t","client_email":"e","private_key":"k"}"#,
            "has a token_uri that is not an http(s) URL"
        ),
        (
            #"{"project_id":"p/../x","token_uri":"https://t/token","client_email":"e","private_key":"k"}"#,
            "has a project_id with characters a project id cannot have"
        ),
        (#"{"type":"authorized_user","project_id":"p"}"#, "is not a service account (type must be service_account)"),
        ("[1]", "is not a JSON object"),
        ("not json", "is not a JSON object"),
    ])
    func malformedServiceAccountsNameTheField(_ json: String, _ message: String) {
        #expect(throws: FCMConfigurationError(.credentialsFile, .invalid, message)) {
            try FCMServiceAccount(json: Array(json.utf8))
        }
    }

    @Test func clientRefusesUnreadableCredentialsAndBadKeys() throws {
        #expect(throws: FCMConfigurationError(.credentialsFile, .unreadable, "cannot be read")) {
            try FCMClient(configuration: FCMConfiguration(credentialsFile: "/nonexistent.json"))
        }
        let file = credentials.directory.appendingPathComponent("fcm-bad-key-\(UUID().uuidString).json")
        try
            (#"{"project_id":"p","token_uri":"https://t/token","client_email":"e","#
            + #""private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}"#)
            .write(to: file, atomically: true, encoding: .utf8)
        do {
            _ = try FCMClient(configuration: FCMConfiguration(credentialsFile: file.path))
            Issue.record("a bad key was accepted")
        } catch {
            #expect(error.setting == .credentialsFile)
            #expect(error.code == .invalidKey)
        }
    }
}
