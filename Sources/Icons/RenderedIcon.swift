import HeraldCrypto

/// One square PNG of an icon.
public struct RenderedIcon: Sendable, Equatable {
    /// Width and height in pixels.
    public let size: Int
    /// The PNG file: 8-bit RGBA, `size` x `size`, the image centred on a transparent background.
    public let png: [UInt8]
    /// SHA-256 of `png` in lower-case hex, for a strong ETag: the same input always gives the same bytes.
    public let sha256Hex: String

    init(size: Int, png: [UInt8]) {
        self.size = size
        self.png = png
        sha256Hex = Digest.hex(Digest.sha256(png))
    }
}
