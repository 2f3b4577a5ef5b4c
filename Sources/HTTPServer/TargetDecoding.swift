// How the server reads what libmicrohttpd leaves as sent: the request target (its unescape callback is the
// identity, see CMicroHTTPD.c) and the headers that frame a request.

struct FramingHeaders {
    var contentLengths: [String] = []
    var transferEncodings: [String] = []
    var hostCount = 0
}

/// The path of a raw (still percent-encoded) request target of `count` bytes, decoded; nil when it holds a
/// NUL or another control character (raw or escaped), an escaped `/`, a bad escape, or bytes that are not UTF-8.
func decodePath(_ pointer: UnsafePointer<CChar>, count: Int) -> String? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    var index = 0
    while index < count {
        var byte = UInt8(bitPattern: pointer[index])
        if byte == UInt8(ascii: "%") {
            guard index + 2 < count, let high = hexValue(pointer[index + 1]), let low = hexValue(pointer[index + 2])
            else {
                return nil
            }
            byte = high << 4 | low
            index += 3
            // An escaped `/` would become a separator only after decoding: a proxy that allows or
            // refuses by path would see another path than the router does.
            if byte == UInt8(ascii: "/") {
                return nil
            }
        } else {
            index += 1
        }
        if byte < 0x20 || byte == 0x7F {
            return nil
        }
        bytes.append(byte)
    }
    return String(validating: bytes, as: UTF8.self)
}

/// A query name or value as sent (libmicrohttpd leaves it encoded): `+` is a space, escapes decoded, bytes
/// that are not UTF-8 repaired.
func decodeQueryComponent(_ pointer: UnsafePointer<CChar>?, count: Int) -> String {
    guard let pointer, count > 0 else {
        return ""
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    var index = 0
    while index < count {
        let byte = UInt8(bitPattern: pointer[index])
        if byte == UInt8(ascii: "%"), index + 2 < count,
            let high = hexValue(pointer[index + 1]), let low = hexValue(pointer[index + 2])
        {
            bytes.append(high << 4 | low)
            index += 3
            continue
        }
        bytes.append(byte == UInt8(ascii: "+") ? 0x20 : byte)
        index += 1
    }
    return String(decoding: bytes, as: UTF8.self)
}

private func hexValue(_ character: CChar) -> UInt8? {
    let byte = UInt8(bitPattern: character)
    switch byte {
    case 0x30...0x39: return byte - 0x30
    case 0x41...0x46: return byte - 0x41 + 10
    case 0x61...0x66: return byte - 0x61 + 10
    default: return nil
    }
}
