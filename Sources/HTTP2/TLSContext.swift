import COpenSSL
import Synchronization

/// An OpenSSL `SSL_CTX` for h2: TLS 1.2 or later, ALPN "h2", partial writes (our output buffer keeps the rest).
///
/// A client context verifies the peer against the system's CAs plus an optional extra CA file; a server context
/// holds the certificate chain and key and selects "h2" from the client's ALPN list (a client that sends no ALPN
/// list gets HTTP/2 with prior knowledge, see `ServerConnection`). Immutable once made, so
/// connections on any loop may share it (`SSL_new` on a shared context is thread-safe).
final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer

    private init(method: OpaquePointer) throws(HTTP2Error) {
        guard let context = SSL_CTX_new(method) else {
            throw HTTP2Error(.invalidConfiguration, "SSL_CTX_new failed: \(drainOpenSSLErrors())")
        }
        self.context = context
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        _ = SSL_CTX_set_options(context, OpenSSLConstant.optionNoCompression | OpenSSLConstant.optionNoRenegotiation)
        let mode = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
        _ = SSL_CTX_ctrl(context, SSL_CTRL_MODE, Int(mode), nil)
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// The client contexts made so far, by CA file ("" for none).
    private static let clients = Mutex<[String: TLSContext]>([:])

    /// The process's client context trusting the system CAs and, if given, `caFile` (PEM): made once per CA file
    /// and shared by every client (APNs' two environments, FCM and its token endpoint). Making one costs about
    /// 20 ms of CPU, nearly all of it OpenSSL decoding each certificate of the system store. A CA file changed
    /// on disk is read at the next start, as it was when each long-lived client read its own.
    static func client(caFile: String?) throws(HTTP2Error) -> TLSContext {
        try clients.withLock { (clients) throws(HTTP2Error) -> TLSContext in
            if let made = clients[caFile ?? ""] { return made }
            let made = try makeClient(caFile: caFile)
            clients[caFile ?? ""] = made
            return made
        }
    }

    private static func makeClient(caFile: String?) throws(HTTP2Error) -> TLSContext {
        let tls = try TLSContext(method: TLS_client_method())
        // The system store may be missing in slim images; the extra CA file alone must then suffice.
        _ = SSL_CTX_set_default_verify_paths(tls.context)
        if let caFile {
            guard SSL_CTX_load_verify_locations(tls.context, caFile, nil) == 1 else {
                throw HTTP2Error(.invalidConfiguration, "cannot load CA file \(caFile): \(drainOpenSSLErrors())")
            }
        }
        SSL_CTX_set_verify(tls.context, SSL_VERIFY_PEER, nil)
        let protocols: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        // Returns 0 on success (unlike most of OpenSSL).
        guard SSL_CTX_set_alpn_protos(tls.context, protocols, UInt32(protocols.count)) == 0 else {
            throw HTTP2Error(.invalidConfiguration, "cannot set ALPN: \(drainOpenSSLErrors())")
        }
        return tls
    }

    /// A server context with a PEM certificate chain and key, selecting ALPN "h2" (OpenSSL calls the selection
    /// only when the client sent an ALPN list).
    static func server(certificateFile: String, keyFile: String) throws(HTTP2Error) -> TLSContext {
        let tls = try TLSContext(method: TLS_server_method())
        _ = SSL_CTX_set_options(tls.context, OpenSSLConstant.optionCipherServerPreference)
        guard SSL_CTX_use_certificate_chain_file(tls.context, certificateFile) == 1 else {
            throw HTTP2Error(
                .invalidConfiguration,
                "cannot load certificate \(certificateFile): \(drainOpenSSLErrors())")
        }
        guard SSL_CTX_use_PrivateKey_file(tls.context, keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw HTTP2Error(.invalidConfiguration, "cannot load key \(keyFile): \(drainOpenSSLErrors())")
        }
        guard SSL_CTX_check_private_key(tls.context) == 1 else {
            throw HTTP2Error(.invalidConfiguration, "the key does not match the certificate")
        }
        SSL_CTX_set_alpn_select_cb(tls.context, heraldSelectH2, nil)
        return tls
    }
}

/// ALPN selection on the server: "h2" if the client offers it, else a fatal no_application_protocol alert
/// (RFC 7301 3.2). A client that lists only other protocols (say "http/1.1") means to speak them, and we speak
/// only HTTP/2: failing the handshake says so at once, where accepting it would answer its first request with
/// HTTP/2 frames it cannot read. A client that lists none is not asked (see `ServerConnection`).
/// A global function on purpose: OpenSSL calls it from the loop thread, so it must carry no actor isolation.
private func heraldSelectH2(
    ssl: OpaquePointer?,
    selected: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    selectedLength: UnsafeMutablePointer<UInt8>?,
    offered: UnsafePointer<UInt8>?,
    offeredLength: UInt32,
    argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let offered, let selected, let selectedLength else {
        return SSL_TLSEXT_ERR_ALERT_FATAL
    }
    var index = 0
    let end = Int(offeredLength)
    while index < end {
        let length = Int(offered[index])
        if length == 2, index + 2 < end, offered[index + 1] == UInt8(ascii: "h"),
            offered[index + 2] == UInt8(ascii: "2")
        {
            selected.pointee = offered + index + 1
            selectedLength.pointee = 2
            return SSL_TLSEXT_ERR_OK
        }
        index += 1 + length
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL
}
