import FCM
import Foundation
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
        // The file format is the FCM client's: one parser for both sides.
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(contentsOfFile: file)
        } catch {
            throw SimulatorError(.invalidServiceAccount, "the FCM credentials file \(file) \(error.message)")
        }
        projectID = account.projectID
        clientEmail = account.clientEmail
        tokenURI = account.tokenURI
        do {
            key = try RS256VerifyingKey(pem: account.privateKey)
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
