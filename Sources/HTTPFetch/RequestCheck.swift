import CCurl

/// What is checked before a request reaches the fetcher's thread, so a bad one fails at once and nothing of
/// it is sent: the URL parses (libcurl's own parser, the one the transfer uses), is `https` and names a host;
/// header names are tokens and values hold no line breaks (which would smuggle headers over HTTP/1.1); limits
/// are positive.
enum RequestCheck {
    static func problem(_ request: HTTPFetchRequest) -> HTTPFetchError? {
        if let problem = urlProblem(request.url) {
            return problem
        }
        for header in request.headers {
            guard isToken(header.name) else {
                return HTTPFetchError(.invalidRequest, "a header name is not an HTTP token")
            }
            guard !header.value.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }) else {
                return HTTPFetchError(.invalidRequest, "a header value contains a line break or NUL")
            }
        }
        guard request.timeout > .zero, request.connectTimeout > .zero else {
            return HTTPFetchError(.invalidRequest, "timeouts must be positive")
        }
        guard request.maxResponseBytes >= 0, request.followRedirects >= 0 else {
            return HTTPFetchError(.invalidRequest, "maxResponseBytes and followRedirects must not be negative")
        }
        guard request.method == .post || request.body.isEmpty else {
            return HTTPFetchError(.invalidRequest, "a GET has no body")
        }
        return nil
    }

    private static func urlProblem(_ url: String) -> HTTPFetchError? {
        guard let handle = curl_url() else {
            return HTTPFetchError(.invalidURL, "the URL could not be parsed (out of memory)")
        }
        defer { curl_url_cleanup(handle) }
        // Any scheme parses here, so that ftp:// is told apart from a malformed URL.
        guard curl_url_set(handle, CURLUPART_URL, url, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK else {
            return HTTPFetchError(.invalidURL, "the URL does not parse as an absolute URL")
        }
        guard let scheme = part(handle, CURLUPART_SCHEME), scheme.lowercased() == "https" else {
            return HTTPFetchError(.schemeNotAllowed, "only https URLs are fetched")
        }
        guard let host = part(handle, CURLUPART_HOST), !host.isEmpty else {
            return HTTPFetchError(.invalidURL, "the URL has no host")
        }
        return nil
    }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &value, 0) == CURLUE_OK, let value else {
            return nil
        }
        defer { curl_free(value) }
        return String(cString: value)
    }

    /// RFC 9110 token characters.
    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}
