import CNghttp2

// nghttp2's callbacks for client sessions. Global functions on purpose: a closure written where an actor's
// isolation is inferred inherits it, and nghttp2 calling it on the loop thread would trap.
// `user_data` is the `ClientConnection`, unretained (it owns the session).

/// The callback table shared by every client session (nghttp2 copies it into each session).
final class ClientCallbacks: @unchecked Sendable {
    static let shared = ClientCallbacks()
    let pointer: OpaquePointer

    private init() {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            fatalError("nghttp2_session_callbacks_new: out of memory")
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks, heraldClientOnHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, heraldClientOnDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, heraldClientOnFrameReceived)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, heraldClientOnFrameSent)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, heraldClientOnFrameNotSent)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, heraldClientOnStreamClose)
        pointer = callbacks
    }
}

@inline(__always)
private func clientConnection(_ userData: UnsafeMutableRawPointer?) -> ClientConnection {
    Unmanaged<ClientConnection>.fromOpaque(userData!).takeUnretainedValue()
}

private let headersType = UInt8(NGHTTP2_HEADERS.rawValue)
private let endStreamFlag = UInt8(NGHTTP2_FLAG_END_STREAM.rawValue)
private let ackFlag = UInt8(NGHTTP2_FLAG_ACK.rawValue)
let neverIndexedFlag = UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)

func heraldClientOnHeader(
    session: OpaquePointer?, frame: UnsafePointer<nghttp2_frame>?,
    name: UnsafePointer<UInt8>?, nameLength: Int, value: UnsafePointer<UInt8>?, valueLength: Int,
    flags: UInt8, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, frame.pointee.hd.type == headersType, let name, nameLength > 0 else {
        return 0
    }
    let connection = clientConnection(userData)
    guard let stream = connection.stream(frame.pointee.hd.stream_id) else {
        return 0
    }
    if name[0] == UInt8(ascii: ":") {
        if nameLength == 7, decodeText(name, nameLength) == ":status" {
            stream.status = decodeInteger(value, valueLength)
        }
        return 0
    }
    if let kept = connection.core.keptResponseHeaders,
        !kept.contains(where: { $0.elementsEqual(UnsafeBufferPointer(start: name, count: nameLength)) })
    {
        return 0
    }
    if stream.headers.capacity == 0 {
        // One allocation for a typical answer's headers instead of one per doubling.
        stream.headers.reserveCapacity(4)
    }
    stream.headers.append(
        HTTP2Header(
            decodeText(name, nameLength), decodeText(value, valueLength),
            neverIndexed: flags & neverIndexedFlag != 0))
    return 0
}

func heraldClientOnDataChunk(
    session: OpaquePointer?, flags: UInt8, streamID: Int32, data: UnsafePointer<UInt8>?, length: Int,
    userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let data, let stream = clientConnection(userData).stream(streamID) else {
        return 0
    }
    stream.body.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
    return 0
}

func heraldClientOnFrameReceived(
    session: OpaquePointer?, frame: UnsafePointer<nghttp2_frame>?, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame else {
        return 0
    }
    let connection = clientConnection(userData)
    let header = frame.pointee.hd
    switch UInt32(header.type) {
    case NGHTTP2_HEADERS.rawValue, NGHTTP2_DATA.rawValue:
        if header.flags & endStreamFlag != 0 {
            connection.core.responseCompleted(on: connection, streamID: header.stream_id)
        } else if header.type == headersType, let stream = connection.stream(header.stream_id),
            let status = stream.status, status < 200
        {
            // An interim (1xx) response: the final one follows.
            stream.status = nil
            stream.headers.removeAll()
        }
    case NGHTTP2_SETTINGS.rawValue:
        if header.flags & ackFlag == 0 {
            connection.didReceiveSettings()
        }
    case NGHTTP2_GOAWAY.rawValue:
        connection.didReceiveGoAway(lastStreamID: frame.pointee.goaway.last_stream_id)
    case NGHTTP2_PING.rawValue:
        if header.flags & ackFlag != 0 {
            connection.didReceivePingAck()
        }
    default:
        break
    }
    return 0
}

func heraldClientOnFrameSent(
    session: OpaquePointer?, frame: UnsafePointer<nghttp2_frame>?, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, frame.pointee.hd.type == headersType else {
        return 0
    }
    clientConnection(userData).stream(frame.pointee.hd.stream_id)?.headersSent = true
    return 0
}

/// A request's HEADERS could not leave (typically: a GOAWAY arrived while it waited in nghttp2's queue).
func heraldClientOnFrameNotSent(
    session: OpaquePointer?, frame: UnsafePointer<nghttp2_frame>?, errorCode: Int32,
    userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, frame.pointee.hd.type == headersType else {
        return 0
    }
    let connection = clientConnection(userData)
    connection.core.streamNotSent(on: connection, streamID: frame.pointee.hd.stream_id)
    return 0
}

func heraldClientOnStreamClose(
    session: OpaquePointer?, streamID: Int32, errorCode: UInt32, userData: UnsafeMutableRawPointer?
) -> Int32 {
    let connection = clientConnection(userData)
    connection.core.streamClosed(on: connection, streamID: streamID, errorCode: errorCode)
    return 0
}

/// Hands nghttp2 the next piece of a request body.
func heraldClientReadBody(
    session: OpaquePointer?, streamID: Int32, buffer: UnsafeMutablePointer<UInt8>?, length: Int,
    dataFlags: UnsafeMutablePointer<UInt32>?, source: UnsafeMutablePointer<nghttp2_data_source>?,
    userData: UnsafeMutableRawPointer?
) -> Int {
    guard let buffer, let dataFlags, let stream = clientConnection(userData).stream(streamID) else {
        return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    }
    let body = stream.request.body
    let count = min(length, body.count - stream.bodyOffset)
    if count > 0 {
        body.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + stream.bodyOffset, count: count)
        }
        stream.bodyOffset += count
    }
    if stream.bodyOffset >= body.count {
        dataFlags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
    }
    return count
}
