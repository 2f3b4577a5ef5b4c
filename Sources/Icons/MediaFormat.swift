/// The image formats a push's media may be sent in, told apart by their bytes alone (a declared Content-Type is
/// never trusted), and what each is stored as: PNG and JPEG as themselves, GIF as a PNG of its first frame.
public enum MediaFormat: String, Sendable, CaseIterable {
    case png
    case jpeg
    case gif

    /// The format of `bytes`, or nil for anything else (WebP, HEIC, SVG, HTML, text...).
    public static func detect(_ bytes: [UInt8]) -> MediaFormat? {
        if bytes.starts(with: IconFormat.pngSignature) { return .png }
        if bytes.starts(with: IconFormat.jpegStart) { return .jpeg }
        if GIFStructure.signatures.contains(where: { bytes.starts(with: $0) }) { return .gif }
        return nil
    }

    /// The name people know the format by.
    public var name: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .gif: "GIF"
        }
    }

    /// The gdk-pixbuf loader that decodes it.
    var loader: String { rawValue }

    /// What it is re-encoded as: JPEG stays JPEG (a photo as PNG would be several times larger), the rest PNG.
    public var storedType: String { self == .jpeg ? "image/jpeg" : "image/png" }
}
