import HeraldCore

/// Answers "is this a well-formed JSON object?" without building a document.
///
/// The APNs hot path needs only that yes/no (the payload is parsed into `JSONValue`s later, and
/// only if someone reads `/sim/received`), so a validating scanner that allocates nothing keeps
/// the simulator far ahead of the clients it measures. It accepts exactly RFC 8259 (strict
/// numbers, escapes, UTF-8, no trailing commas) with a bounded depth; unlike `JSONParser` it does
/// not look for duplicate keys, which APNs does not reject either.
enum JSONShape {
    static let maxDepth = 64

    /// True when `bytes` is one JSON object, optionally surrounded by whitespace.
    static func isObject(_ bytes: [UInt8]) -> Bool { check(bytes, objectOnly: true) }

    /// True when `bytes` is one JSON value of any kind, optionally surrounded by whitespace.
    static func isDocument(_ bytes: [UInt8]) -> Bool { check(bytes, objectOnly: false) }

    /// Calls `visit` with the key (the raw bytes between its quotes, escapes as sent) and the value's bytes
    /// of every member of the object that is the top-level object's member `name`, in order. Visits nothing
    /// when there is no such member or it is not an object. For a body `isObject` accepted: it reads in
    /// place and allocates nothing, like the check itself.
    static func forEachMember(
        ofObject name: StaticString, in bytes: [UInt8],
        _ visit: (_ key: Range<Int>, _ value: Range<Int>) -> Void
    ) {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            scanner.skipWhitespace()
            guard scanner.peek == UInt8(ascii: "{") else { return }
            var found: Int?
            _ = scanner.members(depth: 0) { key, value in
                if found == nil, buffer[value.lowerBound] == UInt8(ascii: "{"),
                    JSONShape.string(buffer, key, equals: name)
                {
                    found = value.lowerBound
                }
            }
            guard let start = found else { return }
            var inner = Scanner(bytes: buffer)
            inner.index = start
            _ = inner.members(depth: 1, visit)
        }
    }

    /// Whether the raw string bytes at `range` (between the quotes) spell `literal`. A string with escapes
    /// is decoded first, so `"thread\u002did"` is `thread-id` as it is to APNs.
    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, equals literal: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        if !bytes[range].contains(UInt8(ascii: "\\")) { return bytes[range].elementsEqual(expected) }
        let quoted = Array(bytes[(range.lowerBound - 1)..<(range.upperBound + 1)])
        guard let text = (try? JSONParser.parse(quoted))?.stringValue else { return false }
        return text.utf8.elementsEqual(expected)
    }

    static func string(_ bytes: [UInt8], _ range: Range<Int>, equals literal: StaticString) -> Bool {
        bytes.withUnsafeBufferPointer { string($0, range, equals: literal) }
    }

    private static func check(_ bytes: [UInt8], objectOnly: Bool) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            scanner.skipWhitespace()
            if objectOnly && scanner.peek != UInt8(ascii: "{") { return false }
            guard scanner.value(depth: 0) else { return false }
            scanner.skipWhitespace()
            return scanner.index == buffer.count
        }
    }

    private struct Scanner: JSONByteScanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func value(depth: Int) -> Bool {
            guard depth <= JSONShape.maxDepth, let byte = peek else { return false }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return false
            }
        }

        mutating func object(depth: Int) -> Bool {
            members(depth: depth) { _, _ in }
        }

        /// The object at `index`, calling `visit` with each member's key (inside its quotes) and value range.
        mutating func members(depth: Int, _ visit: (_ key: Range<Int>, _ value: Range<Int>) -> Void) -> Bool {
            index += 1
            skipWhitespace()
            if peek == UInt8(ascii: "}") { index += 1; return true }
            while true {
                skipWhitespace()
                let keyStart = index + 1
                guard peek == UInt8(ascii: "\""), string() else { return false }
                let key = keyStart..<(index - 1)
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { return false }
                index += 1
                skipWhitespace()
                let valueStart = index
                guard value(depth: depth + 1) else { return false }
                visit(key, valueStart..<index)
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return true
                default: return false
                }
            }
        }

        mutating func number() -> Bool {
            guard numberWithoutExponent() else { return false }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            return true
        }

        mutating func string() -> Bool {
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    guard escape() else { return false }
                case 0x00..<0x20:
                    return false
                case 0x80...:
                    guard utf8Sequence() else { return false }
                default:
                    index += 1
                }
            }
            return false
        }

        mutating func escape() -> Bool {
            index += 1
            guard let byte = peek else { return false }
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                return true
            case UInt8(ascii: "u"):
                // Surrogate pairing is left to the full parser: APNs' own check is no stricter.
                guard index + 4 <= bytes.count else { return false }
                for offset in 0..<4 where !isHex(bytes[index + offset]) { return false }
                index += 4
                return true
            default:
                return false
            }
        }

        func isHex(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }

        /// One multi-byte UTF-8 scalar (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
        mutating func utf8Sequence() -> Bool {
            let lead = bytes[index]
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return false
            }
            guard index + length <= bytes.count else { return false }
            let second = bytes[index + 1]
            guard second >= lower, second <= upper else { return false }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
            return true
        }
    }
}
