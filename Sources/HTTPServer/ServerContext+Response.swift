import CMicroHTTPD

extension ServerContext {
    /// Queues `response` on `connection`; anything libmicrohttpd refuses (status, header) becomes an empty 500.
    func respond(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        guard (100...999).contains(response.status), let mhdResponse = makeResponse(response) else {
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

    /// A libmicrohttpd response holding a copy of the body and every header, or nil if one is refused.
    func makeResponse(_ response: HTTPResponse) -> OpaquePointer? {
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
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
        }
        return created
    }

    private static func isContentLength(_ name: String) -> Bool {
        name.utf8.count == 14 && name.lowercased() == "content-length"
    }
}
