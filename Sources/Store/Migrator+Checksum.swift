import Foundation

extension Migrator {
    /// The checksum recorded for a file: 64-bit FNV-1a of its SQL with `--` comments removed and
    /// runs of whitespace made one space, both only outside string literals, quoted identifiers and
    /// dollar-quoted bodies (a function's body is stored as written, so a change inside it counts).
    /// A migration's comments may thus be edited after it was applied; its SQL may not.
    public static func checksum(_ text: String) -> String {
        fnv1a(normalized(Array(text.utf8)))
    }

    /// The checksum an applied migration was recorded with before comments were left out: FNV-1a
    /// of the whole file.
    public static func fullTextChecksum(_ text: String) -> String {
        fnv1a(Array(text.utf8))
    }

    /// True when `recorded` is the full-text checksum of this migration's SQL as applied: either
    /// of the file as it is now, or of the file as first released (`releasedChecksums`) when its
    /// SQL is still the same.
    static func isEarlierChecksum(_ recorded: String, of migration: Migration) -> Bool {
        if recorded == fullTextChecksum(migration.sql) { return true }
        guard let released = releasedChecksums[migration.version] else { return false }
        return recorded == released.fullText && checksum(migration.sql) == released.sql
    }

    /// For each migration whose comments were edited after release: the full-text checksum that
    /// databases migrated before recorded, and the comment-free checksum of that release's SQL.
    public static let releasedChecksums: [Int: (fullText: String, sql: String)] = [
        1: ("69d4cdf12e39d6d3", "be429bf1f0737ad5"),
        2: ("92fc620800e48afd", "f44fb999f117f1d6"),
        3: ("ed0c2bc6c1a049ac", "86f03080d8094a4f"),
        4: ("f914414f778fe5a2", "9cb51298bd465070"),
        5: ("7e422f8b5107c10d", "ddb75a4322e165f3"),
        6: ("b0d2c37cb826cee5", "7f595c513aadf03c"),
        7: ("83cb22ccaadaff9c", "f46173ab6a438e36"),
        8: ("5642669976c46a8a", "efe9323b117ca9e2"),
        9: ("76087494f5c4c922", "cf8c73619b9f90f5"),
        10: ("a74d97a99149add", "766d6954e207afe3"),
        11: ("b3efea7effcb2e82", "c23d0173e2e88627"),
        12: ("2eaf8f416ceff061", "1d79d781b711ab0d"),
        13: ("8e4abce37d92014a", "e60cdf11e586c961"),
        14: ("7319411ae53ce8cf", "41f95489c913d76c"),
        15: ("8ee9f73221b406bc", "4afb045f49a3de5b"),
        16: ("39498566d697e3c4", "fb9959b27e26e19d"),
        17: ("72c2083f41cb05f7", "e2b086b5b8547457"),
        18: ("acea7ac6af3eeb78", "699a664c7d032ec0"),
        19: ("38f90b09f98b5ce", "321f8d420bb4260"),
        20: ("be8ed694cb015167", "a048a21cc3568156"),
        21: ("57826090efa0af9b", "2cf30eecb0c38bfa"),
        22: ("f3ec836b95f54a84", "d4101b4753edb786"),
        23: ("949c4e91ce645c84", "62e608c8445d7f71"),
        24: ("3b9560a6cf2f3c3d", "50e6893314bd56eb"),
        25: ("f26d25c138ec1069", "8af47153be5df48f"),
        26: ("516d655ca17b9a82", "f02d72461e07dcb"),
        27: ("64dec5cf8fb53fe4", "f1511dad4cebe178"),
        28: ("8f4a132492652abc", "c9807bdacd38eff0"),
        29: ("e81ff1d3494293ce", "817d5574e06f08c4"),
    ]

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
        let escapes = start > 0 && (bytes[start - 1] == UInt8(ascii: "E") || bytes[start - 1] == UInt8(ascii: "e"))
            && !(start > 1 && isIdentifierByte(bytes[start - 2]))
        var index = start + 1
        while index < bytes.count {
            if escapes && bytes[index] == UInt8(ascii: "\\") {
                index += 2
            } else if bytes[index] == UInt8(ascii: "'") {
                if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "'") { index += 2 } else { return index + 1 }
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
            while index < bytes.count && isIdentifierByte(bytes[index]) && bytes[index] != UInt8(ascii: "$") { index += 1 }
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
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return String(hash, radix: 16)
    }
}
