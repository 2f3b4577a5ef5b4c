import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Intake
import Testing

/// The console's session guards against real Postgres and intakes started for each case: a session ends with the
/// admin token that opened it and when idle; failed sign-ins are limited per client address across intakes; the
/// cookie is `__Host-` when Secure; X-Forwarded-For counts only from a trusted proxy.
@Suite("Operator console guards", .serialized, .requiresDatabase)
struct ConsoleGuardTests {
    static let rotatedAdmin = "rotated-admin-token-0123456789"

    /// An intake with the console on; `trusted`: the test client (127.0.0.1) is a trusted proxy.
    static func intake(trusted: Bool = false, _ configure: (inout IntakeConfiguration) -> Void = { _ in }) throws
        -> IntakeHarness
    {
        try IntakeHarness {
            $0.consoleEnabled = true
            if trusted { $0.trustedProxies = [IPNetwork("127.0.0.0/8")!] }
            configure(&$0)
        }
    }

    static func signIn(_ intake: IntakeHarness, token: String = IntakeHarness.adminToken, forwardedFor: String? = nil)
        throws -> TestHTTPClient.Response
    {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let forwardedFor { headers.append(("X-Forwarded-For", forwardedFor)) }
        return try TestHTTPClient.send(
            port: intake.port, method: "POST", path: "/console/login", headers: headers,
            body: Array("token=\(token)".utf8))
    }

    /// The `name=value` of a sign-in's session cookie.
    static func cookie(_ response: TestHTTPClient.Response) throws -> String {
        #expect(response.status == 303, "\(response.status) \(response.text)")
        return String(try #require(response.headers["set-cookie"]).split(separator: ";")[0])
    }

    static func overview(_ intake: IntakeHarness, cookie: String) throws -> Int {
        try TestHTTPClient.send(
            port: intake.port, method: "GET", path: "/api/admin/console/overview",
            headers: [("Cookie", cookie)], body: []
        ).status
    }

    static func tokenHash(_ cookie: String) -> String {
        Digest.sha256Hex(String(cookie.split(separator: "=", maxSplits: 1)[1]))
    }

    /// A documentation address no other test signs in from.
    static func uniqueAddress() -> String { "198.51.100.\(Int.random(in: 1...254))" }

    @Test("a session ends when the intakes restart with the admin token rotated and the old one dropped")
    func rotatedTokenEndsSessions() throws {
        let first = try Self.intake()
        let cookie = try Self.cookie(Self.signIn(first))
        #expect(try Self.overview(first, cookie: cookie) == 200)
        let stored = try DB.rows(
            "SELECT admin_token_mac FROM console_sessions WHERE token_hash = $1",
            [Self.tokenHash(cookie)]
        ).first?.string(0)
        #expect(stored?.count == 64 && stored != Digest.sha256Hex(IntakeHarness.adminToken))
        first.stop()

        // Rotated, the old token still accepted as the previous one: the session lives on.
        let rolling = try Self.intake {
            $0.adminToken = Self.rotatedAdmin
            $0.adminTokenPrevious = IntakeHarness.adminToken
        }
        #expect(try Self.overview(rolling, cookie: cookie) == 200)
        rolling.stop()

        // The old token dropped: the session is signed out, as an expired one is.
        let rotated = try Self.intake { $0.adminToken = Self.rotatedAdmin }
        defer { rotated.stop() }
        let refused = try TestHTTPClient.send(
            port: rotated.port, method: "GET", path: "/api/admin/console/session",
            headers: [("Cookie", cookie)], body: [])
        #expect(refused.status == 401 && refused.errorCode == "unauthorized")
        // A session opened with the new token works there.
        let fresh = try Self.cookie(Self.signIn(rotated, token: Self.rotatedAdmin))
        #expect(try Self.overview(rotated, cookie: fresh) == 200)
    }

    @Test("a session unused for HERALD_CONSOLE_IDLE_MINUTES is refused; a use refreshes it at most once a minute")
    func idleTimeout() throws {
        let intake = try Self.intake { $0.consoleIdleMinutes = 5 }
        defer { intake.stop() }
        let cookie = try Self.cookie(Self.signIn(intake))
        let hash = Self.tokenHash(cookie)
        let idle = "SELECT extract(epoch FROM now() - last_used_at)::int FROM console_sessions WHERE token_hash = $1"
        let setIdle = """
            UPDATE console_sessions SET last_used_at = now() - make_interval(secs => $2) WHERE token_hash = $1
            """

        // Used 30 s ago: a use does not write again.
        try DB.execute(setIdle, [hash, 30])
        #expect(try Self.overview(intake, cookie: cookie) == 200)
        #expect(try DB.count(idle, [hash]) >= 30)
        // Unused for 4 minutes: still live, and this use refreshes it.
        try DB.execute(setIdle, [hash, 240])
        #expect(try Self.overview(intake, cookie: cookie) == 200)
        #expect(try DB.count(idle, [hash]) < 10)
        // The page's own 5-second refresh is no use: an open tab left alone still idles out.
        try DB.execute(setIdle, [hash, 240])
        let polled = try TestHTTPClient.send(
            port: intake.port, method: "GET", path: "/api/admin/console/overview",
            headers: [("Cookie", cookie), ("X-Herald-Console-Poll", "1")], body: [])
        #expect(polled.status == 200)
        #expect(try DB.count(idle, [hash]) >= 240)
        // Unused for 5 minutes: signed out.
        try DB.execute(setIdle, [hash, 301])
        #expect(try Self.overview(intake, cookie: cookie) == 401)
    }

    @Test("the 6th failed sign-in from one address in a minute is 429 with Retry-After, and so is the right token")
    func signInsAreLimitedPerAddress() throws {
        let intake = try Self.intake(trusted: true)
        defer { intake.stop() }
        // A second intake on the same database: the count is Postgres', not a process's.
        let other = try Self.intake(trusted: true)
        defer { other.stop() }
        let address = Self.uniqueAddress()
        try DB.execute("DELETE FROM console_sign_in_failures WHERE client = $1", [address])
        for attempt in 0..<5 {
            let refused = try Self.signIn(
                attempt % 2 == 0 ? intake : other, token: "wrong-\(attempt)",
                forwardedFor: address)
            #expect(refused.status == 401 && refused.headers["set-cookie"] == nil)
        }
        let sixth = try Self.signIn(intake, token: "wrong-6", forwardedFor: address)
        #expect(sixth.status == 429 && sixth.errorCode == "too_many_sign_ins", "\(sixth.text)")
        let retryAfter = try #require(sixth.headers["retry-after"].flatMap(Int.init))
        #expect((1...60).contains(retryAfter))
        let right = try Self.signIn(other, forwardedFor: address)
        #expect(right.status == 429 && right.headers["set-cookie"] == nil)
        #expect(try DB.count("SELECT failures FROM console_sign_in_failures WHERE client = $1", [address]) == 5)
        // Another address signs in meanwhile, and a success counts nothing.
        let elsewhere = "192.0.2.\(Int.random(in: 1...254))"
        _ = try Self.cookie(Self.signIn(intake, forwardedFor: elsewhere))
        #expect(
            try DB.count(
                "SELECT coalesce(sum(failures), 0)::int FROM console_sign_in_failures WHERE client = $1",
                [elsewhere]) == 0)
        // Once the window has passed, the right token signs in.
        try DB.execute(
            """
            UPDATE console_sign_in_failures SET window_start = now() - interval '61 seconds' WHERE client = $1
            """, [address])
        _ = try Self.cookie(Self.signIn(intake, forwardedFor: address))
    }

    @Test("the cookie is __Host-herald_console when Secure (Path=/, no Domain), herald_console over plain http")
    func hostPrefixedCookieWhenSecure() throws {
        let secure = try Self.intake()
        defer { secure.stop() }
        let signedIn = try Self.signIn(secure)
        let setCookie = try #require(signedIn.headers["set-cookie"])
        #expect(setCookie.hasPrefix("__Host-herald_console="), "\(setCookie)")
        #expect(setCookie.contains("; Secure") && setCookie.contains("; Path=/;") && !setCookie.contains("Domain"))
        let cookie = try Self.cookie(signedIn)
        #expect(try Self.overview(secure, cookie: cookie) == 200)
        // The same token under the other name is not the cookie in use.
        #expect(try Self.overview(secure, cookie: String(cookie.dropFirst("__Host-".count))) == 401)

        let plain = try Self.intake { $0.rules.publicURL = "http://herald.test" }
        defer { plain.stop() }
        let plainCookie = try #require(try Self.signIn(plain).headers["set-cookie"])
        #expect(plainCookie.hasPrefix("herald_console=") && !plainCookie.contains("Secure"), "\(plainCookie)")
    }

    /// The client the audit trail recorded for the sign-in that set `cookie`.
    static func auditedClient(_ cookie: String) throws -> String? {
        try DB.rows(
            """
            SELECT client FROM admin_audit WHERE action = 'console.signed_in' AND detail->>'session' = $1
            """, [String(Self.tokenHash(cookie).prefix(12))]
        ).first?.optionalString(0)
    }

    @Test("X-Forwarded-For is ignored from an untrusted peer and read from a trusted proxy, right to left")
    func forwardedForOnlyFromTrustedProxies() throws {
        let untrusted = try Self.intake()
        defer { untrusted.stop() }
        let ignored = try Self.cookie(Self.signIn(untrusted, forwardedFor: "203.0.113.9"))
        #expect(try Self.auditedClient(ignored) == "127.0.0.1")

        let trusted = try Self.intake(trusted: true)
        defer { trusted.stop() }
        // The client's own entries are left of the one the proxy wrote: only the right-most untrusted one counts.
        let honoured = try Self.cookie(Self.signIn(trusted, forwardedFor: "192.0.2.1, 203.0.113.9"))
        #expect(try Self.auditedClient(honoured) == "203.0.113.9")
        // Trusted hops are skipped; an entry that is no address ends the walk at the hop right of it.
        let hops = try Self.cookie(Self.signIn(trusted, forwardedFor: "203.0.113.10, 127.0.0.2"))
        #expect(try Self.auditedClient(hops) == "203.0.113.10")
        let garbage = try Self.cookie(Self.signIn(trusted, forwardedFor: "evil, 127.0.0.3"))
        #expect(try Self.auditedClient(garbage) == "127.0.0.3")
    }
}
