import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Icons
import PartnerIcons
import ServiceSupport
import Store

/// A push's rich media: the partner's upload (an image, or a URL Herald fetches), re-encoded without metadata and
/// stored; and the files served without credentials, at signed paths, to the phones whose notification service
/// extension downloads a push's `attachmentUrl` (docs/api.md, "Media").
struct MediaHandler: Sendable {
    let store: MediaStore
    let source: PartnerMediaSource
    let rules: PushRules
    let signer: HMACSigner
    /// Every configured signing key: a path signed with a key still configured stays valid through a rotation.
    let verifiers: [HMACSigner]
    let lifetimeHours: Int
    let maxPerPartner: Int
    let logger: Logger
    let clock: @Sendable () -> Date

    /// The largest JSON body of the upload route (`{"url": ...}`), as every other route's.
    static let maxJSONBytes = 65_536
    /// The longest `url` fetched, as an icon's.
    static let maxURLBytes = 2_048

    /// The upload alone may send up to `PushMedia.maxSourceBytes`; the files need no credential.
    static let routes: [IntakeRoute] = [
        .partner("POST", "/api/partners/media", largerBodyLimit: PushMedia.maxSourceBytes) {
            try $0.media.upload($1, partner: $2)
        },
        .open("GET", "/media/{mediaId}/{file}") { try $0.media.serve($1) },
    ]

    /// `POST /api/partners/media`: an image body (PNG, JPEG or GIF) or `{"url":"https://..."}`; 201 with the media's
    /// id, the URL it is served at and when it expires. Nothing is written unless the image decodes.
    func upload(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        guard let publicURL = rules.publicURL else { throw Self.unavailable }
        let media: TranscodedMedia
        if PushMedia.uploadTypes.contains(request.mediaType) {
            media = try source.fromUpload(request.http.body)
        } else if request.mediaType == "application/json" {
            guard request.http.body.count <= Self.maxJSONBytes else { throw HeraldError.bodyTooLarge }
            let fields = try JSONFields(try request.jsonBody(), allowed: ["url"])
            let url = try fields.requiredString("url")
            guard url.utf8.count <= Self.maxURLBytes, url.lowercased().hasPrefix("https://") else {
                throw HeraldError.invalidField(
                    "url", "url must be an https URL of at most \(Self.maxURLBytes) characters.")
            }
            media = try source.fromURL(url)
        } else {
            throw HeraldError(
                status: 415, code: "unsupported_media_type",
                message: "Content-Type must be image/png, image/jpeg, image/gif or application/json.")
        }
        let id = UUIDv7.make(at: clock())
        guard
            let expiresAt = try store.insert(
                id: id, partnerID: partner.id, contentType: media.contentType, bytes: media.bytes,
                sha256: media.sha256Hex, lifetimeSeconds: lifetimeHours * 3_600, maxLive: maxPerPartner)
        else {
            throw HeraldError(
                status: 429, code: "media_limit_reached",
                message:
                    "The partner holds \(maxPerPartner) live media files, the most allowed; retry once some expire.")
        }
        logger.info(
            "media stored",
            [
                ("partner", .string(UUIDText.string(partner.id))), ("mediaId", .string(UUIDText.string(id))),
                ("bytes", .number(Double(media.bytes.count))), ("contentType", .string(media.contentType)),
            ])
        return Reply.json(
            201,
            .object([
                ("mediaId", .string(UUIDText.string(id))),
                ("url", .string(publicURL + PushMedia.path(id: id, contentType: media.contentType, signer: signer))),
                ("contentType", .string(media.contentType)), ("width", .number(Double(media.width))),
                ("height", .number(Double(media.height))), ("bytes", .number(Double(media.bytes.count))),
                ("expiresAt", .string(ISO8601.format(expiresAt))),
            ]))
    }

    /// `GET /media/{mediaId}/{signature}.{png|jpg}`: 200 with the file, 304 when `If-None-Match` names it, 404 for a
    /// path Herald did not sign (checked before the database is asked), an unknown id or an expired one.
    func serve(_ request: RoutedRequest) throws -> HTTPResponse {
        let id = try request.uuid("mediaId")
        guard let file = PushMedia.fileName(request.parameter("file")), isSigned(id, file.signature) else {
            throw HeraldError.notFound
        }
        guard let media = try store.find(id: id), PushMedia.fileExtension(media.contentType) == file.fileExtension
        else { throw HeraldError.notFound }
        let etag = "\"\(media.sha256)\""
        // A file never changes under its path; caches keep it until it expires here, a day at most.
        let maxAge = max(0, min(86_400, Int(media.expiresAt.timeIntervalSince(clock()))))
        let headers: [(name: String, value: String)] = [
            ("ETag", etag), ("Cache-Control", "public, max-age=\(maxAge), immutable"),
            ("X-Content-Type-Options", "nosniff"), ("Content-Security-Policy", "default-src 'none'; sandbox"),
        ]
        if let match = request.http.header("if-none-match"), IconHandler.matches(match, etag: etag) {
            return HTTPResponse(status: 304, headers: headers, body: [])
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", media.contentType)] + headers, body: media.bytes)
    }

    /// Whether `signature` is a configured key's over the id, compared in constant time for each key.
    private func isSigned(_ id: UUID, _ signature: String) -> Bool {
        let message = PushMedia.signedMessage(id: id)
        let given = Array(signature.utf8)
        return verifiers.reduce(false) { found, key in
            Digest.constantTimeEquals(Array(key.signature(for: message).utf8), given) || found
        }
    }

    /// The push's `attachmentUrl`: the partner's live media `id`, kept until `until` (the push's expiry); 404
    /// `media_not_found` for an unknown, expired or another partner's id. The push endpoint's lookup.
    func attachmentURL(_ id: UUID, partner: PartnerProfile, until: Date) throws(HeraldError) -> String {
        let contentType: String?
        do {
            contentType = try store.attach(id: id, partnerID: partner.id, until: until)
        } catch {
            throw StoreErrors.heraldError(for: error)
        }
        guard let contentType else { throw PushMedia.notFound }
        // Only media uploaded before HERALD_PUBLIC_URL was unset: without it, no upload is taken.
        guard let publicURL = rules.publicURL else { throw Self.unavailable }
        return publicURL + PushMedia.path(id: id, contentType: contentType, signer: signer)
    }

    /// Media need the intake's public URL (HERALD_PUBLIC_URL): without it no URL could reach a phone.
    static let unavailable = HeraldError(
        status: 503, code: "media_unavailable", message: "This gateway serves no media (it has no public URL).")
}
