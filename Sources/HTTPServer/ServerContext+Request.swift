import CMicroHTTPD

/// The phases of a request, called from the access handler on the I/O thread that owns the connection.
extension ServerContext {
    /// First call, headers complete. Answers at once only when Content-Length is already over the limit
    /// (libmicrohttpd then skips the body and closes the connection). Otherwise leaves a state in `*con_cls`;
    /// with inline handlers, `marker` stands for "no body expected" so a GET costs no allocation.
    func begin(
        _ connection: OpaquePointer,
        _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
        marker: UnsafeMutableRawPointer
    ) -> MHD_Result {
        openRequests.add(1, ordering: .relaxed)
        let contentLength = Self.contentLength(of: connection)
        if let contentLength, contentLength > maxBodyBytes {
            return respond(tooLarge(), on: connection)
        }
        let chunked = MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") != nil
        if pool == nil, !chunked, (contentLength ?? 0) == 0 {
            requestContext.pointee = marker
            return .YES
        }
        let state = RequestState(reservingCapacity: chunked ? 0 : contentLength ?? 0)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        return .YES
    }

    /// A piece of the body. An oversized chunked body is dropped as it comes (never buffered) and answered
    /// with `tooLarge` once complete; past `discardLimit` the connection is closed without an answer.
    func receive(_ chunk: UnsafeRawBufferPointer, into state: RequestState) -> MHD_Result {
        if state.isTooLarge {
            state.discardedBytes += chunk.count
            return state.discardedBytes > Self.discardLimit ? .NO : .YES
        }
        if state.body.count + chunk.count > maxBodyBytes {
            state.isTooLarge = true
            state.discardedBytes = state.body.count + chunk.count
            state.body = []
            return .YES
        }
        state.body.append(contentsOf: chunk)
        return .YES
    }

    /// The request is complete. Inline: run the handler and queue its answer. With handler threads: the first
    /// time, suspend the connection and queue the request; once a handler thread has answered and resumed the
    /// connection, libmicrohttpd calls again and the answer is queued here.
    func complete(
        _ connection: OpaquePointer,
        url: UnsafePointer<CChar>?,
        method: UnsafePointer<CChar>?,
        state: RequestState
    ) -> MHD_Result {
        if let response = state.response {
            state.response = nil
            return respond(response, on: connection)
        }
        if state.isTooLarge {
            return respond(tooLarge(), on: connection)
        }
        let request = makeRequest(connection, url: url, method: method, body: state.takeBody())
        guard let pool else {
            return respond(handler(request), on: connection)
        }
        state.pendingRequest = request
        state.connection = connection
        MHD_suspend_connection(connection)
        if !pool.submit(state) {
            // Shutting down (stop() adds Connection: close): answer without running the handler.
            state.pendingRequest = nil
            state.response = HTTPResponse(status: 503)
            MHD_resume_connection(connection)
        }
        return .YES
    }

    /// Builds the handler's view of the request (inline mode's bodiless path calls this directly).
    func makeRequest(
        _ connection: OpaquePointer,
        url: UnsafePointer<CChar>?,
        method: UnsafePointer<CChar>?,
        body: [UInt8]
    ) -> HTTPRequest {
        HTTPRequest(
            method: method.map { String(cString: $0) } ?? "",
            path: url.map { String(cString: $0) } ?? "/",
            query: Self.values(of: connection, kind: .GET_ARGUMENT_KIND, collect: collectQueryArgument),
            headers: Self.values(of: connection, kind: .HEADER_KIND, collect: collectHeader),
            body: body
        )
    }

    /// Content-Length as a number (libmicrohttpd has already rejected malformed ones); nil when absent.
    private static func contentLength(of connection: OpaquePointer) -> Int? {
        guard let value = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") else {
            return nil
        }
        var result = 0
        var pointer = value
        while pointer.pointee == 0x20 || pointer.pointee == 0x09 {
            pointer += 1
        }
        while pointer.pointee >= 0x30, pointer.pointee <= 0x39 {
            let (shifted, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int(pointer.pointee - 0x30))
            if overflow1 || overflow2 {
                return Int.max
            }
            result = sum
            pointer += 1
        }
        return result
    }

    /// Collects one kind of connection value into a dictionary sized from a first counting pass.
    private static func values(
        of connection: OpaquePointer,
        kind: MHD_ValueKind,
        collect: MHD_KeyValueIteratorN
    ) -> [String: String] {
        let count = MHD_get_connection_values_n(connection, kind, nil, nil)
        guard count > 0 else {
            return [:]
        }
        var values = [String: String](minimumCapacity: Int(count))
        withUnsafeMutablePointer(to: &values) { pointer in
            _ = MHD_get_connection_values_n(connection, kind, collect, UnsafeMutableRawPointer(pointer))
        }
        return values
    }
}
