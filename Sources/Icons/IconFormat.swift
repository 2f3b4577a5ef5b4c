/// The formats Herald accepts, told apart by their bytes alone: a declared Content-Type is never trusted.
public enum IconFormat: String, Sendable, CaseIterable {
    case png
    case jpeg
    case svg

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let jpegStart: [UInt8] = [0xFF, 0xD8, 0xFF]

    /// The format of `bytes`, or nil for anything else (GIF, WebP, gzip-compressed SVG, HTML, text...).
    /// An SVG is XML whose root element is `svg`; see `SVGProlog`.
    public static func detect(_ bytes: [UInt8]) -> IconFormat? {
        if bytes.starts(with: pngSignature) {
            return .png
        }
        if bytes.starts(with: jpegStart) {
            return .jpeg
        }
        if SVGProlog.rootIsSVG(bytes) {
            return .svg
        }
        return nil
    }

    /// The name people know the format by.
    public var name: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .svg: "SVG"
        }
    }
}
