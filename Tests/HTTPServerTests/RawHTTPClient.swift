import HeraldTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking HTTP/1.1 client over a loopback TCP socket, writing requests by hand (deterministic, and able to
/// send chunked or partial bodies). Reads time out after a few seconds so a broken server fails, not hangs.
final class RawHTTPClient {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let socket: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, readTimeoutSeconds: Int = 10) throws {
        // The descriptor is stored only once connected: a throwing class initializer still runs deinit, which
        // would otherwise close it a second time (and maybe another thread's socket by then).
        let descriptor: Int32
        do {
            descriptor = try TestHTTPClient.connectLoopback(port: port, readTimeoutSeconds: readTimeoutSeconds)
        } catch {
            throw Failure(description: "\(error)")
        }
        socket = descriptor
    }

    /// Connects from the loopback address `source` (127.0.0.2, say: a second client address on one machine).
    init(port: UInt16, source: String, readTimeoutSeconds: Int = 10) throws {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: readTimeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) }
        }
        let connected =
            bound == 0
            ? withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, size) }
            } : -1
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(description: "connect from \(source): errno \(code)")
        }
        socket = descriptor
    }

    deinit {
        close(socket)
    }

    /// Writes everything (MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE).
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: errno \(errno)")
            }
            offset += written
        }
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends a request with a Content-Length body (when given) and the usual headers.
    func request(
        _ method: String,
        _ target: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil
    ) throws -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
        }
        if let body {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        try send(Array(head.utf8) + (body ?? []))
        return try readResponse()
    }

    /// Reads one response framed by Content-Length (libmicrohttpd always sends it for buffer responses).
    func readResponse() throws -> Response {
        let headEnd = try readUntilHeadEnd()
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(head)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length {
            guard try fill() else {
                throw Failure(description: "connection closed inside a body")
            }
        }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }

    /// True when the server has closed the connection (read returns 0 or a reset) and nothing is pending.
    func isClosedByPeer() -> Bool {
        guard buffer.isEmpty else { return false }
        return (try? fill()) != true
    }

    private func readUntilHeadEnd() throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                for index in searchFrom...(buffer.count - 4)
                where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13
                    && buffer[index + 3] == 10
                {
                    return index
                }
                searchFrom = buffer.count - 3
            }
            guard try fill() else {
                throw Failure(description: "connection closed before a response")
            }
        }
    }

    /// Reads what is available; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return true
            }
            if count == 0 || errno == ECONNRESET {
                return false
            }
            if errno == EINTR { continue }
            throw Failure(description: "recv: errno \(errno)")
        }
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
