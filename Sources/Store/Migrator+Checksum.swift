import Foundation

extension Migrator {
    /// The checksum recorded for a file: 64-bit FNV-1a of its SQL with `--` comments removed and
    /// runs of whitespace made one space, both only outside string literals, quoted identifiers and
    /// dollar-quoted bodies (a function's body is stored as written, so a change inside it counts).
    /// A migration's comments may thus be edited after it was applied; its SQL may not (unless it is
    /// a legacy migration, which is not verified: see `Migrator`).
    public static func checksum(_ text: String) -> String {
        fnv1a(normalized(Array(text.utf8)))
    }

    /// The SQL of `bytes` without `--` comments and with each whitespace run outside quotes made
    /// one space (none at the ends).
    static func normalized(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var pendingSpace = false
        var index = 0
        func emit(_ range: Range<Int>) {
            if pendingSpace && !output.isEmpty { output.append(UInt8(ascii: " ")) }
            pendingSpace = false
            output.append(contentsOf: bytes[range])
        }
        while index < bytes.count {
            let byte = bytes[index]
            if isWhitespace(byte) {
                pendingSpace = true
                index += 1
            } else if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
                pendingSpace = true
            } else if byte == UInt8(ascii: "'") {
                let end = endOfString(bytes, from: index)
                emit(index..<end)
                index = end
            } else if byte == UInt8(ascii: "\""), let close = bytes[(index + 1)...].firstIndex(of: byte) {
                emit(index..<(close + 1))
                index = close + 1
            } else if byte == UInt8(ascii: "$"), let end = endOfDollarQuote(bytes, from: index) {
                emit(index..<end)
                index = end
            } else {
                emit(index..<(index + 1))
                index += 1
            }
        }
        return output
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || (0x30...0x39).contains(byte)
            || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte >= 0x80
    }

    /// The index after the literal that starts at `start` (a `'`): `''` inside it is a quote, and
    /// in an `E'...'` literal a backslash escapes the next byte.
    private static func endOfString(_ bytes: [UInt8], from start: Int) -> Int {
        let escapes =
            start > 0 && (bytes[start - 1] == UInt8(ascii: "E") || bytes[start - 1] == UInt8(ascii: "e"))
            && !(start > 1 && isIdentifierByte(bytes[start - 2]))
        var index = start + 1
        while index < bytes.count {
            if escapes && bytes[index] == UInt8(ascii: "\\") {
                index += 2
            } else if bytes[index] == UInt8(ascii: "'") {
                if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "'") {
                    index += 2
                } else {
                    return index + 1
                }
            } else {
                index += 1
            }
        }
        return bytes.count
    }

    /// The index after the dollar-quoted body that starts at `start` (`$$` or `$tag$`), or nil when
    /// no dollar quote starts there (a parameter such as `$1`, or a `$` inside a name).
    private static func endOfDollarQuote(_ bytes: [UInt8], from start: Int) -> Int? {
        if start > 0 && isIdentifierByte(bytes[start - 1]) { return nil }
        var index = start + 1
        if index < bytes.count, !(0x30...0x39).contains(bytes[index]) {
            while index < bytes.count && isIdentifierByte(bytes[index]) && bytes[index] != UInt8(ascii: "$") {
                index += 1
            }
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "$") else { return nil }
        let tag = Array(bytes[start...index])
        var search = index + 1
        while search + tag.count <= bytes.count {
            if bytes[search] == UInt8(ascii: "$") && Array(bytes[search..<(search + tag.count)]) == tag {
                return search + tag.count
            }
            search += 1
        }
        return bytes.count
    }

    private static func fnv1a(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
