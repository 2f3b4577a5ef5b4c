import HeraldCore

/// Binary data as a `bytea` parameter and column. Parameters travel as text (PostgresEncodable), so the
/// bytes go in Postgres' hex form (`\x0a1b...`), and a `bytea` column comes back in that form too
/// (`bytea_output = hex`, the default since Postgres 9.0).
public struct PostgresBytea: PostgresEncodable, Equatable {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    private static let digits = Array("0123456789abcdef".utf8)

    public var postgresText: String {
        var out: [UInt8] = []
        appendPostgresText(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func appendPostgresText(to out: inout [UInt8]) {
        out.reserveCapacity(out.count + 2 + bytes.count * 2)
        out.append(UInt8(ascii: "\\"))
        out.append(UInt8(ascii: "x"))
        for byte in bytes {
            out.append(Self.digits[Int(byte >> 4)])
            out.append(Self.digits[Int(byte & 0x0f)])
        }
    }

    /// The bytes of a `bytea` value in hex output form; nil when `text` is not one.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count >= 2, text.count % 2 == 0, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x")
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index < text.count {
            guard let high = HexDigit.value(text[index]), let low = HexDigit.value(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

}

extension PostgresRow {
    /// A `bytea` column's bytes.
    public func bytea(_ index: Int) throws -> [UInt8] {
        guard let value = cell(index) else { throw decodingError(index, "NULL") }
        guard let bytes = PostgresBytea.decode(value) else { throw decodingError(index, "bytea in hex form") }
        return bytes
    }
}
