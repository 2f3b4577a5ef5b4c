/// Whether a JPEG's segments run whole from SOI to the EOI marker. gdk-pixbuf hands back a JPEG cut short as
/// if it were complete (the missing rows left blank), so a truncated upload is caught here instead.
enum JPEGStructure {
    static func isComplete(_ bytes: [UInt8]) -> Bool {
        var index = 2  // after SOI
        while index + 2 <= bytes.count {
            guard bytes[index] == 0xFF else {
                return false
            }
            let marker = bytes[index + 1]
            switch marker {
            case 0xD9:  // EOI
                return true
            case 0xFF:  // fill byte before a marker
                index += 1
                continue
            case 0x01, 0xD0...0xD7:  // markers without a length
                index += 2
                continue
            default:
                break
            }
            guard index + 4 <= bytes.count else {
                return false
            }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else {
                return false
            }
            index += 2 + length
            if marker == 0xDA {
                // Entropy-coded data follows a scan header: it ends at the first marker other than a stuffed
                // 0xFF00 or a restart marker.
                while index + 1 < bytes.count {
                    let next = bytes[index + 1]
                    if bytes[index] == 0xFF, next != 0x00, !(0xD0...0xD7).contains(next) {
                        break
                    }
                    index += 1
                }
            }
        }
        return false
    }
}
