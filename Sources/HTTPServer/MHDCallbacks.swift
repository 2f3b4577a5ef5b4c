import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#endif

// The C callbacks handed to libmicrohttpd. They are global functions in a file of their own on purpose: a closure
// written where an actor's isolation is inferred inherits it, and libmicrohttpd calling it from a worker thread
// then traps (SIGILL). Nothing here may capture context; everything arrives through the closure pointers.

/// MHD_AccessHandlerCallback: called after the headers, once per body piece, and once the request is complete.
func heraldHTTPAccessHandler(
    cls: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?,
    uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?,
    requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let requestContext else {
        return .NO
    }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    guard let stored = requestContext.pointee else {
        return context.begin(connection, requestContext, url: url, method: method, version: version, marker: cls)
    }
    let size = uploadDataSize.pointee
    if stored == cls {
        // Inline handlers, no body announced (so none can arrive): this is the final call.
        guard size == 0 else {
            return .NO
        }
        let request = context.makeRequest(connection, url: url, method: method, body: [])
        ServerContext.connectionRecord(connection)?.readingSince.store(-1, ordering: .relaxed)
        return context.respond(context.runInline(request), on: connection)
    }
    let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
    if size != 0 {
        uploadDataSize.pointee = 0
        return context.receive(UnsafeRawBufferPointer(start: uploadData, count: size), into: state)
    }
    return context.complete(connection, url: url, method: method, state: state)
}

/// MHD_RequestCompletedCallback: the answer went out (or the connection died); release the request's state.
func heraldHTTPRequestCompleted(
    cls: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    reason: MHD_RequestTerminationCode
) {
    guard let cls else {
        return
    }
    if let requestContext, let stored = requestContext.pointee {
        if stored != cls {
            Unmanaged<RequestState>.fromOpaque(stored).release()
        }
        requestContext.pointee = nil
    }
    if let connection {
        // The next request on this connection starts to count against the read deadline now.
        ServerContext.connectionRecord(connection)?.readingSince.store(monotonicNanoseconds(), ordering: .relaxed)
    }
    Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().openRequests.subtract(1, ordering: .relaxed)
}

/// MHD_NotifyConnectionCallback: a connection opened (its record becomes the socket context) or closed (called
/// before libmicrohttpd closes the socket; the record leaves the registry under its lock).
func heraldHTTPConnectionNotify(
    cls: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext else {
        return
    }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED
        var refusal: HTTPRejection?
        var countedAddress: ClientAddress?
        switch context.admission.admit(connection) {
        case .admitted(let address): countedAddress = address
        case .refused(let rejection): refusal = rejection
        }
        let record = ConnectionRecord(
            fd: CMicroHTTPD_connection_fd(connection), context: context,
            countedAddress: countedAddress, refusal: refusal)
        socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
        context.connections.withLock { $0[ObjectIdentifier(record)] = record }
    } else if let stored = socketContext.pointee {
        socketContext.pointee = nil
        let record = Unmanaged<ConnectionRecord>.fromOpaque(stored)
        let closed = record.takeUnretainedValue()
        context.connections.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(closed)) }
        if closed.refusal == nil {
            context.admission.release(closed.countedAddress)
        }
        record.release()
    }
}

/// MHD_OPTION_URI_LOG_CALLBACK: the request target as read, before libmicrohttpd cuts it into path and query.
/// Only its length is kept (see `ServerContext.check`); the initial `*con_cls` stays NULL.
func heraldHTTPTargetSeen(
    cls: UnsafeMutableRawPointer?,
    uri: UnsafePointer<CChar>?,
    connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    if let connection, let record = ServerContext.connectionRecord(connection) {
        record.targetLength.store(uri.map { strlen($0) } ?? 0, ordering: .relaxed)
    }
    return nil
}

/// CMicroHTTPD_error_hook: libmicrohttpd refused a request by itself; answer with the server's rendering of
/// that status (JSON) instead of its HTML page.
func heraldHTTPLibraryError(connection: OpaquePointer?, status: UInt32) -> OpaquePointer? {
    guard let connection, let record = ServerContext.connectionRecord(connection) else {
        return nil
    }
    let context = record.context
    var response = context.rejection(HTTPRejection.fromLibrary(status: Int(status)))
    response.status = Int(status)
    response.headers.append(("Connection", "close"))
    if status == 400 || status == 413,
        MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") != nil
    {
        // libmicrohttpd 0.9.75 sends the header block of a Content-Length refusal twice, which garbles the
        // answer. Write it here instead, whole, and shut the sending side: the library's own copy then fails
        // to go out and it closes the connection.
        writeDirectly(response, to: record.fd)
    }
    return context.makeResponse(response)
}

/// A complete HTTP/1.1 answer written straight to the socket (small: it fits the send buffer), then FIN.
private func writeDirectly(_ response: HTTPResponse, to fd: Int32) {
    var head = "HTTP/1.1 \(response.status) \(reasonPhrase(response.status))\r\n"
    for (name, value) in response.headers where name.lowercased() != "content-length" {
        head += "\(name): \(value)\r\n"
    }
    head += "Content-Length: \(response.body.count)\r\n\r\n"
    let bytes = Array(head.utf8) + response.body
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes {
            send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
        guard written > 0 else { break }
        offset += written
    }
    shutdown(fd, Int32(SHUT_WR))
}

private func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 400: "Bad Request"
    case 413: "Content Too Large"
    default: "Error"
    }
}

/// What `ServerContext.forEachValue` calls with each key and value of a connection: libmicrohttpd's bytes, valid
/// during the call.
typealias ConnectionValueVisitor = (
    _ key: UnsafePointer<CChar>, _ keySize: Int, _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> Void

/// MHD_KeyValueIteratorN handing each key and value to the `ConnectionValueVisitor` that `cls` points at.
func visitConnectionValue(
    cls: UnsafeMutableRawPointer?,
    kind: MHD_ValueKind,
    key: UnsafePointer<CChar>?,
    keySize: Int,
    value: UnsafePointer<CChar>?,
    valueSize: Int
) -> MHD_Result {
    guard let cls, let key else {
        return .YES
    }
    cls.assumingMemoryBound(to: ConnectionValueVisitor.self).pointee(key, keySize, value, valueSize)
    return .YES
}

/// UTF-8 text (invalid sequences repaired) from a C string of known length.
func decode(_ pointer: UnsafePointer<CChar>?, count: Int) -> String {
    guard let pointer, count > 0 else {
        return ""
    }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
}

/// A header name lowercased on the fly (names are ASCII tokens), without an intermediate String.
func lowercasedASCII(_ pointer: UnsafePointer<CChar>, count: Int) -> String {
    String(unsafeUninitializedCapacity: count) { buffer in
        for index in 0..<count {
            let byte = UInt8(bitPattern: pointer[index])
            buffer[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
        }
        return count
    }
}

/// pthread start routine of a handler thread; `argument` is a retained `HandlerPool`.
func heraldHTTPHandlerThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else {
        return nil
    }
    let pool = Unmanaged<HandlerPool>.fromOpaque(argument).takeRetainedValue()
    pool.runThread()
    return nil
}
