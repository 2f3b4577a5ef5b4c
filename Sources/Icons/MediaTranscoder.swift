import CGdkPixbuf
import HeraldCrypto

/// A push's media as stored and served: re-encoded, so nothing of the source file but its pixels survives.
public struct TranscodedMedia: Sendable, Equatable {
    /// `image/png` or `image/jpeg` (`MediaFormat.storedType`).
    public let contentType: String
    public let bytes: [UInt8]
    public let width: Int
    public let height: Int
    /// SHA-256 of `bytes` in lower-case hex, for a strong ETag.
    public let sha256Hex: String

    init(contentType: String, bytes: [UInt8], width: Int, height: Int) {
        self.contentType = contentType
        self.bytes = bytes
        self.width = width
        self.height = height
        sha256Hex = Digest.hex(Digest.sha256(bytes))
    }
}

/// Turns an uploaded or fetched image (PNG, JPEG or GIF, told by its bytes) into a clean file: decoded with
/// gdk-pixbuf (the pixel limits checked before any pixel buffer exists, as for icons), turned upright by its EXIF
/// orientation, and encoded anew at its own size. The encoders write pixels only, so EXIF (GPS included), XMP,
/// ICC profiles, comments and PNG text chunks are all gone; a GIF becomes a PNG of its first frame. Like
/// `IconRasterizer`, it bounds the renders running at once and blocks its caller up to twice the time budget.
public final class MediaTranscoder: Sendable {
    /// JPEG quality of a re-encoded photo: visually lossless for a notification's thumbnail and expanded view.
    public static let jpegQuality = 90

    public let limits: IconLimits
    let slots: RenderSlots

    /// - Precondition: `limits.problem == nil`.
    public init(limits: IconLimits) {
        if let problem = limits.problem {
            preconditionFailure("IconLimits: \(problem)")
        }
        self.limits = limits
        slots = RenderSlots(count: limits.maxConcurrentRenders, budget: limits.timeBudget)
    }

    /// The image re-encoded without metadata.
    /// - Throws: `IconError`: `invalid_icon` (not PNG/JPEG/GIF, cut short, undecodable, over the pixel limits, too
    ///   slow), `icon_too_large` (over `maxInputBytes`), `icon_unavailable` (no slot within the time budget).
    public func transcode(_ bytes: [UInt8]) throws(IconError) -> TranscodedMedia {
        if bytes.count > limits.maxInputBytes {
            throw .tooManyBytes(limit: limits.maxInputBytes)
        }
        guard let format = MediaFormat.detect(bytes) else {
            throw IconError(.invalidIcon, "The file is not a PNG, JPEG or GIF image.")
        }
        let source = try Self.decodable(bytes, as: format, limits: limits)
        let limits = self.limits
        return try slots.run { cancellation throws(IconError) in
            let pixbuf = try RasterDecoder.decode(
                source, loader: format.loader, name: format.name, limits: limits, cancellation: cancellation)
            defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
            if cancellation.isCancelled {
                throw .tooSlow
            }
            let encoded =
                format == .jpeg
                ? try PixbufCanvas.encode(pixbuf, as: "jpeg", quality: Self.jpegQuality)
                : try PixbufCanvas.encode(pixbuf)
            return TranscodedMedia(
                contentType: format.storedType, bytes: encoded, width: Int(gdk_pixbuf_get_width(pixbuf)),
                height: Int(gdk_pixbuf_get_height(pixbuf)))
        }
    }

    /// The bytes the decoder is given, once the file is known to run whole: a PNG or JPEG as it is; a GIF up to the
    /// end of its first image and a trailer, its screen and that image within the pixel limits (gdk-pixbuf would
    /// otherwise decode every frame of an animation).
    static func decodable(_ bytes: [UInt8], as format: MediaFormat, limits: IconLimits) throws(IconError) -> [UInt8] {
        switch format {
        case .png:
            guard PNGStructure.isComplete(bytes) else { throw .undecodable(format.name) }
            return bytes
        case .jpeg:
            guard JPEGStructure.isComplete(bytes) else { throw .undecodable(format.name) }
            return bytes
        case .gif:
            guard let layout = GIFStructure.layout(bytes) else { throw .undecodable(format.name) }
            for (width, height) in [layout.screen, layout.firstImage]
            where width > limits.maxSourceSide || height > limits.maxSourceSide
                || width * height > limits.maxSourcePixels
            {
                throw .sourceTooLarge(limits)
            }
            return Array(bytes[..<layout.firstImageEnd]) + [GIFStructure.trailer]
        }
    }
}
