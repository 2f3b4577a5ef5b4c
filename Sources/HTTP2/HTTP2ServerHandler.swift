/// What an `HTTP2Server` calls for each complete request.
public protocol HTTP2ServerHandler: Sendable {
    /// Called on the server's loop thread once a request is complete (headers and body). Answer through
    /// `responder`, at once (cheapest: no thread hop) or later from any thread. Must not block: every connection
    /// of this loop waits while it runs.
    func handle(_ request: HTTP2ServerRequest, responder: HTTP2ServerResponder)
}
