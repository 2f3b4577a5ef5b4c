import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Store

/// Who called an admin route: the admin bearer token (or the previous one), or a console session (its cookie).
enum AdminCaller {
    case bearer(previous: Bool)
    /// The cookie's token (to derive the CSRF token) and the session row.
    case session(token: String, ConsoleSession)

    /// The caller as the audit trail names it: the session by the first 12 hex digits of its hash, never its token.
    func actor(client: String?) -> AdminActor {
        switch self {
        case .bearer(let previous): AdminActor(previous ? .adminTokenPrevious : .adminToken, client: client)
        case .session(_, let session):
            AdminActor(.console, detail: String(session.tokenHash.prefix(12)), client: client)
        }
    }
}

/// The console's sessions as the intake sees them: the session cookie (a random token; only its SHA-256 is
/// stored), the CSRF token derived from it, and the admin routes' check, which accepts the bearer token or, when the
/// console is on, a live session whose state-changing calls carry the CSRF token. A session is live until its
/// expiry, its sign-out, `idleSeconds` without use, or the intake no longer accepting the admin token that opened it.
struct ConsoleGate: Sendable {
    static let csrfHeader = "x-csrf-token"
    /// Sent by the console's own 5-second refresh: a read the page makes by itself is no use of the session, so an
    /// open tab left alone still reaches the idle timeout (ConsoleAssets+Script.swift, `poll`).
    static let pollHeader = "x-herald-console-poll"
    /// Failed sign-ins one client address may make in `signInWindowSeconds`; the next attempt, right token or not,
    /// is 429 until the window (counted from the first failure) ends.
    static let signInFailureLimit = 5
    static let signInWindowSeconds = 60

    let sessions: ConsoleSessionStore
    let enabled: Bool
    let sessionSeconds: Int
    /// HERALD_CONSOLE_IDLE_MINUTES in seconds.
    let idleSeconds: Int
    /// `Secure` on the cookie: when HERALD_PUBLIC_URL is https (a browser drops a Secure cookie over plain http).
    let secureCookie: Bool

    /// With `Secure`, the `__Host-` prefix: browsers then accept the cookie only from a secure origin, for `Path=/`
    /// and without `Domain`, so no sibling subdomain or plain-http page can set or shadow it.
    var cookieName: String { secureCookie ? "__Host-herald_console" : "herald_console" }

    static let csrfRequired = HeraldError(
        status: 403, code: "csrf_token_invalid",
        message: "A console session's state-changing call needs its X-CSRF-Token header.")

    static func tooManySignIns(retryAfter: Int?) -> HeraldError {
        HeraldError(
            status: 429, code: "too_many_sign_ins",
            message: "Too many failed sign-ins from this address; try again after Retry-After seconds.",
            retryAfter: retryAfter ?? signInWindowSeconds)
    }

    /// The admin bearer token, or a console session (with the CSRF token on anything but GET and HEAD).
    func requireAdmin(_ request: HTTPRequest, authenticator: Authenticator) throws -> AdminCaller {
        if let previous = authenticator.admin(authorization: request.header("authorization")) {
            return .bearer(previous: previous)
        }
        guard enabled, request.header("authorization") == nil, let token = cookie(request) else {
            throw HeraldError.unauthorized
        }
        let tokenHash = Digest.sha256Hex(token)
        guard
            let session = try sessions.find(
                tokenHash: tokenHash, adminTokenMACs: authenticator.adminTokenMACs(sessionToken: token),
                idleSeconds: idleSeconds)
        else { throw HeraldError.unauthorized }
        if request.method != "GET" && request.method != "HEAD" {
            guard let sent = request.header(Self.csrfHeader),
                Digest.constantTimeEquals(Array(sent.utf8), Array(Self.csrfToken(for: token).utf8))
            else { throw Self.csrfRequired }
        }
        if request.header(Self.pollHeader) == nil,
            Date().timeIntervalSince(session.lastUsedAt) >= ConsoleSessionStore.touchInterval
        {
            try sessions.touch(tokenHash: tokenHash)
        }
        return .session(token: token, session)
    }

    /// A new session's cookie token (256 random bits).
    static func newToken() throws -> String { Base64URL.encode(try SecureRandom.bytes(32)) }

    /// The CSRF token of a session: derived from the cookie's token, so it needs no storage, and the
    /// stored hash (a different digest) does not give it away.
    static func csrfToken(for token: String) -> String { Digest.sha256Hex("herald-console-csrf:" + token) }

    /// The session cookie's value, if the request carries one of a plausible shape under the name in use.
    func cookie(_ request: HTTPRequest) -> String? {
        guard let header = request.header("cookie") else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingASCIIWhitespace() == cookieName else { continue }
            let value = pair[1].trimmingASCIIWhitespace()
            guard value.utf8.count == 43, value.utf8.allSatisfy({ Self.base64URL.contains($0) }) else { return nil }
            return value
        }
        return nil
    }

    private static let base64URL = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8))

    func setCookie(_ token: String) -> String {
        "\(cookieName)=\(token); Path=/; Max-Age=\(sessionSeconds); HttpOnly; SameSite=Strict"
            + (secureCookie ? "; Secure" : "")
    }

    func clearCookie() -> String {
        "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secureCookie ? "; Secure" : "")
    }
}
