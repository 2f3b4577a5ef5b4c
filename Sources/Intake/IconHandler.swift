import Foundation
import HTTPServer
import HeraldCore
import PartnerIcons
import ServiceSupport
import Store

/// Partner icons: the admin's upload, and the PNGs served without auth to the phones that
/// render a notification's avatar (and to any cache in front of the intake).
struct IconHandler: Sendable {
    let icons: PartnerIconStore
    let partners: PartnerStore
    let source: PartnerIconSource
    let logger: Logger

    /// The media types an upload may declare; the bytes decide what the image is (Sources/Icons).
    static let uploadTypes: Set<String> = ["image/png", "image/jpeg", "image/svg+xml"]
    /// A day: a changed icon has a new ETag, and payloads keep the same URL.
    static let cacheControl = "public, max-age=86400"

    /// The upload alone may send up to 1 MiB (`PartnerIcon.maxSourceBytes`); the PNGs need no credential.
    static let routes: [IntakeRoute] = [
        .admin("PUT", "/api/admin/mini-app-partners/{id}/icon", largerBodyLimit: PartnerIcon.maxSourceBytes) {
            try $0.icon.upload($1, by: $0.actor($2, $1))
        },
        .open("GET", "/icons/{miniAppId}/{file}") { try $0.icon.serve($1) },
    ]

    /// `GET /icons/{miniAppId}/{size}.png`: 200 with the PNG, or 304 when `If-None-Match` names it.
    func serve(_ request: RoutedRequest) throws -> HTTPResponse {
        guard let size = PartnerIcon.size(fileName: request.parameter("file")),
            let icon = try icons.find(miniAppID: request.parameter("miniAppId"), size: size)
        else { throw HeraldError.notFound }
        let etag = "\"\(icon.sha256)\""
        let headers: [(name: String, value: String)] = [("ETag", etag), ("Cache-Control", Self.cacheControl)]
        if let match = request.http.header("if-none-match"), Self.matches(match, etag: etag) {
            return HTTPResponse(status: 304, headers: headers, body: [])
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "image/png")] + headers, body: icon.png)
    }

    /// `PUT /api/admin/mini-app-partners/{id}/icon`: the body is a PNG, JPEG or SVG of at most 1 MiB. A body
    /// that is not a decodable image is 422 `invalid_icon` and changes nothing.
    func upload(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let id = try request.uuid("id")
        guard Self.uploadTypes.contains(request.mediaType) else {
            throw HeraldError(
                status: 415, code: "unsupported_media_type",
                message: "Content-Type must be image/png, image/jpeg or image/svg+xml.")
        }
        guard let existing = try partners.find(id: id) else { throw HeraldError.notFound }
        guard existing.revokedAt == nil else { throw AdminHandler.partnerRevoked }
        let images = try source.fromUpload(request.http.body, declaredType: request.mediaType)
        let change = PartnerChanges(icon: .replace(images, sourceURL: nil))
        guard let record = try partners.acting(as: actor).update(id: id, change) else {
            throw HeraldError.notFound
        }
        logger.info(
            "partner icon uploaded",
            [
                ("partner", .string(record.id.uuidString.lowercased())), ("miniAppId", .string(record.miniAppID)),
                ("bytes", .number(Double(request.http.body.count))),
            ])
        return Reply.json(200, record.json())
    }

    /// `If-None-Match`: `*` or a list of entity tags, weak ones compared weakly (RFC 9110 13.1.2).
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingASCIIWhitespace()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}
