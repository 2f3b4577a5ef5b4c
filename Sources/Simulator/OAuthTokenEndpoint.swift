import HTTP2
import HeraldCore
import HeraldCrypto

/// Google's OAuth2 token endpoint for service accounts (the JWT-bearer grant), served at the path of every known
/// service account's `token_uri` (one path when they share it).
///
/// Checks: form body with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (else 400
/// `unsupported_grant_type`) and an `assertion` (else 400 `invalid_request`); the assertion is an RS256 JWT whose
/// `iss` is the `client_email` of a known service account and which that account's key signed, `aud` names that
/// account's token endpoint, `iat` is not more than 60 s ahead, `exp` is in the future and at most an hour after
/// `iat` (else 400 `invalid_grant`), and `scope` is not empty (else 400 `invalid_scope`). The access token is bound
/// to the account's project: FCM takes it only for that project's `messages:send`.
/// Any scope gets a token, as at Google; FCM then takes only tokens whose scopes include one that
/// `messages:send` documents (`firebase.messaging` or `cloud-platform`) and answers others 403.
/// The audience is compared by
/// path only: the simulator cannot know the host and port a client was told (port 0 picks one
/// after the file was written), and a client that gets the path right read `token_uri`.
/// Without any service account every issuer goes (signatures unchecked), the path is `/token`, and the token
/// may send for any project.
struct OAuthTokenEndpoint: Sendable {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// The other scope FCM's `messages:send` accepts (firebase-admin asks for it).
    static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
    static let lifetime = 3600
    static let allowedClockSkew: Double = 60

    /// The known service accounts, the primary first; empty: lenient (see above).
    let accounts: [ServiceAccount]
    let tokens: AccessTokenStore
    let identifiers: Identifiers
    /// Where the endpoint is served: each account's `token_uri` path once, the primary's first.
    let paths: [String]

    init(accounts: [ServiceAccount], tokens: AccessTokenStore, identifiers: Identifiers) {
        self.accounts = accounts
        self.tokens = tokens
        self.identifiers = identifiers
        var paths: [String] = []
        for path in accounts.map(\.tokenPath) where !paths.contains(path) { paths.append(path) }
        self.paths = paths.isEmpty ? ["/token"] : paths
    }

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
            return Self.error(400, problem.code, problem.message)
        case .success(let grant):
            let token = "ya29.sim-" + identifiers.hex(bytes: 24)
            tokens.insert(
                token, expiresAt: now + Double(Self.lifetime), mayMessage: grant.mayMessage,
                project: grant.project, now: now)
            var body: [UInt8] = []
            JSONWriter.write(
                .object([
                    ("access_token", .string(token)), ("expires_in", .number(Double(Self.lifetime))),
                    ("token_type", .string("Bearer")),
                ]), into: &body)
            return HTTP2Response(status: 200, headers: [HTTP2Header("content-type", "application/json")], body: body)
        }
    }

    private struct Problem: Error {
        var code = "invalid_grant"
        var message: String
    }

    /// What the token will carry: whether it may send FCM messages, and for which project (nil: any).
    private struct Granted {
        var mayMessage: Bool
        var project: String?
    }

    /// What the assertion earns, or what is wrong with it.
    private func check(assertion: String, now: Double) -> Result<Granted, Problem> {
        guard let jwt = JSONWebToken.decode(assertion) else {
            return .failure(Problem(message: "Invalid JWT: the assertion is not a compact JWS"))
        }
        guard jwt.algorithm == "RS256" else {
            return .failure(Problem(message: "Invalid JWT: alg must be RS256"))
        }
        // The issuer picks the key: each service account signs with its own.
        guard let issuer = jwt.claims["iss"]?.stringValue, !issuer.isEmpty else {
            return .failure(Problem(message: "Invalid email or User ID"))
        }
        let account = accounts.first { $0.clientEmail == issuer }
        guard account != nil || accounts.isEmpty else { return .failure(Problem(message: "Invalid email or User ID")) }
        if let account, !account.key.isValidSignature(jwt.signature, for: jwt.signingInput) {
            return .failure(Problem(message: "Invalid JWT Signature."))
        }
        let audiencePath = account?.tokenPath ?? paths[0]
        guard let audience = jwt.claims["aud"]?.stringValue, ServiceAccount.path(of: audience) == audiencePath else {
            return .failure(
                Problem(
                    message: "Invalid JWT: Failed audience check. The right audience is "
                        + (account?.tokenURI ?? audiencePath)))
        }
        let scopes = jwt.claims["scope"]?.stringValue?.split(separator: " ") ?? []
        guard !scopes.isEmpty else {
            return .failure(Problem(code: "invalid_scope", message: "Empty or missing scope not allowed."))
        }
        guard let issuedAt = jwt.claims["iat"]?.numberValue, let expiresAt = jwt.claims["exp"]?.numberValue else {
            return .failure(Problem(message: "Invalid JWT: iat and exp must be numbers"))
        }
        guard issuedAt <= now + Self.allowedClockSkew, expiresAt > now,
            expiresAt <= issuedAt + Double(Self.lifetime), expiresAt > issuedAt
        else {
            return .failure(
                Problem(
                    message: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "
                        + "reasonable timeframe. Check your iat and exp values in the JWT claim."))
        }
        let mayMessage = scopes.contains { $0 == Self.messagingScope || $0 == Self.cloudPlatformScope }
        return .success(Granted(mayMessage: mayMessage, project: account?.projectID))
    }

    static func error(_ status: Int, _ code: String, _ description: String) -> HTTP2Response {
        var body: [UInt8] = []
        JSONWriter.write(.object([("error", .string(code)), ("error_description", .string(description))]), into: &body)
        return HTTP2Response(status: status, headers: [HTTP2Header("content-type", "application/json")], body: body)
    }
}
