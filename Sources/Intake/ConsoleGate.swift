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

/// The console's sessions as the intake sees them: the `herald_console` cookie (a random token; only its
/// SHA-256 is stored), the CSRF token derived from it, and the admin routes' check, which accepts the
/// bearer token or, when the console is on, a live session whose state-changing calls carry the CSRF token.
struct ConsoleGate: Sendable {
    static let cookieName = "herald_console"
    static let csrfHeader = "x-csrf-token"

    let sessions: ConsoleSessionStore
    let enabled: Bool
    let sessionSeconds: Int
    /// `Secure` on the cookie: when HERALD_PUBLIC_URL is https (a browser drops a Secure cookie over plain http).
    let secureCookie: Bool

    static let csrfRequired = HeraldError(
        status: 403, code: "csrf_token_invalid",
        message: "A console session's state-changing call needs its X-CSRF-Token header.")

    /// The admin bearer token, or a console session (with the CSRF token on anything but GET and HEAD).
    func requireAdmin(_ request: HTTPRequest, authenticator: Authenticator) throws -> AdminCaller {
        if let previous = authenticator.admin(authorization: request.header("authorization")) {
            return .bearer(previous: previous)
        }
        guard enabled, request.header("authorization") == nil, let token = Self.cookie(request) else {
            throw HeraldError.unauthorized
        }
        guard let session = try sessions.find(tokenHash: Digest.sha256Hex(token)) else { throw HeraldError.unauthorized }
        if request.method != "GET" && request.method != "HEAD" {
            guard let sent = request.header(Self.csrfHeader),
                  Digest.constantTimeEquals(Array(sent.utf8), Array(Self.csrfToken(for: token).utf8))
            else { throw Self.csrfRequired }
        }
        return .session(token: token, session)
    }

    /// A new session's cookie token (256 random bits).
    static func newToken() throws -> String { Base64URL.encode(try SecureRandom.bytes(32)) }

    /// The CSRF token of a session: derived from the cookie's token, so it needs no storage, and the
    /// stored hash (a different digest) does not give it away.
    static func csrfToken(for token: String) -> String { Digest.sha256Hex("herald-console-csrf:" + token) }

    /// The session cookie's value, if the request carries one of a plausible shape.
    static func cookie(_ request: HTTPRequest) -> String? {
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
        "\(Self.cookieName)=\(token); Path=/; Max-Age=\(sessionSeconds); HttpOnly; SameSite=Strict"
            + (secureCookie ? "; Secure" : "")
    }

    func clearCookie() -> String {
        "\(Self.cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secureCookie ? "; Secure" : "")
    }
}
