/// The steps over a JSON body's bytes that the simulator's two in-place scanners share (`JSONShape`'s check of any
/// body, `FCMFastPath`'s common FCM request): each keeps its own rules for strings, numbers and depth, and reads
/// whitespace, literals, digits and arrays through these.
protocol JSONByteScanner {
    var bytes: UnsafeBufferPointer<UInt8> { get }
    var index: Int { get set }
    /// The value at `index` by the scanner's own rules, consumed; false when it refuses it.
    mutating func value(depth: Int) -> Bool
}

extension JSONByteScanner {
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// `text` (`true`, `false`, `null`) at `index`, consumed.
    mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let expected = text.utf8Start
        for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
        index += count
        return true
    }

    /// The decimal digits at `index`, consumed; how many.
    mutating func digits() -> Int {
        let start = index
        while let byte = peek, byte >= 0x30, byte <= 0x39 { index += 1 }
        return index - start
    }

    /// A number's sign, integer part (no leading zeros) and fraction, RFC 8259; the exponent is the caller's.
    mutating func numberWithoutExponent() -> Bool {
        if peek == UInt8(ascii: "-") { index += 1 }
        if peek == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        return true
    }

    /// The array at `index`, each element read by `value(depth:)` one level deeper.
    mutating func array(depth: Int) -> Bool {
        index += 1
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            guard value(depth: depth + 1) else { return false }
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return true
            default: return false
            }
        }
    }
}
