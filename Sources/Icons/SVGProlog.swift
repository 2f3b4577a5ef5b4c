/// Finds an XML document's root element without parsing the document: skips a UTF-8 byte-order mark, the XML
/// declaration, processing instructions, comments, a doctype (internal subset included) and white space, then reads
/// the first element's name. Only ASCII-compatible encodings are recognised (UTF-8 in practice); librsvg does the
/// real parsing afterwards.
enum SVGProlog {
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Whether the root element is `svg`, with or without a namespace prefix (`<svg:svg>`).
    static func rootIsSVG(_ bytes: [UInt8]) -> Bool {
        guard let name = rootElementName(bytes) else {
            return false
        }
        let svg = Array("svg".utf8)
        if name == svg {
            return true
        }
        return name.count > 4 && name.suffix(4).elementsEqual(Array(":svg".utf8))
    }

    static func rootElementName(_ bytes: [UInt8]) -> [UInt8]? {
        var index = bytes.starts(with: byteOrderMark) ? byteOrderMark.count : 0
        while true {
            while index < bytes.count, isSpace(bytes[index]) {
                index += 1
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else {
                return nil
            }
            if has("<?", in: bytes, at: index) {
                guard let end = find("?>", in: bytes, from: index + 2) else { return nil }
                index = end + 2
            } else if has("<!--", in: bytes, at: index) {
                guard let end = find("-->", in: bytes, from: index + 4) else { return nil }
                index = end + 3
            } else if has("<!DOCTYPE", in: bytes, at: index) {
                guard let end = doctypeEnd(bytes, from: index + 9) else { return nil }
                index = end + 1
            } else {
                var end = index + 1
                while end < bytes.count, !isSpace(bytes[end]), bytes[end] != UInt8(ascii: ">"),
                    bytes[end] != UInt8(ascii: "/")
                {
                    end += 1
                }
                return end > index + 1 ? Array(bytes[(index + 1)..<end]) : nil
            }
        }
    }

    /// The `>` that closes a doctype: not inside quotes, not inside the `[...]` internal subset (whose
    /// declarations have `>`s of their own).
    private static func doctypeEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var quote: UInt8?
        var depth = 0
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open {
                    quote = nil
                }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "]") {
                depth = max(0, depth - 1)
            } else if byte == UInt8(ascii: ">"), depth == 0 {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func has(_ text: StaticString, in bytes: [UInt8], at index: Int) -> Bool {
        let pattern = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        guard index + pattern.count <= bytes.count else {
            return false
        }
        for offset in 0..<pattern.count where bytes[index + offset] != pattern[offset] {
            return false
        }
        return true
    }

    private static func find(_ text: StaticString, in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + text.utf8CodeUnitCount <= bytes.count {
            if has(text, in: bytes, at: index) {
                return index
            }
            index += 1
        }
        return nil
    }
}
