import HTTP2
import HeraldCore
import HeraldCrypto

/// Google's OAuth2 token endpoint for service accounts (the JWT-bearer grant), served at the
/// path of the service account's `token_uri`.
///
/// Checks: form body with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (else 400
/// `unsupported_grant_type`) and an `assertion` (else 400 `invalid_request`); the assertion is an
/// RS256 JWT signed by the service account's key, `iss` is its `client_email`, `aud` names the
/// token endpoint, `scope` includes FCM's, `iat` is not more than 60 s ahead, `exp` is in the
/// future and at most an hour after `iat` (else 400 `invalid_grant`). The audience is compared by
/// path only: the simulator cannot know the host and port a client was told (port 0 picks one
/// after the file was written), and a client that gets the path right read `token_uri`.
struct OAuthTokenEndpoint: Sendable {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let lifetime = 3600
    static let allowedClockSkew: Double = 60

    let account: ServiceAccount?
    let tokens: AccessTokenStore
    let identifiers: Identifiers

    /// Where the endpoint is served.
    var path: String { account?.tokenPath ?? "/token" }

    func respond(to request: HTTP2ServerRequest, now: Double) -> HTTP2Response {
        guard request.method == "POST" else {
            return Self.error(405, "invalid_request", "The token endpoint takes POST")
        }
        guard let form = FormURLEncoded.parse(request.body) else {
            return Self.error(400, "invalid_request", "The body is not application/x-www-form-urlencoded")
        }
        let grant = form.first { $0.name == "grant_type" }?.value
        guard grant == Self.grantType else {
            return Self.error(400, "unsupported_grant_type", "Invalid grant_type: \(grant ?? "")")
        }
        guard let assertion = form.first(where: { $0.name == "assertion" })?.value, !assertion.isEmpty else {
            return Self.error(400, "invalid_request", "Missing required parameter: assertion")
        }
        switch check(assertion: assertion, now: now) {
        case .failure(let problem):
            return Self.error(400, "invalid_grant", problem.message)
        case .success:
            let token = "ya29.sim-" + identifiers.hex(bytes: 24)
            tokens.insert(token, expiresAt: now + Double(Self.lifetime), now: now)
            var body: [UInt8] = []
            JSONWriter.write(.object([
                ("access_token", .string(token)), ("expires_in", .number(Double(Self.lifetime))),
                ("token_type", .string("Bearer")),
            ]), into: &body)
            return HTTP2Response(status: 200, headers: [HTTP2Header("content-type", "application/json")], body: body)
        }
    }

    private struct Problem: Error {
        var message: String
    }

    private func check(assertion: String, now: Double) -> Result<Void, Problem> {
        guard let jwt = JSONWebToken.decode(assertion) else {
            return .failure(Problem(message: "Invalid JWT: the assertion is not a compact JWS"))
        }
        guard jwt.algorithm == "RS256" else {
            return .failure(Problem(message: "Invalid JWT: alg must be RS256"))
        }
        if let account, !account.key.isValidSignature(jwt.signature, for: jwt.signingInput) {
            return .failure(Problem(message: "Invalid JWT Signature."))
        }
        guard let issuer = jwt.claims["iss"]?.stringValue, !issuer.isEmpty,
              account.map({ $0.clientEmail == issuer }) ?? true
        else { return .failure(Problem(message: "Invalid email or User ID")) }
        guard let audience = jwt.claims["aud"]?.stringValue, ServiceAccount.path(of: audience) == path else {
            return .failure(Problem(message: "Invalid JWT: Failed audience check. The right audience is \(account?.tokenURI ?? path)"))
        }
        let scopes = jwt.claims["scope"]?.stringValue?.split(separator: " ") ?? []
        guard scopes.contains(where: { $0 == Self.messagingScope }) else {
            return .failure(Problem(message: "Invalid JWT: scope must include \(Self.messagingScope)"))
        }
        guard let issuedAt = jwt.claims["iat"]?.numberValue, let expiresAt = jwt.claims["exp"]?.numberValue else {
            return .failure(Problem(message: "Invalid JWT: iat and exp must be numbers"))
        }
        guard issuedAt <= now + Self.allowedClockSkew, expiresAt > now,
              expiresAt <= issuedAt + Double(Self.lifetime), expiresAt > issuedAt
        else {
            return .failure(Problem(message: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "
                + "reasonable timeframe. Check your iat and exp values in the JWT claim."))
        }
        return .success(())
    }

    static func error(_ status: Int, _ code: String, _ description: String) -> HTTP2Response {
        var body: [UInt8] = []
        JSONWriter.write(.object([("error", .string(code)), ("error_description", .string(description))]), into: &body)
        return HTTP2Response(status: status, headers: [HTTP2Header("content-type", "application/json")], body: body)
    }
}
