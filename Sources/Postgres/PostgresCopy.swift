import CLibPQ
import Foundation

/// Rows in COPY's text format (tab-separated fields, `\N` for NULL, one row per line), built as
/// bytes so large batches (rendered payloads) cost one append per field and no per-character
/// string work. Only backslash, tab, newline and carriage return need escaping in this format.
public struct PostgresCopyRows: Sendable {
    public private(set) var bytes: [UInt8] = []
    public private(set) var count = 0
    private var fieldsInRow = 0

    public init(reservingBytes capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Appends one field of the current row; nil is SQL NULL.
    public mutating func field(_ value: (any PostgresEncodable)?) {
        if fieldsInRow > 0 { bytes.append(0x09) }
        fieldsInRow += 1
        guard let value else {
            bytes.append(contentsOf: [0x5C, 0x4E])  // \N
            return
        }
        var text = value.postgresText
        text.withUTF8 { utf8 in
            if !utf8.contains(where: Self.needsEscape) {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                switch byte {
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
                case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
                default: bytes.append(byte)
                }
            }
        }
    }

    /// Ends the current row.
    public mutating func endRow() {
        bytes.append(0x0A)
        count += 1
        fieldsInRow = 0
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == 0x5C || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

extension PostgresConnection {
    /// Runs `sql`, a `COPY ... FROM STDIN` in text format, sending `rows`; returns the rows copied.
    /// A failure (a bad value, a constraint) throws the server's error, as `query` does.
    @discardableResult
    public func copy(_ sql: String, rows: PostgresCopyRows) throws -> Int {
        guard let started = PQexec(handle, sql) else { throw clientFailure() }
        guard PQresultStatus(started) == PGRES_COPY_IN else {
            _ = try consume(started)  // the statement's error; a statement that is not a COPY FROM STDIN:
            throw PostgresError(code: .queryFailed, serverMessage: "not a COPY FROM STDIN statement")
        }
        PQclear(started)
        // Sent in pieces of at most 1 MiB, so a large batch never needs one huge libpq buffer.
        let chunk = 1 << 20
        var failure: PostgresError?
        rows.bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let length = min(chunk, buffer.count - offset)
                let sent = buffer.baseAddress!.advanced(by: offset).withMemoryRebound(to: CChar.self, capacity: length)
                {
                    PQputCopyData(handle, $0, Int32(length))
                }
                if sent != 1 {
                    failure = clientFailure()
                    return
                }
                offset += length
            }
        }
        let ended = PQputCopyEnd(handle, failure == nil ? nil : "client failed")
        if ended != 1 && failure == nil {
            failure = clientFailure()
        }
        // The COPY's own result, then the NULL that ends it.
        var copied = 0
        var firstError: (any Error)? = failure
        while let result = PQgetResult(handle) {
            do {
                let consumed = try consume(result)
                copied = consumed.affectedRows
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
        return copied
    }
}
