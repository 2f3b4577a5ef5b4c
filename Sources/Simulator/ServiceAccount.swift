import Foundation
import HeraldCore
import HeraldCrypto

/// The parts of a Firebase service-account file the simulator checks against: the project the
/// FCM requests must name, the email that must sign the OAuth2 assertions, the public half of
/// its key, and the token URI whose path the token endpoint is served at.
struct ServiceAccount: Sendable {
    var projectID: String
    var clientEmail: String
    var tokenURI: String
    var key: RS256VerifyingKey

    /// The path of `token_uri` (`https://127.0.0.1:8443/token` -> `/token`).
    var tokenPath: String { Self.path(of: tokenURI) ?? "/token" }

    init(file: String) throws(SimulatorError) {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw SimulatorError(.invalidServiceAccount, "cannot read the FCM credentials file \(file)")
        }
        guard let json = try? JSONParser.parse(bytes), json.objectMembers != nil else {
            throw SimulatorError(.invalidServiceAccount, "the FCM credentials file \(file) is not a JSON object")
        }
        func field(_ name: String) throws(SimulatorError) -> String {
            guard let value = json[name]?.stringValue, !value.isEmpty else {
                throw SimulatorError(.invalidServiceAccount, "the FCM credentials file \(file) has no \"\(name)\"")
            }
            return value
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        let pem = try field("private_key")
        do {
            key = try RS256VerifyingKey(pem: pem)
        } catch {
            throw SimulatorError(.invalidServiceAccount, "the private_key of \(file) is not a usable RSA key")
        }
        guard Self.path(of: tokenURI) != nil else {
            throw SimulatorError(.invalidServiceAccount, "the token_uri of \(file) is not an absolute URL with a path")
        }
    }

    /// The path of an absolute http(s) URL, without query; nil if it has none.
    static func path(of uri: String) -> String? {
        guard let schemeEnd = uri.range(of: "://") else { return nil }
        let rest = uri[schemeEnd.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = rest[slash...].prefix { $0 != "?" && $0 != "#" }
        return path.isEmpty ? nil : String(path)
    }
}
