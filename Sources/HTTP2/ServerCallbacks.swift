import CNghttp2

// nghttp2's callbacks for server sessions: global functions (see ClientCallbacks.swift for why). `user_data` is
// the `ServerConnection`, unretained (it owns the session).

/// The callback table and session options shared by every server session (nghttp2 copies both).
final class ServerCallbacks: @unchecked Sendable {
    static let shared = ServerCallbacks()
    let pointer: OpaquePointer
    let option: OpaquePointer

    private init() {
        var callbacks: OpaquePointer?
        var option: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks,
            nghttp2_option_new(&option) == 0, let option
        else {
            fatalError("nghttp2: out of memory")
        }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, heraldServerOnBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, heraldServerOnHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, heraldServerOnDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, heraldServerOnFrameReceived)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, heraldServerOnStreamClose)
        // nghttp2 answers a burst of client RST_STREAMs (its "rapid reset" guard) with GOAWAY. Clients that reset
        // every answered stream (curl 7.88 does) are not attackers here: allow a million per second.
        nghttp2_option_set_stream_reset_rate_limit(option, 1_000_000, 1_000_000)
        pointer = callbacks
        self.option = option
    }
}

@inline(__always)
private func serverConnection(_ userData: UnsafeMutableRawPointer?) -> ServerConnection {
    Unmanaged<ServerConnection>.fromOpaque(userData!).takeUnretainedValue()
}

private let headersType = UInt8(NGHTTP2_HEADERS.rawValue)
private let endStreamFlag = UInt8(NGHTTP2_FLAG_END_STREAM.rawValue)

func heraldServerOnBeginHeaders(
    session: OpaquePointer?, frame: UnsafePointer<nghttp2_frame>?, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, frame.pointee.hd.type == headersType,
        frame.pointee.headers.cat.rawValue == NGHTTP2_HCAT_REQUEST.rawValue
    else {
        return 0
    }
    serverConnection(userData).beginStream(frame.pointee.hd.stream_id)
    return 0
}

func heraldServerOnHeader(
    session: OpaquePointer?, frame: UnsafePointer<nghttp2_frame>?,
    name: UnsafePointer<UInt8>?, nameLength: Int, value: UnsafePointer<UInt8>?, valueLength: Int,
    flags: UInt8, userData: UnsafeMutableRawPointer?
) -> Int32 {
    let connection = serverConnection(userData)
    guard let frame, frame.pointee.hd.type == headersType, let name, nameLength > 0,
        let stream = connection.stream(frame.pointee.hd.stream_id)
    else {
        return 0
    }
    guard name[0] == UInt8(ascii: ":") else {
        // nghttp2 already rejected upper-case names (HTTP/2 forbids them).
        if stream.headers.capacity == 0 {
            // One allocation for a typical request's headers (an APNs push has eight) instead of one per doubling.
            stream.headers.reserveCapacity(12)
        }
        stream.headers.append(
            connection.recentHeaders.header(
                at: stream.headers.count, name: name, nameLength: nameLength, value: value, valueLength: valueLength,
                neverIndexed: flags & neverIndexedFlag != 0))
        return 0
    }
    switch (nameLength, name[1]) {
    case (7, UInt8(ascii: "m")):
        stream.method = decodeText(value, valueLength)
    case (5, UInt8(ascii: "p")):
        stream.path = decodeText(value, valueLength)
    case (10, UInt8(ascii: "a")):
        stream.authority = decodeText(value, valueLength)
    case (7, UInt8(ascii: "s")):
        stream.scheme = decodeText(value, valueLength)
    default:
        break
    }
    return 0
}

func heraldServerOnDataChunk(
    session: OpaquePointer?, flags: UInt8, streamID: Int32, data: UnsafePointer<UInt8>?, length: Int,
    userData: UnsafeMutableRawPointer?
) -> Int32 {
    let connection = serverConnection(userData)
    guard let data, let stream = connection.stream(streamID), !stream.isTooLarge else {
        return 0
    }
    if stream.body.count + length > connection.context.configuration.maxBodyBytes {
        stream.isTooLarge = true
        stream.body = []
        return 0
    }
    stream.body.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
    return 0
}

func heraldServerOnFrameReceived(
    session: OpaquePointer?, frame: UnsafePointer<nghttp2_frame>?, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame else {
        return 0
    }
    let header = frame.pointee.hd
    if header.flags & endStreamFlag != 0,
        header.type == headersType || UInt32(header.type) == NGHTTP2_DATA.rawValue
    {
        serverConnection(userData).requestComplete(header.stream_id)
    }
    return 0
}

func heraldServerOnStreamClose(
    session: OpaquePointer?, streamID: Int32, errorCode: UInt32, userData: UnsafeMutableRawPointer?
) -> Int32 {
    serverConnection(userData).endStream(streamID)
    return 0
}

/// Hands nghttp2 the next piece of a response body.
func heraldServerReadBody(
    session: OpaquePointer?, streamID: Int32, buffer: UnsafeMutablePointer<UInt8>?, length: Int,
    dataFlags: UnsafeMutablePointer<UInt32>?, source: UnsafeMutablePointer<nghttp2_data_source>?,
    userData: UnsafeMutableRawPointer?
) -> Int {
    guard let buffer, let dataFlags, let stream = serverConnection(userData).stream(streamID) else {
        return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    }
    let count = min(length, stream.responseBody.count - stream.responseOffset)
    if count > 0 {
        stream.responseBody.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + stream.responseOffset, count: count)
        }
        stream.responseOffset += count
    }
    if stream.responseOffset >= stream.responseBody.count {
        dataFlags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
    }
    return count
}
