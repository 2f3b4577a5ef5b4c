import HTTPFetch
import HeraldCore
import Icons

/// Where a push's media comes from: an uploaded image, or an https URL fetched through HTTPFetch (its address
/// policy checked on every connection and redirect, its CAs); either way re-encoded by Icons' `MediaTranscoder`
/// (no metadata survives) before anything is written. Errors are the media API's: 422 `invalid_media`, 413
/// `media_too_large`, 422 `media_fetch_failed`, 503 `media_unavailable`.
public final class PartnerMediaSource: Sendable {
    private let fetcher: HTTPFetcher
    /// One per process: it bounds how many images are decoded at once.
    private let transcoder = MediaTranscoder(
        limits: IconLimits(
            maxInputBytes: PushMedia.maxSourceBytes, maxSourcePixels: PushMedia.maxSourcePixels,
            maxSourceSide: PushMedia.maxSourceSide))

    /// How long a fetch may take in all, and how many redirects it follows (each hop's address checked again).
    static let fetchTimeout: Duration = .seconds(10)
    static let fetchRedirects = 3

    /// `fetcher`: shared with the icons' source (one fetch thread per process).
    public init(fetcher: HTTPFetcher) {
        self.fetcher = fetcher
    }

    /// The uploaded image re-encoded.
    public func fromUpload(_ bytes: [UInt8]) throws(HeraldError) -> TranscodedMedia {
        try transcode(bytes, field: nil)
    }

    /// The image at `url` (https only, at most `PushMedia.maxSourceBytes`), re-encoded.
    public func fromURL(_ url: String) throws(HeraldError) -> TranscodedMedia {
        let request = HTTPFetchRequest(
            method: .get, url: url, headers: [HTTPFetchHeader("Accept", "image/png, image/jpeg, image/gif")],
            timeout: Self.fetchTimeout, maxResponseBytes: PushMedia.maxSourceBytes, oversize: .fail,
            followRedirects: Self.fetchRedirects)
        let response: HTTPFetchResponse
        do {
            response = try fetcher.fetch(request)
        } catch {
            switch error.code {
            case .schemeNotAllowed:
                throw .invalidField("url", "url must be an absolute https URL.")
            case .tooLarge:
                throw Self.tooLarge(field: "url")
            default:
                throw HeraldError(
                    status: 422, code: "media_fetch_failed",
                    message: "url could not be fetched (\(error.code.rawValue)).", field: "url")
            }
        }
        guard response.status == 200 else {
            throw HeraldError(
                status: 422, code: "media_fetch_failed", message: "url answered HTTP \(response.status), not 200.",
                field: "url")
        }
        return try transcode(response.body, field: "url")
    }

    private func transcode(_ bytes: [UInt8], field: String?) throws(HeraldError) -> TranscodedMedia {
        guard !bytes.isEmpty else {
            throw HeraldError(status: 422, code: "invalid_media", message: "The image is empty.", field: field)
        }
        let media: TranscodedMedia
        do {
            media = try transcoder.transcode(bytes)
        } catch {
            switch error.code {
            case .invalidIcon:
                throw HeraldError(status: 422, code: "invalid_media", message: error.message, field: field)
            case .iconTooLarge:
                throw Self.tooLarge(field: field)
            case .unavailable:
                throw HeraldError(
                    status: 503, code: "media_unavailable",
                    message: "Media cannot be processed right now; retry shortly.",
                    retryAfter: 1)
            }
        }
        guard media.bytes.count <= PushMedia.maxStoredBytes else {
            throw HeraldError(
                status: 413, code: "media_too_large",
                message: "The image re-encoded is larger than \(PushMedia.maxStoredBytes) bytes; send a smaller one.",
                field: field)
        }
        return media
    }

    /// 413 `media_too_large`: over `PushMedia.maxSourceBytes`.
    public static func tooLarge(field: String?) -> HeraldError {
        HeraldError(
            status: 413, code: "media_too_large",
            message: "The image is larger than \(PushMedia.maxSourceBytes) bytes.",
            field: field)
    }
}
