/// Whether a PNG's chunks run whole from the signature to IEND. gdk-pixbuf accepts a PNG cut short after its
/// header (the rows it never got are left blank), so a truncated upload is caught here instead. libpng checks
/// the chunks' CRCs and the compressed data while it decodes.
enum PNGStructure {
    private static let iend: [UInt8] = Array("IEND".utf8)

    static func isComplete(_ bytes: [UInt8]) -> Bool {
        var index = IconFormat.pngSignature.count
        // Each chunk: 4-byte big-endian length, 4-byte type, data, 4-byte CRC.
        while index + 12 <= bytes.count {
            let length = bytes[index..<(index + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard length <= 0x7FFF_FFFF, index + 12 + length <= bytes.count else {
                return false
            }
            if bytes[(index + 4)..<(index + 8)].elementsEqual(iend) {
                return true
            }
            index += 12 + length
        }
        return false
    }
}
