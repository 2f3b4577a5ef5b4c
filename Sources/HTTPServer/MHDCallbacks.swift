import CMicroHTTPD

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
        return context.begin(connection, requestContext, marker: cls)
    }
    let size = uploadDataSize.pointee
    if stored == cls {
        // Inline handlers, no body announced (so none can arrive): this is the final call.
        guard size == 0 else {
            return .NO
        }
        let request = context.makeRequest(connection, url: url, method: method, body: [])
        return context.respond(context.handler(request), on: connection)
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
    Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().openRequests.subtract(1, ordering: .relaxed)
}

/// MHD_KeyValueIteratorN for headers: lowercased name; repeated names joined with ", ".
func collectHeader(
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
    let headers = cls.assumingMemoryBound(to: [String: String].self)
    let name = lowercasedASCII(key, count: keySize)
    let text = decode(value, count: valueSize)
    if let existing = headers.pointee[name] {
        headers.pointee[name] = existing + ", " + text
    } else {
        headers.pointee[name] = text
    }
    return .YES
}

/// MHD_KeyValueIteratorN for query arguments: the first value of a name wins; a bare `?flag` maps to "".
func collectQueryArgument(
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
    let query = cls.assumingMemoryBound(to: [String: String].self)
    let name = decode(key, count: keySize)
    if query.pointee[name] == nil {
        query.pointee[name] = decode(value, count: valueSize)
    }
    return .YES
}

/// UTF-8 text (invalid sequences repaired) from a C string of known length.
private func decode(_ pointer: UnsafePointer<CChar>?, count: Int) -> String {
    guard let pointer, count > 0 else {
        return ""
    }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
}

/// A header name lowercased on the fly (names are ASCII tokens), without an intermediate String.
private func lowercasedASCII(_ pointer: UnsafePointer<CChar>, count: Int) -> String {
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
