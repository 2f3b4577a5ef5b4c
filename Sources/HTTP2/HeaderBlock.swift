import CNghttp2

#if canImport(Glibc)
    import Glibc
#endif

/// A connection's reusable scratch space for the `nghttp2_nv` array of one header block.
///
/// nghttp2 copies names and values while submitting, so the same storage serves every submit of the connection:
/// a request costs no allocation for its header block once the storage is large enough. Loop-thread only, like its
/// connection. Use: `begin` with the block's size, `append` every field, then `withNameValues` (nothing else may
/// use the block in between).
final class HeaderBlock {
    private var bytes: UnsafeMutablePointer<UInt8>
    private var byteCapacity: Int
    private var pairs: UnsafeMutablePointer<nghttp2_nv>
    private var pairCapacity: Int
    private var used = 0
    private var count = 0

    init(byteCapacity: Int = 2048, pairCapacity: Int = 16) {
        self.byteCapacity = byteCapacity
        self.pairCapacity = pairCapacity
        bytes = .allocate(capacity: byteCapacity)
        pairs = .allocate(capacity: pairCapacity)
    }

    deinit {
        bytes.deallocate()
        pairs.deallocate()
    }

    /// Starts a block of at most `fields` fields and `byteCount` bytes of names and values (an upper bound: grown
    /// here, never while appending, so the pointers already in `pairs` stay valid).
    func begin(fields: Int, byteCount: Int) {
        if byteCount > byteCapacity {
            bytes.deallocate()
            byteCapacity = max(byteCount, byteCapacity * 2)
            bytes = .allocate(capacity: byteCapacity)
        }
        if fields > pairCapacity {
            pairs.deallocate()
            pairCapacity = max(fields, pairCapacity * 2)
            pairs = .allocate(capacity: pairCapacity)
        }
        used = 0
        count = 0
    }

    /// Adds a field; the name is lowercased (HTTP/2 requires it), the value kept as is.
    func append(_ name: String, _ value: String, neverIndexed: Bool = false) {
        let nameStart = used
        copy(name, lowercase: true)
        let valueStart = used
        copy(value, lowercase: false)
        pairs[count] = nghttp2_nv(
            name: bytes + nameStart, value: bytes + valueStart,
            namelen: valueStart - nameStart, valuelen: used - valueStart,
            flags: UInt8(
                neverIndexed
                    ? NGHTTP2_NV_FLAG_NO_INDEX.rawValue
                    : NGHTTP2_NV_FLAG_NONE.rawValue))
        count += 1
    }

    /// Adds a field whose value is a non-negative decimal number (content-length), without making a String.
    func append(_ name: String, decimal value: Int) {
        let nameStart = used
        copy(name, lowercase: true)
        let valueStart = used
        precondition(used + Self.decimalBytes <= byteCapacity && value >= 0, "header block overflow")
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var remaining = value
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            bytes[valueStart + offset] = UInt8(truncatingIfNeeded: 0x30 + remaining % 10)
            remaining /= 10
        }
        used += digits
        pairs[count] = nghttp2_nv(
            name: bytes + nameStart, value: bytes + valueStart,
            namelen: valueStart - nameStart, valuelen: digits,
            flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        count += 1
    }

    /// Calls `body` with the fields appended since `begin`.
    func withNameValues<Result>(_ body: (UnsafePointer<nghttp2_nv>, Int) -> Result) -> Result {
        body(pairs, count)
    }

    /// The most bytes `append(_:decimal:)` writes for a value (Int.max has 19 digits).
    static let decimalBytes = 20

    private func copy(_ text: String, lowercase: Bool) {
        // A wrong `begin` would write past the storage: checked, it costs a compare.
        precondition(used + text.utf8.count <= byteCapacity, "header block overflow")
        let target = bytes + used
        let copied = text.utf8.withContiguousStorageIfAvailable { source -> Int in
            guard let base = source.baseAddress else {
                return 0
            }
            if lowercase {
                for index in 0..<source.count {
                    let byte = base[index]
                    // ASCII upper case to lower case; everything else as is.
                    target[index] = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                }
            } else {
                target.update(from: base, count: source.count)
            }
            return source.count
        }
        if let copied {
            used += copied
            return
        }
        for byte in text.utf8 {
            bytes[used] = lowercase && byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            used += 1
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

/// The headers of a connection's previous request, by position, so a header that repeats (a client's
/// authorization, topic, push type; names longer than 15 bytes) reuses the previous request's Strings instead of
/// allocating new ones. Loop-thread only, like its connection.
///
/// A header is reused only when its name and value bytes are exactly the previous ones at that position;
/// otherwise it is decoded and replaces the entry. Clients send their headers in the same order every time,
/// so nearly every repeating header hits.
final class RecentHeaders {
    /// Positions remembered: more than an APNs push carries.
    static let capacity = 16
    private var entries: [HTTP2Header] = []

    func header(
        at index: Int, name: UnsafePointer<UInt8>, nameLength: Int, value: UnsafePointer<UInt8>?,
        valueLength: Int, neverIndexed: Bool
    ) -> HTTP2Header {
        if index < entries.count {
            let previous = entries[index]
            if Self.equal(previous.name, name, nameLength), Self.equal(previous.value, value, valueLength) {
                return HTTP2Header(previous.name, previous.value, neverIndexed: neverIndexed)
            }
        }
        let header = HTTP2Header(
            decodeText(name, nameLength), decodeText(value, valueLength),
            neverIndexed: neverIndexed)
        if index < entries.count {
            entries[index] = header
        } else if index == entries.count, index < Self.capacity {
            entries.append(header)
        }
        return header
    }

    /// True when `text`'s UTF-8 is exactly the `count` bytes at `bytes`.
    private static func equal(_ text: String, _ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == count else {
            return false
        }
        guard count > 0 else {
            return true
        }
        guard let bytes else {
            return false
        }
        return utf8.withContiguousStorageIfAvailable { stored in
            memcmp(stored.baseAddress!, bytes, count) == 0
        } ?? utf8.elementsEqual(UnsafeBufferPointer(start: bytes, count: count))
    }
}
