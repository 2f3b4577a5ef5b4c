/// A partner's stored icon: the sizes Herald keeps, where the intake serves them, and the URL
/// payloads carry. iOS renders a communication notification's avatar only from PNG or JPEG, so every
/// icon is kept as square PNGs whatever it was uploaded as.
public enum PartnerIcon {
    /// The square sizes (px) every icon is stored at.
    public static let sizes = [64, 128, 256]
    /// The size payloads point at.
    public static let payloadSize = 256
    /// The largest image accepted, uploaded or fetched.
    public static let maxSourceBytes = 1_048_576

    /// `/icons/{miniAppId}/{size}.png`, where the intake serves a size without auth.
    public static func path(miniAppID: String, size: Int) -> String {
        "/icons/\(miniAppID)/\(size).png"
    }

    /// The size named by the last segment of that path (`256.png`); nil for any other name.
    public static func size(fileName: String) -> Int? {
        guard fileName.hasSuffix(".png"), let size = Int(fileName.dropLast(4)), sizes.contains(size),
            fileName == "\(size).png"
        else { return nil }
        return size
    }

    /// `HERALD_PUBLIC_URL`: an absolute http(s) URL without query or fragment; a trailing `/` is dropped.
    /// Nil when `text` is not one.
    public static func publicBaseURL(_ text: String) -> String? {
        let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
        let bytes = Array(trimmed.utf8)
        let scheme = bytes.starts(with: Array("https://".utf8)) ? 8 : bytes.starts(with: Array("http://".utf8)) ? 7 : 0
        guard scheme > 0, bytes.count > scheme, bytes.count <= 1024,
            Identifiers.isHostByte(bytes[scheme]),
            bytes.allSatisfy({ (0x21...0x7E).contains($0) && !"\\?#\"<>".utf8.contains($0) })
        else { return nil }
        return trimmed
    }
}
