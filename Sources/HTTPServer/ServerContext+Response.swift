import CMicroHTTPD

extension ServerContext {
    /// Queues `response` on `connection`; anything libmicrohttpd refuses (status, header) becomes an empty 500.
    func respond(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let keepsAlive = Self.connectionRecord(connection)?.requestKeepsAlive.load(ordering: .relaxed) ?? false
        guard (100...999).contains(response.status),
            let mhdResponse = makeResponse(response, keepsAlive: keepsAlive)
        else {
            return respondInternalError(on: connection)
        }
        defer { MHD_destroy_response(mhdResponse) }
        if MHD_queue_response(connection, UInt32(response.status), mhdResponse) == .YES {
            return .YES
        }
        return respondInternalError(on: connection)
    }

    /// The shared empty 500; if even that cannot be queued the connection is closed.
    func respondInternalError(on connection: OpaquePointer) -> MHD_Result {
        guard let internalErrorResponse else {
            return .NO
        }
        return MHD_queue_response(connection, 500, internalErrorResponse)
    }

    /// A libmicrohttpd response holding a copy of the body and every header, or nil if one is refused. When
    /// `keepsAlive` (the client lets the connection stay open) and neither the answer nor a stop closes it, it
    /// carries `Keep-Alive: timeout=N`, N a second under the idle timeout: a client that retires idle connections
    /// by it never sends on one the server is closing.
    func makeResponse(_ response: HTTPResponse, keepsAlive: Bool = false) -> OpaquePointer? {
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                .RESPMEM_MUST_COPY)
        }
        guard let created else {
            return nil
        }
        for (name, value) in response.headers where !Self.isContentLength(name) {
            if MHD_add_response_header(created, name, value) != .YES {
                MHD_destroy_response(created)
                return nil
            }
        }
        if isDraining.load(ordering: .relaxed) {
            _ = MHD_add_response_header(created, "Connection", "close")
        } else if keepsAlive, let keepAliveValue, !Self.closesConnection(response) {
            _ = MHD_add_response_header(created, "Keep-Alive", keepAliveValue)
        }
        return created
    }

    /// Whether the answer carries `Connection: close`.
    private static func closesConnection(_ response: HTTPResponse) -> Bool {
        response.headers.contains {
            $0.name.utf8.count == 10 && $0.name.lowercased() == "connection"
                && $0.value.lowercased().contains("close")
        }
    }

    private static func isContentLength(_ name: String) -> Bool {
        name.utf8.count == 14 && name.lowercased() == "content-length"
    }
}
