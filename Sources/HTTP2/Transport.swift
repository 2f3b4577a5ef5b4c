import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// The byte stream under an HTTP/2 session: a non-blocking TCP socket, optionally wrapped in TLS.
///
/// Loop-thread only. With TLS, a read may need the socket writable and a write may need it readable
/// (`SSL_ERROR_WANT_WRITE` / `WANT_READ`); both report `.wouldBlock`, and since sockets are registered for both
/// directions edge-triggered, the owner simply retries reading and writing on every event.
final class Transport {
    enum IOResult {
        case bytes(Int)
        case wouldBlock
        case closed
        case failed(String)
    }

    enum HandshakeResult {
        case done
        case wouldBlock
        case failed(String)
    }

    let fd: Int32
    private let ssl: OpaquePointer?
    private var isClosed = false
    private var failed = false

    var isTLS: Bool { ssl != nil }

    /// - Parameters:
    ///   - tls: nil for cleartext.
    ///   - peerHost: for a client: the host name or IP literal to verify the certificate against (and SNI).
    init(fd: Int32, tls: TLSContext?, isServer: Bool, peerHost: String? = nil) throws(HTTP2Error) {
        self.fd = fd
        guard let tls else {
            ssl = nil
            return
        }
        guard let ssl = SSL_new(tls.context) else {
            throw HTTP2Error(.tlsFailed, "SSL_new failed: \(drainOpenSSLErrors())")
        }
        self.ssl = ssl
        _ = SSL_set_fd(ssl, fd)
        if isServer {
            SSL_set_accept_state(ssl)
            return
        }
        SSL_set_connect_state(ssl)
        guard let peerHost else {
            return
        }
        let bare = peerHost.hasPrefix("[") ? String(peerHost.dropFirst().dropLast()) : peerHost
        if SocketAddress(numericHost: bare, port: 0) != nil {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), bare) == 1 else {
                throw HTTP2Error(.tlsFailed, "cannot verify against IP \(bare)")
            }
        } else {
            guard SSL_set1_host(ssl, bare) == 1 else {
                throw HTTP2Error(.tlsFailed, "cannot verify against host \(bare)")
            }
            _ = bare.withCString { name in
                SSL_ctrl(
                    ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                    UnsafeMutableRawPointer(mutating: name))
            }
        }
    }

    deinit {
        close()
    }

    /// Advances the TLS handshake (cleartext: done at once).
    func handshake() -> HandshakeResult {
        guard let ssl else {
            return .done
        }
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            return .done
        }
        let code = SSL_get_error(ssl, result)
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE {
            return .wouldBlock
        }
        failed = true
        let verify = SSL_get_verify_result(ssl)
        if verify != Int(X509_V_OK) {
            _ = drainOpenSSLErrors()
            return .failed("certificate verification failed: \(String(cString: X509_verify_cert_error_string(verify)))")
        }
        if code == SSL_ERROR_SYSCALL {
            let number = errno
            _ = drainOpenSSLErrors()
            return .failed(
                number == 0
                    ? "connection closed during the TLS handshake"
                    : "TLS handshake: \(String(cString: strerror(number)))")
        }
        return .failed("TLS handshake: \(drainOpenSSLErrors())")
    }

    /// True when ALPN settled on "h2" (always true for cleartext: prior knowledge).
    var negotiatedH2: Bool {
        guard let ssl else {
            return true
        }
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length == 2 else {
            return false
        }
        return data[0] == UInt8(ascii: "h") && data[1] == UInt8(ascii: "2")
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        guard let ssl else {
            // recv's 0 is the peer closing the connection.
            return Self.socketResult("recv", zeroIsClosed: true) { recv(fd, buffer.baseAddress, buffer.count, 0) }
        }
        return sslResult(SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count)))
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        guard !bytes.isEmpty else {
            return .bytes(0)
        }
        guard let ssl else {
            return Self.socketResult("send") { send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
        }
        return sslResult(SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count)))
    }

    /// A cleartext socket call's answer: the bytes it moved, or would-block, or its failure.
    private static func socketResult(_ operation: StaticString, zeroIsClosed: Bool = false, _ call: () -> Int)
        -> IOResult
    {
        do {
            let count = try systemCall(operation, call)
            return zeroIsClosed && count == 0 ? .closed : .bytes(count)
        } catch {
            return error.wouldBlock ? .wouldBlock : .failed("\(error)")
        }
    }

    /// An `SSL_read` or `SSL_write` answer: the bytes it moved when positive, else what `SSL_get_error` says.
    private func sslResult(_ count: Int32) -> IOResult {
        count > 0 ? .bytes(Int(count)) : sslFailure(count)
    }

    private func sslFailure(_ result: Int32) -> IOResult {
        guard let ssl else {
            return .failed("no TLS")
        }
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        case SSL_ERROR_SYSCALL:
            failed = true
            let number = errno
            _ = drainOpenSSLErrors()
            return number == 0 ? .closed : .failed(String(cString: strerror(number)))
        default:
            failed = true
            return .failed("TLS: \(drainOpenSSLErrors())")
        }
    }

    /// Sends close_notify when the session is healthy, then closes the socket. Idempotent.
    func close() {
        guard !isClosed else {
            return
        }
        isClosed = true
        if let ssl {
            if !failed {
                _ = SSL_shutdown(ssl)
            }
            _ = drainOpenSSLErrors()
            SSL_free(ssl)
        }
        _ = Glibc.close(fd)
    }
}
