/// Walks a GIF's blocks from the header to the trailer (GIF89a specification): whether they run whole, the sizes
/// the file declares (the logical screen and its first image), and where that first image ends. gdk-pixbuf's GIF
/// loader keeps every frame of an animation in memory, so only the bytes up to the first image (and a trailer) are
/// handed to it, and its sizes are checked here before any pixel is allocated.
enum GIFStructure {
    static let signatures: [[UInt8]] = [Array("GIF87a".utf8), Array("GIF89a".utf8)]
    static let trailer: UInt8 = 0x3B

    struct Layout {
        /// The logical screen's width and height.
        let screen: (width: Int, height: Int)
        /// The first image's width and height.
        let firstImage: (width: Int, height: Int)
        /// The offset just past the first image's data.
        let firstImageEnd: Int
    }

    /// The file's layout, or nil unless it is a GIF whose blocks run whole to the trailer with at least one image.
    static func layout(_ bytes: [UInt8]) -> Layout? {
        guard bytes.count >= 13, signatures.contains(where: { bytes.starts(with: $0) }) else {
            return nil
        }
        func uint16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let screen = (width: uint16(6), height: uint16(8))
        var index = 13 + colorTableBytes(bytes[10])
        var first: (size: (width: Int, height: Int), end: Int)?
        while index < bytes.count {
            switch bytes[index] {
            case trailer:
                return first.map { Layout(screen: screen, firstImage: $0.size, firstImageEnd: $0.end) }
            case 0x21:  // extension: introducer, label, data sub-blocks
                guard let end = subBlocksEnd(bytes, from: index + 2) else { return nil }
                index = end
            case 0x2C:  // image: descriptor, local colour table, LZW code size, data sub-blocks
                guard index + 11 <= bytes.count else { return nil }
                let size = (width: uint16(index + 5), height: uint16(index + 7))
                guard let end = subBlocksEnd(bytes, from: index + 11 + colorTableBytes(bytes[index + 9])) else {
                    return nil
                }
                if first == nil { first = (size, end) }
                index = end
            default:
                return nil
            }
        }
        return nil
    }

    /// The bytes of the colour table a packed field announces (its top bit set), else 0.
    private static func colorTableBytes(_ packed: UInt8) -> Int {
        packed & 0x80 == 0 ? 0 : 3 << (Int(packed & 0x07) + 1)
    }

    /// The offset after the zero-length block that ends the sub-blocks starting at `start`; nil when they run past
    /// the end.
    private static func subBlocksEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            let length = Int(bytes[index])
            index += 1
            if length == 0 { return index }
            index += length
        }
        return nil
    }
}
