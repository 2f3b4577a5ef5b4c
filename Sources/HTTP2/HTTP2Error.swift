import HeraldCore

/// Why a request got no response. `code` is stable; `message` never contains secrets (headers and
/// bodies are not quoted).
public typealias HTTP2Error = CodedError<HTTP2ErrorCode>

/// The stable codes of `HTTP2Error`.
public enum HTTP2ErrorCode: String, FailureCode {
    /// TCP connect failed or timed out, or the URL is unusable.
    case connectFailed = "connect_failed"
    /// TLS handshake or ALPN failed (the peer does not speak h2, or its certificate is not trusted).
    case tlsFailed = "tls_failed"
    /// The peer sent GOAWAY before processing this stream: it was never handled, safe to resend.
    case goAway = "goaway"
    /// The peer reset the stream (RST_STREAM). REFUSED_STREAM means it was not processed.
    case streamReset = "stream_reset"
    /// No complete response within the request timeout.
    case timeout
    /// The connection closed or failed while the stream was open: the peer may have processed it.
    case connectionLost = "connection_lost"
    /// An HTTP/2 protocol error on the connection.
    case protocolError = "protocol_error"
    /// The client or server was shut down.
    case shutdown
    /// A configuration value is invalid (URL, CA file, certificate).
    case invalidConfiguration = "invalid_configuration"
}
