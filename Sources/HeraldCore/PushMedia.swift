import Foundation

/// A push's rich media (docs/api.md, "Media"): the limits of an upload, how long it lives, and the signed URL the
/// intake serves it at, which a push's payloads carry as `attachmentUrl` for the app's notification service
/// extension. The phone downloads the image from Herald, never from the partner.
public enum PushMedia {
    /// The content types an upload may declare; the bytes decide what the image is.
    public static let uploadTypes: Set<String> = ["image/png", "image/jpeg", "image/gif"]
    /// The largest image accepted, uploaded or fetched.
    public static let maxSourceBytes = 5 * 1_048_576
    /// The largest file stored once re-encoded: iOS attaches images of at most 10 MB.
    public static let maxStoredBytes = 10_000_000
    /// Most pixels (width x height) an image may declare: 4096 x 4096, checked before any pixel is decoded.
    public static let maxSourcePixels = 4096 * 4096
    /// Most pixels on either side.
    public static let maxSourceSide = 8192

    /// HERALD_MEDIA_TTL_HOURS: a week by default, at most 30 days.
    public static let defaultLifetimeHours = 168
    public static let lifetimeHoursRange = 1...720
    /// HERALD_MEDIA_MAX_PER_PARTNER: live media one partner may hold.
    public static let defaultMaxPerPartner = 1_000
    public static let maxPerPartnerRange = 1...100_000

    /// What a media URL's signature is the HMAC of: a prefix no payload signature's message starts with, so a
    /// signature of one can never stand for the other, and the id.
    public static func signedMessage(id: UUID) -> [UInt8] {
        var out = Array("herald-media-v1\n".utf8)
        UUIDText.append(id, to: &out)
        return out
    }

    /// `/media/{mediaId}/{signature}.{png|jpg}`: the path the intake serves a media file at without credentials.
    /// The signature makes the path unguessable from the id alone; the extension tells the app's extension the
    /// file's type.
    public static func path(id: UUID, contentType: String, signer: any PayloadSigner) -> String {
        "/media/\(UUIDText.string(id))/\(signer.signature(for: signedMessage(id: id))).\(fileExtension(contentType))"
    }

    /// The extension of a stored content type (`image/png`, `image/jpeg`).
    public static func fileExtension(_ contentType: String) -> String {
        contentType == "image/jpeg" ? "jpg" : "png"
    }

    /// The signature and extension of a served file name (`<43 base64url characters>.png`); nil for another shape.
    public static func fileName(_ name: String) -> (signature: String, fileExtension: String)? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 43, parts[1] == "png" || parts[1] == "jpg" else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// 404 `media_not_found` (field `mediaId`): an unknown or expired id, or another partner's (which answers exactly
    /// as an unknown one, so ids cannot be probed across partners).
    public static let notFound = HeraldError(
        status: 404, code: "media_not_found", message: "No such media: unknown, expired or another partner's.",
        field: "mediaId")
}
