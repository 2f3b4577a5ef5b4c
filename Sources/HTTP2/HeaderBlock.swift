import CNghttp2

/// Builds the `nghttp2_nv` array for a header block in one allocation, for the duration of a submit call
/// (nghttp2 copies names and values while submitting).
enum HeaderBlock {
    /// Calls `body` with the name/value pairs as `nghttp2_nv`s. Names are lowercased (HTTP/2 requires it).
    static func withNameValues<Result>(
        _ fields: [(name: String, value: String)],
        _ body: (UnsafePointer<nghttp2_nv>, Int) -> Result
    ) -> Result {
        var total = 0
        for field in fields {
            total += field.name.utf8.count + field.value.utf8.count
        }
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: max(total, 1))
        let pairs = UnsafeMutablePointer<nghttp2_nv>.allocate(capacity: max(fields.count, 1))
        defer {
            bytes.deallocate()
            pairs.deallocate()
        }
        var offset = 0
        for (index, field) in fields.enumerated() {
            let nameStart = offset
            for byte in field.name.utf8 {
                // ASCII upper case to lower case; everything else as is.
                bytes[offset] = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                offset += 1
            }
            let valueStart = offset
            offset += copy(field.value, to: bytes + offset)
            pairs[index] = nghttp2_nv(name: bytes + nameStart, value: bytes + valueStart,
                                      namelen: valueStart - nameStart, valuelen: offset - valueStart,
                                      flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        }
        return body(pairs, fields.count)
    }

    private static func copy(_ text: String, to target: UnsafeMutablePointer<UInt8>) -> Int {
        var text = text
        return text.withUTF8 { source in
            if let base = source.baseAddress {
                target.update(from: base, count: source.count)
            }
            return source.count
        }
    }
}

/// Text from bytes nghttp2 hands to a callback.
@inline(__always)
func decodeText(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> String {
    guard let pointer, count > 0 else {
        return ""
    }
    return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
}

/// The decimal number in `count` ASCII bytes (":status"), nil if not all digits.
@inline(__always)
func decodeInteger(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Int? {
    guard let pointer, count > 0, count < 10 else {
        return nil
    }
    var value = 0
    for index in 0..<count {
        let digit = Int(pointer[index]) - 48
        guard digit >= 0, digit <= 9 else {
            return nil
        }
        value = value * 10 + digit
    }
    return value
}
