import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import ServiceSupport
import Testing

/// Partner icons end to end through the intake: upload, rasterised PNGs served with caching
/// headers, the URL in payloads, bad images refused with nothing changed, iconUrl fetched through the
/// address policy.
@Suite("Partner icons", .requiresDatabase)
struct IconTests {
    let intake = IntakeHarness.shared

    @Test("an SVG upload is served as square PNGs of 64, 128 and 256 px, with ETag, Cache-Control and 304")
    func svgUpload() throws {
        let partner = try intake.makePartner()
        let response = try upload(partner, IconSamples.wideSVG, type: "image/svg+xml")
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["icon"]?["path"] == .string("/icons/\(partner.miniAppID)/256.png"))
        #expect(response.json["icon"]?["sizes"] == .array([.number(64), .number(128), .number(256)]))
        #expect(response.json["iconUrl"] == .null)
        for size in [64, 128, 256] {
            let icon = try get("/icons/\(partner.miniAppID)/\(size).png")
            #expect(icon.status == 200)
            #expect(icon.headers["content-type"] == "image/png")
            #expect(icon.headers["cache-control"] == "public, max-age=86400")
            let header = try #require(IconSamples.pngHeader(icon.body))
            #expect(header.width == size && header.height == size)
            #expect(header.colorType == 6, "RGBA: the padding of a non-square logo is transparent")
            let etag = try #require(icon.headers["etag"])
            #expect(etag == "\"\(IconSamples.sha256Hex(icon.body))\"")
            let cached = try get("/icons/\(partner.miniAppID)/\(size).png", headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)
            #expect(cached.headers["etag"] == etag)
            let weak = try get(
                "/icons/\(partner.miniAppID)/\(size).png", headers: [("If-None-Match", "W/\(etag), \"x\"")])
            #expect(weak.status == 304)
            let stale = try get("/icons/\(partner.miniAppID)/\(size).png", headers: [("If-None-Match", "\"other\"")])
            #expect(stale.status == 200)
        }
    }

    @Test("PNG and JPEG uploads are rescaled; a new upload replaces the icon and its ETag")
    func rasterUploads() throws {
        let partner = try intake.makePartner()
        #expect(try upload(partner, IconSamples.png40x20, type: "image/png").status == 200)
        let first = try get("/icons/\(partner.miniAppID)/128.png")
        #expect(IconSamples.pngHeader(first.body).map { [$0.width, $0.height] } == [128, 128])
        let jpeg = try upload(partner, IconSamples.jpeg32x32, type: "image/jpeg")
        #expect(jpeg.status == 200, "\(jpeg.text)")
        let second = try get("/icons/\(partner.miniAppID)/128.png")
        #expect(IconSamples.pngHeader(second.body).map { [$0.width, $0.height] } == [128, 128])
        #expect(second.headers["etag"] != first.headers["etag"])
    }

    @Test(
        "a body that is not a decodable image is 422 invalid_icon and changes nothing",
        arguments: [
            ("garbage", "image/png"), ("truncated-png", "image/png"), ("empty-svg", "image/svg+xml"),
            ("text", "image/svg+xml"), ("jpeg-header-only", "image/jpeg"),
        ])
    func invalidImage(_ sample: String, type: String) throws {
        let partner = try intake.makePartner()
        #expect(try upload(partner, IconSamples.wideSVG, type: "image/svg+xml").status == 200)
        let before = try get("/icons/\(partner.miniAppID)/256.png")
        let bytes: [UInt8] =
            switch sample {
            case "garbage": Array("definitely not an image".utf8) + [0, 1, 2, 255]
            case "truncated-png": Array(IconSamples.png40x20.prefix(40))
            case "empty-svg": Array("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>".utf8)
            case "text": Array("hello".utf8)
            default: [0xFF, 0xD8, 0xFF, 0x00, 0x01]
            }
        let response = try upload(partner, bytes, type: type)
        #expect(response.status == 422, "\(response.text)")
        #expect(response.errorCode == "invalid_icon")
        let after = try get("/icons/\(partner.miniAppID)/256.png")
        #expect(after.body == before.body)
        #expect(after.headers["etag"] == before.headers["etag"])
    }

    @Test("a 20,000 x 20,000 px SVG is rendered straight at each size")
    func hugeSVG() throws {
        let partner = try intake.makePartner()
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="20000" height="20000" viewBox="0 0 20000 20000">\
            <circle cx="10000" cy="10000" r="9000" fill="#36c"/></svg>
            """
        let response = try upload(partner, Array(svg.utf8), type: "image/svg+xml")
        #expect(response.status == 200, "\(response.text)")
        let icon = try get("/icons/\(partner.miniAppID)/256.png")
        #expect(IconSamples.pngHeader(icon.body).map { [$0.width, $0.height] } == [256, 256])
    }

    @Test("uploads: the media type, the 1 MiB limit, the admin token, unknown and revoked partners")
    func uploadRefusals() throws {
        let partner = try intake.makePartner()
        let path = "/api/admin/mini-app-partners/\(partner.id)/icon"
        let wrongType = try upload(partner, IconSamples.png40x20, type: "application/json")
        #expect(wrongType.status == 415)
        let tooLarge = try intake.raw(
            "PUT", path, token: IntakeHarness.adminToken, type: "image/png",
            body: [UInt8](repeating: 0x41, count: 1_048_577))
        #expect(tooLarge.status == 413)
        let justUnder = try intake.raw(
            "PUT", path, token: IntakeHarness.adminToken, type: "image/png",
            body: [UInt8](repeating: 0x41, count: 1_048_576))
        #expect(justUnder.status == 422, "a body at the limit is read, and refused as an image")
        let noToken = try intake.raw("PUT", path, token: nil, type: "image/png", body: IconSamples.png40x20)
        #expect(noToken.status == 401)
        // Without the admin token a body over 64 KiB is refused before it is read.
        let bigWithoutToken = try intake.raw(
            "PUT", path, token: nil, type: "image/png",
            body: [UInt8](repeating: 0x41, count: 70_000))
        #expect(bigWithoutToken.status == 413)
        let bigWithHostToken = try intake.raw(
            "PUT", path, token: IntakeHarness.hostToken, type: "image/png",
            body: [UInt8](repeating: 0x41, count: 70_000))
        #expect(bigWithHostToken.status == 413)
        let partnerToken = try intake.raw(
            "PUT", path, token: partner.key, type: "image/png", body: IconSamples.png40x20)
        #expect(partnerToken.status == 401)
        let unknown = try intake.raw(
            "PUT", "/api/admin/mini-app-partners/\(UUID().uuidString)/icon",
            token: IntakeHarness.adminToken, type: "image/png", body: IconSamples.png40x20)
        #expect(unknown.status == 404)
        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)").status == 200)
        let revoked = try upload(partner, IconSamples.png40x20, type: "image/png")
        #expect(revoked.status == 409)
        #expect(try DB.count("SELECT count(*) FROM partner_icons WHERE partner_id = $1::uuid", [partner.id]) == 0)
        // The other admin routes keep the small body limit.
        let bigJSON = try intake.raw(
            "POST", "/api/admin/mini-app-partners", token: IntakeHarness.adminToken,
            type: "application/json", body: [UInt8](repeating: 0x20, count: 70_000))
        #expect(bigJSON.status == 413)
    }

    @Test("icons of unknown mini-apps, sizes and names are 404; a revoked partner's icon is no longer served")
    func serveRefusals() throws {
        let partner = try intake.makePartner()
        #expect(try get("/icons/\(partner.miniAppID)/256.png").status == 404, "no icon yet")
        #expect(try upload(partner, IconSamples.wideSVG, type: "image/svg+xml").status == 200)
        for name in ["100.png", "256.jpg", "256", "0256.png", "256.png.png"] {
            #expect(try get("/icons/\(partner.miniAppID)/\(name)").status == 404, "\(name)")
        }
        #expect(try get("/icons/no.such.app/256.png").status == 404)
        #expect(try get("/icons/\(partner.miniAppID)/256.png").status == 200)
        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)").status == 200)
        #expect(try get("/icons/\(partner.miniAppID)/256.png").status == 404)
    }

    @Test(
        "payloads carry HERALD_PUBLIC_URL + /icons/{miniAppId}/256.png once an icon exists, none before or after removal"
    )
    func payloadImageURL() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        func imageURL() throws -> JSONValue? {
            let response = try intake.push(
                partner.key,
                """
                {"recipients":{"emails":["\(user.email)"]},"title":"Hi","body":"There"}
                """)
            #expect(response.status == 202, "\(response.text)")
            let requestID = try #require(response.json["requestId"]?.stringValue)
            let payload = try DB.rows("SELECT payload FROM deliveries WHERE request_id = $1::uuid", [requestID])
            return try JSONParser.parse(try #require(payload.first).string(0))["imageUrl"]
        }
        #expect(try imageURL() == nil)
        #expect(try upload(partner, IconSamples.wideSVG, type: "image/svg+xml").status == 200)
        // The partner cache (2 s) keeps the old profile for a moment.
        try waitFor("the new profile (partner cache)") { try imageURL() != nil }
        let iconURL = "\(IntakeHarness.publicURL)/icons/\(partner.miniAppID)/256.png"
        #expect(try imageURL() == .string(iconURL))
        // The host app's Settings > Notifications > Mini-apps screen shows the same PNG.
        let senders = try intake.host("GET", "/api/internal/users/\(user.id)/mini-app-senders")
        #expect(senders.json["senders"]?.arrayValue?.first?["iconUrl"] == .string(iconURL))
        let removed = try intake.admin("PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"iconUrl":null}"#)
        #expect(removed.status == 200)
        #expect(removed.json["icon"] == .null)
        #expect(try get("/icons/\(partner.miniAppID)/256.png").status == 404)
        try waitFor("the profile without an icon") { try imageURL() == nil }
    }

    @Test(
        "iconUrl at loopback or the metadata address is refused without the allow flag, and nothing is written",
        arguments: [
            "https://127.0.0.1:9/icon.png", "https://169.254.169.254/latest/meta-data/icon.png",
            "https://10.1.2.3/icon.svg", "https://[::1]:9/icon.png",
        ])
    func ssrfRefused(_ url: String) throws {
        let miniAppID = TestEnvironment.unique("ssrf").replacingOccurrences(of: "-", with: ".")
        let created = try intake.admin(
            "POST", "/api/admin/mini-app-partners",
            #"{"miniAppId":"\#(miniAppID)","displayName":"Pull","iconUrl":"\#(url)"}"#)
        if url.contains("[") {
            // The admin API's iconUrl rule takes host names and IPv4 only.
            #expect(created.status == 400)
        } else {
            #expect(created.status == 422, "\(created.text)")
            #expect(created.errorCode == "icon_fetch_failed")
            #expect(created.json["error"]?["message"]?.stringValue?.contains("address_refused") == true)
        }
        #expect(try DB.count("SELECT count(*) FROM partners WHERE mini_app_id = $1", [miniAppID]) == 0)

        let partner = try intake.makePartner()
        #expect(try upload(partner, IconSamples.wideSVG, type: "image/svg+xml").status == 200)
        let patched = try intake.admin("PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"iconUrl":"\#(url)"}"#)
        #expect(patched.status == (url.contains("[") ? 400 : 422))
        let stored = try #require(
            try DB.rows("SELECT icon_url, icon_updated_at FROM partners WHERE id = $1::uuid", [partner.id]).first)
        #expect(stored.isNull(0) && !stored.isNull(1), "the uploaded icon stays")
    }

    @Test("iconUrl is fetched over HTTPS (the extra CA trusted) and rasterised when private addresses are allowed")
    func iconURLFetched() throws {
        let origin = try IconOrigin(files: [
            "/logo.svg": IconSamples.wideSVG, "/broken.png": Array("nope".utf8),
            "/big.png": [UInt8](repeating: 1, count: 1_048_577),
        ])
        defer { origin.stop() }
        let intake = try IntakeHarness(configure: { configuration in
            configuration.fetch.allowPrivateAddresses = true
            configuration.fetch.extraCAFile = TestCredentials.shared.caFile
        })
        defer { intake.stop() }
        let miniAppID = TestEnvironment.unique("url").replacingOccurrences(of: "-", with: ".")
        let url = "https://127.0.0.1:\(origin.port)/logo.svg"
        let created = try intake.admin(
            "POST", "/api/admin/mini-app-partners",
            #"{"miniAppId":"\#(miniAppID)","displayName":"Pull","iconUrl":"\#(url)"}"#)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json["iconUrl"] == .string(url))
        let icon = try TestHTTPClient.send(port: intake.port, method: "GET", path: "/icons/\(miniAppID)/64.png")
        #expect(icon.status == 200)
        #expect(IconSamples.pngHeader(icon.body).map { [$0.width, $0.height] } == [64, 64])
        let id = try #require(created.json["id"]?.stringValue)

        for (path, code) in [
            ("/broken.png", "invalid_icon"), ("/big.png", "icon_fetch_failed"),
            ("/missing.png", "icon_fetch_failed"),
        ] {
            let patched = try intake.admin(
                "PATCH", "/api/admin/mini-app-partners/\(id)",
                #"{"iconUrl":"https://127.0.0.1:\#(origin.port)\#(path)"}"#)
            #expect(patched.status == 422, "\(path): \(patched.text)")
            #expect(patched.errorCode == code, "\(path)")
            let stored = try #require(try DB.rows("SELECT icon_url FROM partners WHERE id = $1::uuid", [id]).first)
            #expect(try stored.string(0) == url, "a failed fetch changes nothing")
        }
    }

    @Test("HERALD_PUBLIC_URL, HERALD_WEBHOOK_ALLOW_PRIVATE and HERALD_CA_FILE are read and validated")
    func settings() throws {
        let base = IntakeConfigurationTests.base
        let defaults = try IntakeConfiguration.fromEnvironment(base)
        #expect(defaults.rules.publicURL == nil)
        #expect(defaults.fetch.allowPrivateAddresses == false && defaults.fetch.extraCAFile == nil)
        var custom = base
        custom["HERALD_PUBLIC_URL"] = "https://push.example.com/"
        custom["HERALD_WEBHOOK_ALLOW_PRIVATE"] = "1"
        custom["HERALD_CA_FILE"] = TestCredentials.shared.caFile
        let set = try IntakeConfiguration.fromEnvironment(custom)
        #expect(set.rules.publicURL == "https://push.example.com")
        #expect(set.fetch.allowPrivateAddresses && set.fetch.extraCAFile == TestCredentials.shared.caFile)
        for (name, bad) in [
            ("HERALD_PUBLIC_URL", "push.example.com"), ("HERALD_PUBLIC_URL", "https://x/?a=1"),
            ("HERALD_WEBHOOK_ALLOW_PRIVATE", "yes"), ("HERALD_CA_FILE", "/nonexistent/ca.pem"),
        ] {
            var wrong = base
            wrong[name] = bad
            #expect(throws: ConfigurationError.self, "\(name)=\(bad)") {
                try IntakeConfiguration.fromEnvironment(wrong)
            }
        }
    }

    // MARK: helpers

    private func upload(_ partner: TestPartner, _ bytes: [UInt8], type: String) throws -> TestHTTPClient.Response {
        try intake.raw(
            "PUT", "/api/admin/mini-app-partners/\(partner.id)/icon", token: IntakeHarness.adminToken,
            type: type, body: bytes)
    }

    private func get(_ path: String, headers: [(String, String)] = []) throws -> TestHTTPClient.Response {
        try TestHTTPClient.send(port: intake.port, method: "GET", path: path, headers: headers)
    }
}
