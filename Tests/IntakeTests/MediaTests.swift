import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import Postgres
import ServiceSupport
import Store
import Testing

/// A push's media through the intake: uploads and fetched URLs re-encoded without metadata, served without
/// credentials at signed paths, refused with nothing written when they are not images, too large or unsigned, 404
/// once expired (and deleted by the janitor), and `mediaId` in a push checked against its partner.
@Suite("Push media", .requiresDatabase)
struct MediaTests {
    let intake = IntakeHarness.shared

    static func mediaCount(_ partner: TestPartner) throws -> Int {
        try DB.count("SELECT count(*) FROM media WHERE partner_id = $1::uuid", [partner.id])
    }

    /// The path of a served URL, for a request to the test intake.
    static func path(_ url: String) throws -> String {
        let prefix = IntakeHarness.publicURL
        try #require(url.hasPrefix(prefix), "\(url)")
        return String(url.dropFirst(prefix.count))
    }

    @Test("a PNG with tEXt, iTXt and eXIf chunks is stored and served re-encoded, without metadata or credentials")
    func pngServedClean() throws {
        let partner = try intake.makePartner()
        let created = try upload(partner, MediaSamples.pngWithText, type: "image/png")
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["mediaId"]?.stringValue)
        let url = try #require(created.json["url"]?.stringValue)
        #expect(created.json["contentType"] == .string("image/png"))
        #expect(created.json["width"] == .number(40) && created.json["height"] == .number(20))
        let expiresAt = try #require(created.json["expiresAt"]?.stringValue.flatMap(ISO8601.parse))
        let lifetime = expiresAt.timeIntervalSinceNow
        #expect(lifetime > 167 * 3_600 && lifetime <= 168 * 3_600 + 5, "HERALD_MEDIA_TTL_HOURS' default, a week")
        #expect(url.hasPrefix("\(IntakeHarness.publicURL)/media/\(id)/") && url.hasSuffix(".png"))

        let served = try get(try Self.path(url))
        #expect(served.status == 200)
        #expect(served.headers["content-type"] == "image/png")
        #expect(served.headers["x-content-type-options"] == "nosniff")
        let cacheControl = try #require(served.headers["cache-control"])
        #expect(cacheControl.hasPrefix("public, max-age=86400"), "\(cacheControl)")
        #expect(!MediaSamples.contains(served.body, MediaSamples.marker), "no metadata survives")
        #expect(!MediaSamples.contains(served.body, Array("tEXt".utf8)))
        #expect(IconSamples.pngHeader(served.body).map { [$0.width, $0.height] } == [40, 20])
        let etag = try #require(served.headers["etag"])
        #expect(etag == "\"\(IconSamples.sha256Hex(served.body))\"")
        let stored = try #require(
            try DB.rows("SELECT sha256, encode(sha256(bytes), 'hex') FROM media WHERE id = $1::uuid", [id]).first)
        #expect(try stored.string(0) == IconSamples.sha256Hex(served.body), "what is stored is what is served")
        #expect(try stored.string(1) == IconSamples.sha256Hex(served.body))
        let cached = try get(try Self.path(url), headers: [("If-None-Match", etag)])
        #expect(cached.status == 304 && cached.body.isEmpty)
    }

    @Test("a JPEG loses its EXIF (GPS included) and comment; a GIF is served as the PNG of its first frame")
    func jpegAndGIF() throws {
        let partner = try intake.makePartner()
        // The declared type only chooses the path: the bytes decide what the image is.
        let jpeg = try upload(partner, MediaSamples.jpegWithGPS, type: "image/png")
        #expect(jpeg.status == 201, "\(jpeg.text)")
        #expect(jpeg.json["contentType"] == .string("image/jpeg"))
        let jpegURL = try #require(jpeg.json["url"]?.stringValue)
        #expect(jpegURL.hasSuffix(".jpg"))
        let photo = try get(try Self.path(jpegURL))
        #expect(photo.status == 200 && photo.headers["content-type"] == "image/jpeg")
        #expect(photo.body.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(!MediaSamples.contains(photo.body, MediaSamples.marker))
        #expect(!MediaSamples.contains(photo.body, Array("Exif".utf8)))

        let gif = try upload(partner, MediaSamples.animatedGIF, type: "image/gif")
        #expect(gif.status == 201, "\(gif.text)")
        #expect(gif.json["contentType"] == .string("image/png"))
        let frame = try get(try Self.path(try #require(gif.json["url"]?.stringValue)))
        #expect(frame.headers["content-type"] == "image/png")
        #expect(IconSamples.pngHeader(frame.body).map { [$0.width, $0.height] } == [16, 12])
        #expect(!MediaSamples.contains(frame.body, MediaSamples.marker))
    }

    @Test("a non-image, a cut image, an empty body, a wrong type and an oversize body are refused; nothing is stored")
    func uploadRefusals() throws {
        let partner = try intake.makePartner()
        for (name, body, type, status, code) in [
            ("text", Array("just text".utf8), "image/png", 422, "invalid_media"),
            ("cut PNG", Array(MediaSamples.pngWithText.dropLast(30)), "image/png", 422, "invalid_media"),
            ("cut GIF", Array(MediaSamples.animatedGIF.dropLast(2)), "image/gif", 422, "invalid_media"),
            ("empty", [], "image/jpeg", 422, "invalid_media"),
            (
                "svg", Array(#"<svg xmlns="http://www.w3.org/2000/svg"/>"#.utf8), "image/svg+xml", 415,
                "unsupported_media_type"
            ),
            (
                "oversize", [UInt8](repeating: 0x89, count: PushMedia.maxSourceBytes + 1), "image/png", 413,
                "body_too_large"
            ),
        ] as [(String, [UInt8], String, Int, String)] {
            let response = try upload(partner, body, type: type)
            #expect(response.status == status, "\(name): \(response.text)")
            #expect(response.errorCode == code, "\(name)")
        }
        // The larger body limit is the route's credential's alone: without a key the body stays at 64 KiB.
        let anonymous = try intake.raw(
            "POST", "/api/partners/media", token: nil, type: "image/png", body: [UInt8](repeating: 1, count: 70_000))
        #expect(anonymous.status == 413)
        let unauthorized = try intake.raw(
            "POST", "/api/partners/media", token: nil, type: "image/png", body: MediaSamples.pngWithText)
        #expect(unauthorized.status == 401)
        #expect(try Self.mediaCount(partner) == 0)
    }

    @Test("a path whose signature Herald did not make is 404, whatever the id; so is another extension")
    func forgedPaths() throws {
        let partner = try intake.makePartner()
        let created = try upload(partner, MediaSamples.pngWithText, type: "image/png")
        let url = try Self.path(try #require(created.json["url"]?.stringValue))
        let id = try #require(created.json["mediaId"]?.stringValue)
        let signature = String(url.split(separator: "/").last!.dropLast(4))
        var forged = Array(signature)
        forged[0] = forged[0] == "A" ? "B" : "A"
        for path in [
            "/media/\(id)/\(String(forged)).png", "/media/\(id)/\(signature).jpg", "/media/\(id)/\(signature)",
            "/media/\(UUIDv7.make(at: Date()).uuidString.lowercased())/\(signature).png",
        ] {
            let response = try get(path)
            #expect(response.status == 404, "\(path)")
            #expect(response.errorCode == "not_found")
        }
        #expect(try get(url).status == 200)
    }

    @Test("a revoked partner's media is 404 at once")
    func revokedPartner() throws {
        let partner = try intake.makePartner()
        let created = try upload(partner, MediaSamples.pngWithText, type: "image/png")
        let url = try Self.path(try #require(created.json["url"]?.stringValue))
        #expect(try get(url).status == 200)
        let revoked = try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)")
        #expect(revoked.status == 200 || revoked.status == 204, "\(revoked.text)")
        #expect(try get(url).status == 404)
    }

    @Test("media is 404 once expired, and the janitor deletes it")
    func expiry() throws {
        let partner = try intake.makePartner()
        let created = try upload(partner, MediaSamples.pngWithText, type: "image/png")
        let url = try Self.path(try #require(created.json["url"]?.stringValue))
        let id = try #require(created.json["mediaId"]?.stringValue)
        try DB.execute("UPDATE media SET expires_at = now() - interval '1 second' WHERE id = $1::uuid", [id])
        #expect(try get(url).status == 404)
        let push = try intake.push(
            partner.key, pushBody(partner, emails: ["a@example.com"], extra: #","mediaId":"\#(id)""#))
        #expect(push.status == 404 && push.errorCode == "media_not_found" && push.errorField == "mediaId")
        try MaintenanceStore(pool: migratedDatabase).cleanExpired()
        #expect(try Self.mediaCount(partner) == 0)
    }

    @Test("a push's mediaId must be the partner's own live media: another's or an unknown one is 404, nothing written")
    func pushMediaOwnership() throws {
        let (owner, other) = (try intake.makePartner(), try intake.makePartner())
        let created = try upload(owner, MediaSamples.pngWithText, type: "image/png")
        let id = try #require(created.json["mediaId"]?.stringValue)
        for (name, mediaID) in [("another partner's", id), ("unknown", UUIDv7.make(at: Date()).uuidString)] {
            let response = try intake.push(
                other.key, pushBody(other, emails: ["a@example.com"], extra: #","mediaId":"\#(mediaID)""#))
            #expect(response.status == 404, "\(name): \(response.text)")
            #expect(response.errorCode == "media_not_found" && response.errorField == "mediaId", "\(name)")
        }
        let malformed = try intake.push(
            other.key, pushBody(other, emails: ["a@example.com"], extra: #","mediaId":"x""#))
        #expect(malformed.status == 400 && malformed.errorField == "mediaId")
        let reserved = try intake.push(
            other.key, #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"attachmentUrl":"x"}}"#)
        #expect(reserved.status == 400, "attachmentUrl is a reserved data key: \(reserved.text)")
        #expect(try DB.writes(partnerID: other.id) == 0)
        // The owner's push is accepted and keeps the media at least as long as the push may be delivered.
        let accepted = try intake.push(
            owner.key, pushBody(owner, emails: ["a@example.com"], extra: #","mediaId":"\#(id)","ttlSeconds":2419200"#))
        #expect(accepted.status == 202, "\(accepted.text)")
        let kept = try DB.count(
            "SELECT count(*) FROM media WHERE id = $1::uuid AND expires_at > now() + interval '27 days'", [id])
        #expect(kept == 1)
    }

    @Test("a URL is fetched over HTTPS through the address policy and re-encoded; refusals store nothing")
    func urlFetched() throws {
        let origin = try IconOrigin(files: [
            "/photo.jpg": MediaSamples.jpegWithGPS, "/broken.png": Array("nope".utf8),
            "/big.png": [UInt8](repeating: 1, count: PushMedia.maxSourceBytes + 1),
        ])
        defer { origin.stop() }
        let partner = try intake.makePartner()
        // The shared intake refuses loopback, as production refuses every private address.
        let refused = try fetch(intake, partner, "https://127.0.0.1:\(origin.port)/photo.jpg")
        #expect(refused.status == 422 && refused.errorCode == "media_fetch_failed" && refused.errorField == "url")
        let plain = try fetch(intake, partner, "http://example.com/photo.jpg")
        #expect(plain.status == 400 && plain.errorField == "url", "\(plain.text)")
        let unknown = try intake.request(
            "POST", "/api/partners/media", token: partner.key, json: #"{"url":"https://x.test/a.png","size":1}"#)
        #expect(unknown.status == 400 && unknown.errorCode == "unknown_field")

        let allowing = try IntakeHarness(configure: { configuration in
            configuration.fetch.allowPrivateAddresses = true
            configuration.fetch.extraCAFile = TestCredentials.shared.caFile
        })
        defer { allowing.stop() }
        let fetched = try fetch(allowing, partner, "https://127.0.0.1:\(origin.port)/photo.jpg")
        #expect(fetched.status == 201, "\(fetched.text)")
        #expect(fetched.json["contentType"] == .string("image/jpeg"))
        let served = try TestHTTPClient.send(
            port: allowing.port, method: "GET", path: try Self.path(try #require(fetched.json["url"]?.stringValue)))
        #expect(served.status == 200 && !MediaSamples.contains(served.body, MediaSamples.marker))
        for (path, status, code) in [
            ("/broken.png", 422, "invalid_media"), ("/big.png", 413, "media_too_large"),
            ("/missing.png", 422, "media_fetch_failed"),
        ] {
            let response = try fetch(allowing, partner, "https://127.0.0.1:\(origin.port)\(path)")
            #expect(response.status == status && response.errorCode == code, "\(path): \(response.text)")
        }
        #expect(try Self.mediaCount(partner) == 1)
    }

    @Test("a partner holds at most HERALD_MEDIA_MAX_PER_PARTNER live media; an expired one frees its place")
    func perPartnerCap() throws {
        let capped = try IntakeHarness(configure: { $0.mediaMaxPerPartner = 2 })
        defer { capped.stop() }
        let partner = try intake.makePartner()
        func post() throws -> TestHTTPClient.Response {
            try capped.raw(
                "POST", "/api/partners/media", token: partner.key, type: "image/png", body: MediaSamples.pngWithText)
        }
        #expect(try post().status == 201)
        #expect(try post().status == 201)
        let third = try post()
        #expect(third.status == 429 && third.errorCode == "media_limit_reached", "\(third.text)")
        try DB.execute(
            "UPDATE media SET expires_at = now() - interval '1 second' WHERE partner_id = $1::uuid", [partner.id])
        #expect(try post().status == 201)
    }

    @Test("HERALD_MEDIA_TTL_HOURS and HERALD_MEDIA_MAX_PER_PARTNER are read and validated")
    func settings() throws {
        let base = IntakeConfigurationTests.base
        let defaults = try IntakeConfiguration.fromEnvironment(base)
        #expect(defaults.mediaLifetimeHours == 168 && defaults.mediaMaxPerPartner == 1_000)
        var custom = base
        custom["HERALD_MEDIA_TTL_HOURS"] = "24"
        custom["HERALD_MEDIA_MAX_PER_PARTNER"] = "10"
        let set = try IntakeConfiguration.fromEnvironment(custom)
        #expect(set.mediaLifetimeHours == 24 && set.mediaMaxPerPartner == 10)
        for (name, bad) in [
            ("HERALD_MEDIA_TTL_HOURS", "0"), ("HERALD_MEDIA_TTL_HOURS", "721"),
            ("HERALD_MEDIA_MAX_PER_PARTNER", "0"),
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
        try intake.raw("POST", "/api/partners/media", token: partner.key, type: type, body: bytes)
    }

    private func fetch(_ intake: IntakeHarness, _ partner: TestPartner, _ url: String) throws
        -> TestHTTPClient.Response
    {
        try intake.request("POST", "/api/partners/media", token: partner.key, json: #"{"url":"\#(url)"}"#)
    }

    private func get(_ path: String, headers: [(String, String)] = []) throws -> TestHTTPClient.Response {
        try TestHTTPClient.send(port: intake.port, method: "GET", path: path, headers: headers)
    }
}
