import Foundation

/// UUID text as Postgres writes it (either letter case accepted), parsed by hand: Foundation's
/// `UUID(uuidString:)` goes through sscanf, about 0.6-0.8 µs, and the worker reads several ids per
/// delivery. The text is written by HeraldCore's `UUIDText`.
public enum PostgresUUID {
    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, either letter case; nil for anything else.
    public static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }
}

extension PostgresUUID {
    /// `parse(_:)` on a value's bytes (a row's value in libpq's buffer), without making a String or an array.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var byte = 0
            var index = 0
            while index < 36 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard bytes[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                    continue
                }
                guard let high = hexNibble(bytes[index]), let low = hexNibble(bytes[index + 1]) else { return false }
                out[byte] = high << 4 | low
                byte += 1
                index += 2
            }
            return true
        }
        return valid ? UUID(uuid: value) : nil
    }

    private static func hexNibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
