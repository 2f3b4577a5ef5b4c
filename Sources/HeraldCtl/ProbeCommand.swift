import Foundation
import HTTP2

#if canImport(Glibc)
    import Glibc
#endif

/// `heraldctl probe URL [--timeout SECONDS]`: the health check of the container images, which have
/// no shell and no curl (deploy/Containerfile). Exit 0 when `URL` answers a 2xx status within the
/// timeout (default 3 s), 1 otherwise (refused, timed out, another status), 2 on bad usage. It needs
/// no database. Plain `http://` only: the intake and the worker serve their probes without TLS.
public enum ProbeCommand {

    struct Target: Equatable {
        let host: String
        let port: UInt16
        /// Path and query, as sent in the request line.
        let path: String
    }

    struct Failure: Error {
        let message: String
    }

    /// Runs `probe` with the words after it; prints one line, returns the exit status.
    public static func run(_ words: [String], output: (String) -> Void = { print($0) }) -> Int32 {
        let target: Target
        let timeout: Double
        do throws(UsageError) {
            let arguments = try Arguments(words, flagNames: [])
            try arguments.allowOnly(["timeout"])
            guard arguments.positional.count == 1 else { throw UsageError(message: "probe takes exactly one URL") }
            target = try parse(arguments.positional[0])
            timeout = try seconds(arguments.option("timeout"))
        } catch {
            FileHandle.standardError.write(Data("heraldctl: \(error.message)\n\n\(Help.text(for: ["probe"])!)\n".utf8))
            return 2
        }
        let started = ContinuousClock.now
        do throws(Failure) {
            let status = try fetchStatus(target, deadline: started + .milliseconds(Int64(timeout * 1000)))
            let elapsed = (ContinuousClock.now - started) / .milliseconds(1)
            guard (200...299).contains(status) else {
                FileHandle.standardError.write(Data("heraldctl: probe: \(target.display) answered \(status)\n".utf8))
                return 1
            }
            output("ok: \(target.display) answered \(status) in \(Int(elapsed)) ms")
            return 0
        } catch {
            FileHandle.standardError.write(Data("heraldctl: probe: \(target.display): \(error.message)\n".utf8))
            return 1
        }
    }

    static func seconds(_ text: String?) throws(UsageError) -> Double {
        guard let text else { return 3 }
        guard let value = Double(text), value > 0, value <= 300 else {
            throw UsageError(message: "--timeout must be a number of seconds in (0, 300]")
        }
        return value
    }

    /// `http://host[:port][/path]`, read by the repository's one URL parser (`UpstreamURL`); IPv6
    /// literals in brackets.
    static func parse(_ text: String) throws(UsageError) -> Target {
        let url: UpstreamURL
        do {
            url = try UpstreamURL(text)
        } catch {
            throw UsageError(message: "bad URL: \(error.message)")
        }
        guard !url.isTLS else {
            throw UsageError(message: "the URL must start with http:// (the probes are served without TLS)")
        }
        return Target(host: url.host, port: UInt16(url.port), path: url.path)
    }

    /// The status code of `GET target`, reading only the status line. Every step (resolve, connect,
    /// write, read) waits at most until `deadline`.
    static func fetchStatus(_ target: Target, deadline: ContinuousClock.Instant) throws(Failure) -> Int {
        let fd = try connect(target, deadline: deadline)
        defer { close(fd) }
        let hostHeader = target.host.contains(":") ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"
        let request = Array(
            "GET \(target.path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: heraldctl-probe\r\nConnection: close\r\n\r\n"
                .utf8)
        var sent = 0
        while sent < request.count {
            try wait(fd, for: Int16(POLLOUT), until: deadline, doing: "sending")
            let written = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(message: "send failed: \(describe(errno))")
            }
            sent += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            if let line = statusLine(received) { return try status(of: line) }
            guard received.count < 8192 else { throw Failure(message: "no HTTP status line in the answer") }
            try wait(fd, for: Int16(POLLIN), until: deadline, doing: "waiting for the answer")
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(message: "receive failed: \(describe(errno))")
            }
            if count == 0 { throw Failure(message: "the connection closed before an HTTP status line") }
            received += buffer[..<count]
        }
    }

    /// The first line, once a CRLF ends it.
    static func statusLine(_ bytes: [UInt8]) -> String? {
        guard let end = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        return String(decoding: bytes[..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func status(of line: String) throws(Failure) -> Int {
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]) else {
            throw Failure(message: "not an HTTP/1.x answer")
        }
        return code
    }

    /// A non-blocking TCP connection to the first address of `target.host` that accepts in time.
    static func connect(_ target: Target, deadline: ContinuousClock.Instant) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(target.host, String(target.port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw Failure(message: "cannot resolve \(target.host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(
                address.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                    | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastError = "socket: \(describe(errno))"; continue }
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = "connect: \(describe(errno))"
                close(fd)
                continue
            }
            do {
                try wait(fd, for: Int16(POLLOUT), until: deadline, doing: "connecting")
            } catch {
                close(fd)
                throw error
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            if code == 0 { return fd }
            lastError = "connect: \(describe(code))"
            close(fd)
        }
        throw Failure(message: lastError)
    }

    static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant, doing what: String)
        throws(Failure)
    {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw Failure(message: "timed out \(what)") }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(min(max(left / .milliseconds(1), 1), Double(Int32.max)))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw Failure(message: "poll failed: \(describe(errno))") }
        }
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}

extension ProbeCommand.Target {
    var display: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)" }
}
