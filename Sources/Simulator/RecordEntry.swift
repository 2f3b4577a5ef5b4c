import Foundation
import HTTP2

/// What the request log keeps per answered request. The token, the headers (the credential's value
/// left out), the id and the body are packed into one byte array: a benchmark keeps every one of
/// 100,000 requests, and keeping the request's own arrays and strings (a header array with room for
/// twelve, the path, the id) cost twice the memory, whose first touch was a quarter of the
/// simulator's CPU in a drain. Unpacking, redaction and JSON happen when
/// someone reads the log.
struct RecordEntry: Sendable {
    var service: SimulatorService
    /// A broadcast or a channel request; nil for device pushes and FCM sends.
    var kind: SimulatorRecord.Kind?
    var status: Int
    var reason: String?
    var receivedAt: Double
    /// Which rule a refused request broke, when the reason does not say (a string literal: no allocation).
    var detail: String? = nil
    /// token, id (empty for none), header count, then each header, then the body; lengths as `Packing` writes them.
    private let packed: [UInt8]
    private var hasID: Bool

    init(
        service: SimulatorService, token: Substring, headers: [HTTP2Header], body: [UInt8], status: Int,
        reason: String?, receivedAt: Double, id: String?, detail: String? = nil, kind: SimulatorRecord.Kind? = nil
    ) {
        self.service = service
        self.kind = kind
        self.status = status
        self.reason = reason
        self.receivedAt = receivedAt
        self.detail = detail
        hasID = id != nil
        var size = token.utf8.count + (id?.utf8.count ?? 0) + body.count + 3 * Packing.lengthSize
        for header in headers {
            size += header.name.utf8.count + 1 + 2 * Packing.lengthSize
            if !Self.isCredential(header.name) { size += header.value.utf8.count }
        }
        var packed: [UInt8] = []
        packed.reserveCapacity(size)
        Packing.append(token.utf8, to: &packed)
        Packing.append((id ?? "").utf8, to: &packed)
        Packing.append(length: headers.count, to: &packed)
        for header in headers {
            Packing.append(header.name.utf8, to: &packed)
            Packing.append(Self.isCredential(header.name) ? "".utf8 : header.value.utf8, to: &packed)
            packed.append(header.neverIndexed ? 1 : 0)
        }
        packed.append(contentsOf: body)
        self.packed = packed
    }

    /// A fault answered an error instead: the request got no id.
    mutating func dropID() { hasID = false }

    /// The header whose value the log never keeps (see `SimulatorRecord.headers`).
    private static func isCredential(_ name: String) -> Bool { name == "authorization" }

    /// The token (compared by the control API's `?token=` filter).
    var token: String {
        var reader = Packing.Reader(packed)
        return reader.string()
    }

    var record: SimulatorRecord {
        var reader = Packing.Reader(packed)
        let token = reader.string()
        let id = reader.string()
        var headers: [HTTP2Header] = []
        let count = reader.length()
        headers.reserveCapacity(count)
        for _ in 0..<count {
            let name = reader.string()
            let value = reader.string()
            let neverIndexed = reader.byte() == 1
            headers.append(
                HTTP2Header(name, Self.isCredential(name) ? "<redacted>" : value, neverIndexed: neverIndexed))
        }
        return SimulatorRecord(
            service: service, kind: kind, token: token, headers: headers, body: reader.rest(), status: status,
            reason: reason,
            receivedAt: Date(timeIntervalSince1970: receivedAt), id: hasID ? id : nil, detail: detail)
    }
}

/// Length-prefixed byte strings in one array (`RecordEntry`): 4-byte little-endian lengths.
private enum Packing {
    static let lengthSize = 4

    static func append(length: Int, to out: inout [UInt8]) {
        let value = UInt32(truncatingIfNeeded: length)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    static func append(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
        append(length: bytes.count, to: &out)
        out.append(contentsOf: bytes)
    }

    struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func length() -> Int {
            var value = 0
            for index in 0..<Packing.lengthSize { value |= Int(bytes[offset + index]) << (8 * index) }
            offset += Packing.lengthSize
            return value
        }

        mutating func string() -> String {
            let count = length()
            defer { offset += count }
            return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
        }

        mutating func byte() -> UInt8 {
            defer { offset += 1 }
            return bytes[offset]
        }

        func rest() -> [UInt8] { Array(bytes[offset...]) }
    }
}
