import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import ServiceSupport
import Store

/// The operator console (docs/console.md): its pages (embedded, no outside assets), the sign-in, and its
/// JSON API under `/api/admin/console/`, which the admin bearer token or a console session may call.
struct ConsoleHandler: Sendable {
    let gate: ConsoleGate
    let authenticator: Authenticator
    let console: ConsoleStore
    let stats: StatsStore
    let workers: WorkerHeartbeatStore
    let replays: ReplayStore
    let partners: PartnerStore
    let tokens: TokenReportStore
    let webhooks: WebhookStore
    let audits: AdminAuditStore
    let replayTTLSeconds: Int
    /// Who the client is: the audit trail's `client`, the sign-in limit's key.
    let proxies: TrustedProxies
    let logger: Logger
    /// Sign-ins refused over the limit come in floods: one log line a second.
    let throttledLog = LogThrottle()

    /// Every page and asset: no script but the console's own file, no framing, no outside origin.
    static let securityHeaders: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
        ),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    ]

    /// The pages need no credential; the JSON API takes the admin's. All are 404 while the console is off.
    static let routes: [IntakeRoute] = [
        .open("GET", "/console", .consolePage) { $0.console.index($1) },
        .open("GET", "/console/login", .consolePage) { $0.console.loginPage($1) },
        .open("POST", "/console/login", .consolePage) { try $0.console.login($1) },
        .open("GET", "/console/assets/{file}", .consolePage) { try $0.console.asset($1) },
        .admin("GET", "/api/admin/console/session", .consoleAPI) { $0.console.session($1, caller: $2) },
        .admin("POST", "/api/admin/console/sign-out", .consoleAPI) { try $0.console.signOut($1, caller: $2) },
        .admin("GET", "/api/admin/console/overview", .consoleAPI) { try $0.console.overview($1) },
        .admin("GET", "/api/admin/console/workers", .consoleAPI) { try $0.console.workerList($1) },
        .admin("GET", "/api/admin/console/failures", .consoleAPI) { try $0.console.failures($1) },
        .admin("POST", "/api/admin/console/failures/replay", .consoleAPI) {
            try $0.console.replay($1, by: $0.actor($2, $1))
        },
        .admin("GET", "/api/admin/console/requests", .consoleAPI) { try $0.console.requests($1) },
        .admin("GET", "/api/admin/console/requests/{requestId}", .consoleAPI) { try $0.console.requestDetail($1) },
        .admin("GET", "/api/admin/console/partners", .consoleAPI) { try $0.console.partnerList($1) },
        .admin("GET", "/api/admin/console/tokens", .consoleAPI) { try $0.console.tokenReport($1) },
        .admin("GET", "/api/admin/console/live-activities", .consoleAPI) { try $0.console.activities($1) },
        .admin("GET", "/api/admin/console/webhooks", .consoleAPI) { try $0.console.failedWebhooks($1) },
        .admin("POST", "/api/admin/console/webhooks/replay", .consoleAPI) {
            try $0.console.replayWebhooks($1, by: $0.actor($2, $1))
        },
    ]

    static func page(
        _ status: Int, _ type: String, _ body: String,
        extra: [(name: String, value: String)] = []
    ) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", type)] + securityHeaders + extra, body: Array(body.utf8))
    }

    // MARK: pages

    func index(_ request: RoutedRequest) -> HTTPResponse {
        Self.page(200, "text/html; charset=utf-8", ConsoleAssets.indexHTML)
    }

    func loginPage(_ request: RoutedRequest) -> HTTPResponse {
        Self.page(200, "text/html; charset=utf-8", ConsoleAssets.loginHTML(error: nil))
    }

    func asset(_ request: RoutedRequest) throws -> HTTPResponse {
        switch request.parameter("file") {
        case "console.js": return Self.page(200, "text/javascript; charset=utf-8", ConsoleAssets.script)
        case "console.css": return Self.page(200, "text/css; charset=utf-8", ConsoleAssets.styles)
        default: throw HeraldError.notFound
        }
    }

    /// The sign-in form: the admin token in, a session cookie out (303 to the console), or the form again (401).
    /// Each attempt counts as a failure of its client address until its token is found right; past
    /// `ConsoleGate.signInFailureLimit` failures in the window, every attempt is 429 until the window ends.
    func login(_ request: RoutedRequest) throws -> HTTPResponse {
        guard request.mediaType == "application/x-www-form-urlencoded" else {
            throw HeraldError(
                status: 415, code: "unsupported_media_type",
                message: "Content-Type must be application/x-www-form-urlencoded.")
        }
        let client = proxies.client(of: request.http)
        let address = client ?? "unknown"
        let attempt = try gate.sessions.attemptSignIn(
            client: address, limit: ConsoleGate.signInFailureLimit, windowSeconds: ConsoleGate.signInWindowSeconds)
        guard attempt.admitted else {
            if let skipped = throttledLog.admit("console sign-ins refused over the limit") {
                logger.warning(
                    "console sign-ins refused over the limit",
                    [
                        ("client", .string(address)), ("skipped", .number(Double(skipped))),
                    ])
            }
            throw ConsoleGate.tooManySignIns(retryAfter: attempt.retryAfter)
        }
        let form = FormBody.parse(request.http.body)
        guard let token = form["token"], !token.isEmpty,
            let previous = authenticator.admin(authorization: "Bearer " + token)
        else {
            logger.warning("console sign-in refused", [("client", .string(address))])
            return Self.page(
                401, "text/html; charset=utf-8",
                ConsoleAssets.loginHTML(error: "That token is not the admin token."))
        }
        let sessionToken = try ConsoleGate.newToken()
        let macs = authenticator.adminTokenMACs(sessionToken: sessionToken)
        let session = try gate.sessions.create(
            tokenHash: Digest.sha256Hex(sessionToken), adminTokenMAC: previous ? macs[1] : macs[0],
            seconds: gate.sessionSeconds, client: client,
            by: AdminCaller.bearer(previous: previous).actor(client: client))
        try gate.sessions.signInSucceeded(client: address)
        logger.info(
            "console sign-in",
            [("client", .string(address)), ("expires", .string(ISO8601.format(session.expiresAt)))])
        return Self.page(
            303, "text/plain; charset=utf-8", "",
            extra: [
                ("Location", "/console/"), ("Set-Cookie", gate.setCookie(sessionToken)),
            ])
    }

    // MARK: session

    func session(_ request: RoutedRequest, caller: AdminCaller) -> HTTPResponse {
        switch caller {
        case .bearer:
            return Self.json(.object([("kind", .string("bearer")), ("csrfToken", .null), ("expiresAt", .null)]))
        case .session(let token, let session):
            return Self.json(
                .object([
                    ("kind", .string("session")), ("csrfToken", .string(ConsoleGate.csrfToken(for: token))),
                    ("expiresAt", .string(ISO8601.format(session.expiresAt))),
                ]))
        }
    }

    /// Sign-out: the session ends at once, everywhere.
    func signOut(_ request: RoutedRequest, caller: AdminCaller) throws -> HTTPResponse {
        if case .session(let token, _) = caller {
            try gate.sessions.revoke(
                tokenHash: Digest.sha256Hex(token),
                by: caller.actor(client: proxies.client(of: request.http)))
            logger.info("console sign-out")
        }
        return HTTPResponse(status: 204, headers: [("Set-Cookie", gate.clearCookie())])
    }

    /// `Cache-Control: no-store` is added to every admin answer by `IntakeServer.handle`.
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        Reply.json(status, value)
    }

    /// A report over `window`: its start as `since`, and its rows under `name`.
    static func report(_ window: ReportWindow, _ name: String, _ rows: [JSONValue]) -> HTTPResponse {
        json(.object([("since", .string(ISO8601.format(window.since))), (name, .array(rows))]))
    }
}

/// `application/x-www-form-urlencoded`, as a browser's form sends it; the first value of a name wins.
enum FormBody {
    static func parse(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]) else { continue }
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if fields[name] == nil, let value { fields[name] = value }
        }
        return fields
    }

    /// `+` is a space, `%XX` a byte; nil when the escapes or the UTF-8 are malformed.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(0x20)
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = HexDigit.value(bytes[index + 1]), let low = HexDigit.value(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }

}
