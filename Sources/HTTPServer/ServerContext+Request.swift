import CMicroHTTPD
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The phases of a request, called from the access handler on the I/O thread that owns the connection.
extension ServerContext {
    /// First call, headers complete. Refuses here what must never reach a handler (a target with NUL or bad
    /// escapes, ambiguous framing, a missing Host, sizes over the limits) and answers at once when
    /// Content-Length is already over the body limit (libmicrohttpd then skips the body and closes the
    /// connection). Otherwise leaves a state in `*con_cls`; with inline handlers, `marker` stands for
    /// "no body expected" so a GET costs no allocation.
    func begin(
        _ connection: OpaquePointer,
        _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
        url: UnsafePointer<CChar>?,
        method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?,
        marker: UnsafeMutableRawPointer
    ) -> MHD_Result {
        openRequests.add(1, ordering: .relaxed)
        let record = Self.connectionRecord(connection)
        record?.requestKeepsAlive.store(Self.keepsAlive(connection, version: version), ordering: .relaxed)
        if let problem = Self.check(connection, url: url, version: version, limits: self) {
            return reject(problem, on: connection)
        }
        let contentLength = Self.contentLength(of: connection)
        let chunked = MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") != nil
        if let record, let refusal = record.refusal {
            // Refused once the body (if any) is read and dropped, so closing the connection after the answer
            // cannot reset it under a client still sending (a body over `discardLimit` is not waited for).
            if !chunked, (contentLength ?? 0) == 0 || (contentLength ?? 0) > Self.discardLimit {
                return reject(refusal, on: connection)
            }
            let state = RequestState(reservingCapacity: 0, bodyLimit: 0)
            state.refusal = refusal
            requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
            return .YES
        }
        var bodyLimit = maxBodyBytes
        // Only a body that may pass the limit asks for a larger one: other requests pay nothing for it.
        if let largerBodyLimit, let url, let method, chunked || (contentLength ?? 0) > maxBodyBytes {
            let head = RequestHead(method: String(cString: method), path: String(cString: url), connection: connection)
            bodyLimit = largerBodyLimit(head) ?? maxBodyBytes
        }
        if let contentLength, contentLength > bodyLimit {
            return reject(.bodyTooLarge, on: connection)
        }
        if pool == nil, !chunked, (contentLength ?? 0) == 0 {
            requestContext.pointee = marker
            return .YES
        }
        let state = RequestState(reservingCapacity: chunked ? 0 : contentLength ?? 0, bodyLimit: bodyLimit)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        return .YES
    }

    /// Answers a refused request with the owner's rendering (and `Retry-After` when the rejection has one) and
    /// closes the connection after it (a refused request's framing cannot be trusted, so nothing pipelined behind
    /// it is read).
    func reject(_ rejection: HTTPRejection, on connection: OpaquePointer) -> MHD_Result {
        var response = Self.render(rejection, with: self.rejection)
        response.headers.append(("Connection", "close"))
        return respond(response, on: connection)
    }

    /// The owner's rendering of a rejection, with `Retry-After` when the rejection has one.
    static func render(
        _ rejection: HTTPRejection,
        with rendering: @Sendable (HTTPRejection) -> HTTPResponse
    ) -> HTTPResponse {
        var response = rendering(rejection)
        if let seconds = rejection.retryAfterSeconds,
            !response.headers.contains(where: { $0.name.lowercased() == "retry-after" })
        {
            response.headers.append(("Retry-After", String(seconds)))
        }
        return response
    }

    /// Whether the client lets the connection stay open after this request (RFC 9112 9.3): HTTP/1.1 unless
    /// `Connection` lists `close`; HTTP/1.0 only when it lists `keep-alive`.
    private static func keepsAlive(_ connection: OpaquePointer, version: UnsafePointer<CChar>?) -> Bool {
        let header = MHD_lookup_connection_value(connection, .HEADER_KIND, "Connection").map { String(cString: $0) }
        let options = header?.lowercased().split(separator: ",").map { String($0).trimmingASCIIWhitespace() } ?? []
        if options.contains("close") {
            return false
        }
        guard let version, strcmp(version, "HTTP/1.0") != 0 else {
            return options.contains("keep-alive")
        }
        return true
    }

    /// The checks of `begin`, in order; nil when the request may go on.
    private static func check(
        _ connection: OpaquePointer,
        url: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?,
        limits: ServerContext
    ) -> HTTPRejection? {
        guard let url else {
            return .invalidTarget
        }
        let visible = strlen(url)
        // libmicrohttpd NUL-terminates the pieces of the request line in place: the target runs from `url` to
        // the byte before `version`. The URI-log callback saw it whole as a C string; if that string was
        // shorter, a raw NUL was on the request line.
        if let version {
            let onLine = url.distance(to: version) - 1
            if onLine > limits.maxTargetBytes {
                return .targetTooLong
            }
            if let record = connectionRecord(connection), record.targetLength.load(ordering: .relaxed) != onLine {
                return .invalidTarget
            }
        }
        if visible > limits.maxTargetBytes {
            return .targetTooLong
        }
        if CMicroHTTPD_request_header_size(connection) > limits.maxHeaderBytes {
            return .headersTooLarge
        }
        if decodePath(url, count: visible) == nil {
            return .invalidTarget
        }
        let headers = framingHeaders(of: connection)
        if headers.contentLengths.count > 1, Set(headers.contentLengths).count > 1 {
            return .ambiguousFraming
        }
        if !headers.transferEncodings.isEmpty {
            let codings = headers.transferEncodings.joined(separator: ",").lowercased()
                .split(separator: ",").map { String($0).trimmingASCIIWhitespace() }
            if !headers.contentLengths.isEmpty || codings != ["chunked"] {
                return .ambiguousFraming
            }
        }
        // HTTP/1.1 and later minor versions (libmicrohttpd serves HTTP/1.2 as 1.1) need exactly one Host.
        let needsHost = version.map { strncmp($0, "HTTP/1.", 7) == 0 && strcmp($0, "HTTP/1.0") != 0 } ?? false
        if needsHost, headers.hostCount != 1 {
            return .missingHost
        }
        return nil
    }

    /// A piece of the body. An oversized chunked body is dropped as it comes (never buffered) and answered
    /// with the `bodyTooLarge` rejection once complete, as is a refused request's body with its refusal; past
    /// `discardLimit` the connection is closed without an answer.
    func receive(_ chunk: UnsafeRawBufferPointer, into state: RequestState) -> MHD_Result {
        if state.isTooLarge || state.refusal != nil {
            state.discardedBytes += chunk.count
            return state.discardedBytes > Self.discardLimit ? .NO : .YES
        }
        if state.body.count + chunk.count > state.bodyLimit {
            state.isTooLarge = true
            state.discardedBytes = state.body.count + chunk.count
            state.body = []
            return .YES
        }
        state.body.append(contentsOf: chunk)
        return .YES
    }

    /// The request is complete. Inline (or answered at once): run the handler and queue its answer. With handler
    /// threads: the first time, suspend the connection and queue the request; once a handler thread has answered
    /// (or refused it as overloaded) and resumed the connection, libmicrohttpd calls again and the answer is
    /// queued here.
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
            return reject(.bodyTooLarge, on: connection)
        }
        if let refusal = state.refusal {
            return reject(refusal, on: connection)
        }
        let request = makeRequest(connection, url: url, method: method, body: state.takeBody())
        // Received whole: the read deadline stops counting until the answer is out.
        Self.connectionRecord(connection)?.readingSince.store(-1, ordering: .relaxed)
        guard let pool, !(answeredAtOnce?(request) ?? false) else {
            return respond(runInline(request), on: connection)
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

    /// Inline mode: runs the handler on this I/O thread, waiting here for a deferred answer.
    func runInline(_ request: HTTPRequest) -> HTTPResponse {
        let response = handler(request)
        guard let pending = response.deferred else {
            return response
        }
        let done = DispatchSemaphore(value: 0)
        let answer = Mutex<HTTPResponse?>(nil)
        pending.whenComplete { response in
            answer.withLock { $0 = response }
            done.signal()
        }
        // stop() completes it (503) if nobody else does.
        deferred.track(pending)
        done.wait()
        deferred.untrack(pending)
        return answer.withLock { $0 } ?? HTTPResponse(status: 500)
    }

    /// The socket context the connection notification stored.
    static func connectionRecord(_ connection: OpaquePointer) -> ConnectionRecord? {
        CMicroHTTPD_socket_context(connection).map { Unmanaged<ConnectionRecord>.fromOpaque($0).takeUnretainedValue() }
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
            path: url.flatMap { decodePath($0, count: strlen($0)) } ?? "/",
            // The first value of a name wins; a bare `?flag` maps to "".
            query: Self.values(of: connection, kind: .GET_ARGUMENT_KIND) { query, key, keySize, value, valueSize in
                let name = decodeQueryComponent(key, count: keySize)
                if query[name] == nil {
                    query[name] = decodeQueryComponent(value, count: valueSize)
                }
            },
            // Lowercased names; repeated names joined with ", ".
            headers: Self.values(of: connection, kind: .HEADER_KIND) { headers, key, keySize, value, valueSize in
                let name = lowercasedASCII(key, count: keySize)
                let text = decode(value, count: valueSize)
                if let existing = headers[name] {
                    headers[name] = existing + ", " + text
                } else {
                    headers[name] = text
                }
            },
            body: body,
            peer: Self.peer(of: connection)
        )
    }

    /// The connection's peer address, as libmicrohttpd knows it.
    static func peer(of connection: OpaquePointer) -> IPAddress? {
        var storage = (UInt64(0), UInt64(0))
        let length = withUnsafeMutableBytes(of: &storage) { raw in
            CMicroHTTPD_client_address(connection, raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return withUnsafeBytes(of: &storage) { IPAddress(bytes: Array($0.prefix(length))) }
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

    /// The headers that frame a request, counted as sent (libmicrohttpd's lookup only finds the first).
    private static func framingHeaders(of connection: OpaquePointer) -> FramingHeaders {
        var headers = FramingHeaders()
        forEachValue(of: connection, kind: .HEADER_KIND) { key, keySize, value, valueSize in
            switch lowercasedASCII(key, count: keySize) {
            case "content-length":
                headers.contentLengths.append(decode(value, count: valueSize).trimmingASCIIWhitespace())
            case "transfer-encoding":
                headers.transferEncodings.append(decode(value, count: valueSize))
            case "host":
                headers.hostCount += 1
            default:
                break
            }
        }
        return headers
    }

    /// Collects one kind of connection value into a dictionary sized from a first counting pass.
    private static func values(
        of connection: OpaquePointer,
        kind: MHD_ValueKind,
        add: (
            inout [String: String], _ key: UnsafePointer<CChar>, _ keySize: Int, _ value: UnsafePointer<CChar>?,
            _ valueSize: Int
        ) -> Void
    ) -> [String: String] {
        let count = MHD_get_connection_values_n(connection, kind, nil, nil)
        guard count > 0 else {
            return [:]
        }
        var values = [String: String](minimumCapacity: Int(count))
        forEachValue(of: connection, kind: kind) { add(&values, $0, $1, $2, $3) }
        return values
    }

    /// Calls `visit` with each key and value of `kind` on the connection, in the order sent.
    private static func forEachValue(
        of connection: OpaquePointer, kind: MHD_ValueKind, _ visit: ConnectionValueVisitor
    ) {
        withoutActuallyEscaping(visit) { visit in
            var visitor = visit
            withUnsafeMutablePointer(to: &visitor) { pointer in
                _ = MHD_get_connection_values_n(
                    connection, kind, visitConnectionValue, UnsafeMutableRawPointer(pointer))
            }
        }
    }
}
