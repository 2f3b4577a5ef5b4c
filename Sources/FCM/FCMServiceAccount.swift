import Foundation
import HTTP2
import HeraldCore

/// The fields of a Firebase service-account file the FCM client uses. `description` and errors
/// never show `privateKey`.
public struct FCMServiceAccount: Sendable, CustomStringConvertible {
    /// Goes into the send path: `/v1/projects/{projectID}/messages:send`.
    public let projectID: String
    /// The assertion's `iss`.
    public let clientEmail: String
    /// PEM of the RSA key that signs the OAuth2 assertion. Secret.
    public let privateKey: String
    /// Where assertions are exchanged for access tokens (`https://oauth2.googleapis.com/token`);
    /// also the assertion's `aud`.
    public let tokenURI: String

    public init(projectID: String, clientEmail: String, privateKey: String, tokenURI: String) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKey = privateKey
        self.tokenURI = tokenURI
    }

    /// Parses the JSON text of a service-account file. Errors name the missing or malformed field
    /// (setting `credentialsFile`), never its value.
    public init(json bytes: [UInt8]) throws(FCMConfigurationError) {
        guard let json = try? JSONParser.parse(bytes), json.objectMembers != nil else {
            throw FCMConfigurationError(.credentialsFile, .invalid, "is not a JSON object")
        }
        func field(_ name: String) throws(FCMConfigurationError) -> String {
            guard let value = json[name]?.stringValue, !value.isEmpty else {
                throw FCMConfigurationError(.credentialsFile, .invalid, "has no \(name)")
            }
            return value
        }
        if let type = json["type"]?.stringValue, type != "service_account" {
            throw FCMConfigurationError(
                .credentialsFile, .invalid,
                "is not a service account (type must be service_account)")
        }
        let projectID = try field("project_id")
        // The project id becomes part of the request path.
        guard
            projectID.utf8.allSatisfy({
                (0x30...0x39).contains($0) || (0x61...0x7A).contains($0)
                    || (0x41...0x5A).contains($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                    || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":")
            })
        else {
            throw FCMConfigurationError(
                .credentialsFile, .invalid,
                "has a project_id with characters a project id cannot have")
        }
        let tokenURI = try field("token_uri")
        guard (try? UpstreamURL(tokenURI)) != nil else {
            throw FCMConfigurationError(.credentialsFile, .invalid, "has a token_uri that is not an http(s) URL")
        }
        self.init(
            projectID: projectID, clientEmail: try field("client_email"), privateKey: try field("private_key"),
            tokenURI: tokenURI)
    }

    /// Reads and parses a service-account file.
    public init(contentsOfFile path: String) throws(FCMConfigurationError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FCMConfigurationError(.credentialsFile, .unreadable, "cannot be read")
        }
        try self.init(json: [UInt8](data))
    }

    public var description: String {
        "FCMServiceAccount(projectID: \(projectID), clientEmail: \(clientEmail), tokenURI: \(tokenURI), "
            + "privateKey: <redacted>)"
    }
}
