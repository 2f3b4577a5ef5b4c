import HeraldCore

/// `application/x-www-form-urlencoded` bodies and query strings: `name=value&...` with `+` for
/// space and `%XX` escapes.
enum FormURLEncoded {
    /// The pairs in order; nil if an escape is malformed or a value is not UTF-8.
    static func parse<S: Sequence>(_ bytes: S) -> [(name: String, value: String)]? where S.Element == UInt8 {
        var pairs: [(name: String, value: String)] = []
        for part in Array(bytes).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = part.firstIndex(of: UInt8(ascii: "="))
            let nameBytes = part[part.startIndex..<(equals ?? part.endIndex)]
            let valueBytes = equals.map { part[part.index(after: $0)...] } ?? []
            guard let name = decode(nameBytes), let value = decode(valueBytes) else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    /// The first value of `name` in a query string (`a=1&token=x`).
    static func value(of name: String, inQuery query: Substring) -> String? {
        parse(query.utf8)?.first { $0.name == name }?.value
    }

    /// Percent-decodes a path segment (no `+` rule there).
    static func decodePathSegment(_ segment: Substring) -> String? {
        decode(Array(segment.utf8)[...], plusIsSpace: false)
    }

    private static func decode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool = true) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = HexDigit.value(bytes[index + 1]), let low = HexDigit.value(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

}
