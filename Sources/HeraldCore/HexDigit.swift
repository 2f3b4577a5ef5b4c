/// One ASCII hexadecimal digit's value: the one reader of hex digits for percent escapes, bytea text, tokens.
public enum HexDigit {
    /// 0-15 for `0-9`, `a-f`, `A-F`; nil for any other byte.
    @inline(__always)
    public static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    @inline(__always)
    public static func isDigit(_ byte: UInt8) -> Bool { value(byte) != nil }
}
