import Foundation

/// A UUID's canonical text, lowercase and hyphenated (`uuidString.lowercased()`), written by hand: Foundation's
/// `uuidString` goes through sprintf, about 0.6-0.8 µs a call, and the intake and the worker write ids per delivery
/// (payloads, statement parameters).
public enum UUIDText {
    /// The text's length: 8-4-4-4-12 hex digits.
    public static let count = 36
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes the 36 characters into `out` from `offset`, which must leave room for them.
    public static func write(_ uuid: UUID, into out: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        precondition(offset >= 0 && offset + count <= out.count, "no room for a UUID's text")
        hexDigits.withUnsafeBufferPointer { digits in
            withUnsafeBytes(of: uuid.uuid) { raw in
                var position = offset
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = digits[Int(raw[index] >> 4)]
                    out[position + 1] = digits[Int(raw[index] & 0x0F)]
                    position += 2
                }
            }
        }
    }

    /// The 36 characters appended to a byte buffer.
    public static func append(_ uuid: UUID, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: count))
        out.withUnsafeMutableBufferPointer { write(uuid, into: $0, at: start) }
    }

    /// The text as a String.
    public static func string(_ uuid: UUID) -> String {
        String(unsafeUninitializedCapacity: count) { out in
            write(uuid, into: out, at: 0)
            return count
        }
    }

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in either letter case (as `write` and Postgres write it), parsed by hand
    /// without making a String: Foundation's `UUID(uuidString:)` goes through sscanf, about 0.6-0.8 µs, and the worker
    /// reads several ids per delivery. Nil for anything else.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == count else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var byte = 0
            var index = 0
            while index < count {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard bytes[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                    continue
                }
                guard let high = HexDigit.value(bytes[index]), let low = HexDigit.value(bytes[index + 1]) else {
                    return false
                }
                out[byte] = high << 4 | low
                byte += 1
                index += 2
            }
            return true
        }
        return valid ? UUID(uuid: value) : nil
    }

    /// `parse(_:)` of a text.
    public static func parse(_ text: some StringProtocol) -> UUID? {
        var text = String(text)
        return text.withUTF8 { parse($0) }
    }
}
