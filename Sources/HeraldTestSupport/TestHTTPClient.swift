import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking HTTP/1.1 client for tests: one loopback connection per request, written by hand, so
/// any number of requests can run truly in parallel on their own threads.
public enum TestHTTPClient {
    public struct Response: Sendable {
        public let status: Int
        /// Header names lower-cased.
        public let headers: [String: String]
        public let body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public static func send(
        port: UInt16, method: String, path: String, headers: [(String, String)] = [],
        body: [UInt8] = [], timeoutSeconds: Int = 30
    ) throws -> Response {
        let fd = try connectLoopback(port: port, readTimeoutSeconds: timeoutSeconds)
        defer { close(fd) }

        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        try write(fd, Array(head.utf8) + body)
        return try parse(try readAll(fd))
    }

    /// A TCP connection to 127.0.0.1:`port` whose reads time out after `readTimeoutSeconds`, so a
    /// broken server fails a test instead of hanging it. The caller closes the descriptor.
    public static func connectLoopback(port: UInt16, readTimeoutSeconds: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: readTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect to port \(port): errno \(code)")
        }
        return fd
    }

    /// JSON convenience: encodes `json` (a string of JSON) with Content-Type application/json.
    public static func json(
        port: UInt16, method: String, path: String, token: String?, json: String?,
        headers: [(String, String)] = []
    ) throws -> Response {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        if json != nil { all.append(("Content-Type", "application/json")) }
        return try send(port: port, method: method, path: path, headers: all, body: Array((json ?? "").utf8))
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                // The server may answer (413) and close before reading everything: read what it said.
                if errno == EPIPE || errno == ECONNRESET { return }
                throw Failure(description: "send: errno \(errno)")
            }
            offset += written
        }
    }

    private static func readAll(_ fd: Int32) throws -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                data.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                return data
            } else if errno == EINTR {
                continue
            } else if errno == ECONNRESET && !data.isEmpty {
                return data
            } else {
                throw Failure(description: "recv: errno \(errno)")
            }
        }
    }

    private static func parse(_ data: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, data.count - 3)).first(where: { Array(data[$0..<$0 + 4]) == separator }) else {
            throw Failure(description: "no complete response (\(data.count) bytes)")
        }
        let lines = String(decoding: data[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        var body = Array(data[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init), body.count > length {
            body = Array(body.prefix(length))
        }
        return Response(status: status, headers: headers, body: body)
    }
}

/// Runs `count` blocking closures on their own threads at once and returns their results in order.
public func runInParallel<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let results = ResultSlots<T>(count: count)
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            start.wait()
            results.set(index, body(index))
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    // Release every thread together so the requests really overlap.
    for _ in 0..<count { start.signal() }
    group.wait()
    return results.values()
}

final class ResultSlots<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [T?]
    init(count: Int) { slots = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: T) { lock.withLock { slots[index] = value } }
    func values() -> [T] { lock.withLock { slots.map { $0! } } }
}
