import APNs
import Foundation
import HeraldCrypto

/// Mints APNs provider tokens with the APNs client's own builder (`APNsProviderToken.sign`), for
/// `herald-sim mint-apns-jwt` (h2load benchmarks, sandbox users) and for tests.
public enum ProviderTokenMint {
    /// A token signed by `key`. `issuedAt` is whole seconds, as APNs expects.
    public static func mint(key: ES256SigningKey, keyID: String, teamID: String, issuedAt: Date) throws(SimulatorError)
        -> String
    {
        do {
            return try APNs.APNsProviderToken.sign(signingKey: key, keyID: keyID, teamID: teamID, issuedAt: issuedAt)
        } catch {
            throw SimulatorError(.mintFailed, "cannot sign the provider token (\(error.code))")
        }
    }

    /// A token signed by the key in `keyFile`, checking the ids have the 10 characters APNs wants.
    public static func mint(keyFile: String, keyID: String, teamID: String, issuedAt: Date = Date())
        throws(SimulatorError) -> String
    {
        guard keyID.utf8.count == 10 else { throw SimulatorError(.mintFailed, "the key id must be 10 characters") }
        guard teamID.utf8.count == 10 else { throw SimulatorError(.mintFailed, "the team id must be 10 characters") }
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw SimulatorError(.invalidAPNsKey, "cannot read the APNs key file \(keyFile)")
        }
        let key: ES256SigningKey
        do {
            key = try ES256SigningKey(pem: pem)
        } catch {
            throw SimulatorError(.invalidAPNsKey, "the APNs key file \(keyFile) is not an EC P-256 private key")
        }
        return try mint(key: key, keyID: keyID, teamID: teamID, issuedAt: issuedAt)
    }
}
