import COpenSSL
import Foundation
import HeraldTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A TLS client that chooses its own ALPN list (or sends none), then speaks HTTP/2 by hand: the connection
/// preface, one GET on stream 1, and the frames until that stream's response headers. Our `HTTP2Client` always
/// offers "h2", so the server's other cases need this probe; it is deliberately small (blocking, one stream,
/// literal HPACK without Huffman) and trusts the test CA and verifies the server's certificate for 127.0.0.1.
struct ALPNProbe {
    /// What the handshake and the exchange gave.
    struct Outcome {
        /// The protocol ALPN settled on; nil when none was negotiated.
        var negotiated: String?
        /// The `:status` of the answer on stream 1, when one came.
        var status: Int?
        /// Set when the handshake failed: OpenSSL's reason (for example "tlsv1 alert no application protocol").
        var handshakeError: String?
    }

    struct ProbeError: Error, CustomStringConvertible {
        var description: String
    }

    /// `protocols` nil: no ALPN extension at all (what aioapns and pushy send).
    static func run(port: Int, protocols: [String]?, path: String = "/probe") throws -> Outcome {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw ProbeError(description: "SSL_CTX_new") }
        defer { SSL_CTX_free(context) }
        guard SSL_CTX_load_verify_locations(context, TestCredentials.shared.caFile, nil) == 1 else {
            throw ProbeError(description: "cannot load the test CA")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let protocols {
            var wire: [UInt8] = []
            for name in protocols {
                wire.append(UInt8(name.utf8.count))
                wire += Array(name.utf8)
            }
            guard SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0 else {
                throw ProbeError(description: "SSL_CTX_set_alpn_protos")
            }
        }

        let fd = try connect(port: port)
        defer { close(fd) }
        guard let ssl = SSL_new(context) else { throw ProbeError(description: "SSL_new") }
        defer { SSL_free(ssl) }
        _ = SSL_set_fd(ssl, fd)
        _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1")
        ERR_clear_error()
        guard SSL_connect(ssl) == 1 else {
            return Outcome(negotiated: nil, status: nil, handshakeError: errorQueue())
        }
        var selected: UnsafePointer<UInt8>?
        var selectedLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &selectedLength)
        let negotiated = selected.map {
            String(
                decoding: UnsafeBufferPointer(start: $0, count: Int(selectedLength)),
                as: UTF8.self)
        }

        // Preface, empty SETTINGS, then HEADERS (END_STREAM | END_HEADERS) for GET `path` on stream 1.
        var output = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        output += frame(type: 0x4, flags: 0, stream: 0, payload: [])
        var block: [UInt8] = [0x82, 0x87]  // :method GET, :scheme https (static table 2 and 7)
        block += literal(nameIndex: 4, value: path)  // :path
        block += literal(nameIndex: 1, value: "127.0.0.1")  // :authority
        output += frame(type: 0x1, flags: 0x5, stream: 1, payload: block)
        try write(ssl, output)

        var input: [UInt8] = []
        while true {
            while input.count >= 9 {
                let length = Int(input[0]) << 16 | Int(input[1]) << 8 | Int(input[2])
                guard input.count >= 9 + length else { break }
                let type = input[3]
                let flags = input[4]
                let stream = (Int(input[5]) & 0x7F) << 24 | Int(input[6]) << 16 | Int(input[7]) << 8 | Int(input[8])
                let payload = Array(input[9..<(9 + length)])
                input.removeFirst(9 + length)
                if type == 0x4 && flags & 0x1 == 0 {
                    try write(ssl, frame(type: 0x4, flags: 0x1, stream: 0, payload: []))  // SETTINGS ACK
                }
                if type == 0x7 {
                    throw ProbeError(description: "GOAWAY: \(String(decoding: payload.dropFirst(8), as: UTF8.self))")
                }
                if type == 0x1 && stream == 1 {
                    return Outcome(
                        negotiated: negotiated, status: try status(inHeaderBlock: payload, flags: flags),
                        handshakeError: nil)
                }
            }
            var buffer = [UInt8](repeating: 0, count: 16_384)
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            guard count > 0 else {
                throw ProbeError(description: "the connection ended before an answer (\(errorQueue() ?? "closed"))")
            }
            input += buffer[0..<Int(count)]
        }
    }

    private static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProbeError(description: "socket") }
        // A stuck server fails the test after 10 s instead of hanging it.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw ProbeError(description: "connect: \(String(cString: strerror(errno)))")
        }
        return fd
    }

    private static func write(_ ssl: OpaquePointer, _ bytes: [UInt8]) throws {
        guard SSL_write(ssl, bytes, Int32(bytes.count)) == Int32(bytes.count) else {
            throw ProbeError(description: "SSL_write failed (\(errorQueue() ?? "?"))")
        }
    }

    private static func frame(type: UInt8, flags: UInt8, stream: Int, payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [
            UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
            UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF),
            UInt8(stream & 0xFF),
        ] + payload
    }

    /// A literal header field without indexing, name from the static table, value without Huffman.
    private static func literal(nameIndex: UInt8, value: String) -> [UInt8] {
        precondition(nameIndex < 15 && value.utf8.count < 127)
        return [nameIndex, UInt8(value.utf8.count)] + Array(value.utf8)
    }

    /// `:status` is the first field of a response; nghttp2 sends the common ones as static-table indexes.
    private static func status(inHeaderBlock payload: [UInt8], flags: UInt8) throws -> Int {
        var block = payload
        if flags & 0x8 != 0, let padding = block.first { block = Array(block.dropFirst().dropLast(Int(padding))) }
        if flags & 0x20 != 0 { block = Array(block.dropFirst(5)) }
        let table: [UInt8: Int] = [0x88: 200, 0x89: 204, 0x8A: 206, 0x8B: 304, 0x8C: 400, 0x8D: 404, 0x8E: 500]
        guard let first = block.first, let status = table[first] else {
            throw ProbeError(description: "a :status this probe cannot decode (first byte \(block.first ?? 0))")
        }
        return status
    }

    /// OpenSSL's queued error reasons, joined; nil when the queue is empty.
    private static func errorQueue() -> String? {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }
}
