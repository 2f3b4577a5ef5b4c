import CCurl

/// One request on its way: its easy handle, and what the response has gathered so far.
///
/// Made on the caller's thread, then handed to the fetcher's thread, which alone touches it from then on (the
/// libcurl callbacks run there too, inside `curl_multi_perform`): hence `@unchecked Sendable`.
final class FetchTransfer: @unchecked Sendable {
    typealias Completion = @Sendable (Result<HTTPFetchResponse, HTTPFetchError>) -> Void

    let request: HTTPFetchRequest
    let settings: TransferSettings
    private let completion: Completion

    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?

    // Filled by the callbacks (TransferCallbacks.swift).
    var body: [UInt8] = []
    var headers: [HTTPFetchHeader] = []
    var headerBytes = 0
    /// The body reached `maxResponseBytes` under `.truncate` and the rest was refused.
    var truncated = false
    /// The body (under `.fail`) or the headers went over their limit.
    var oversize = false
    /// The open-socket check refused an address of this transfer.
    var refusedAddress = false

    init(request: HTTPFetchRequest, settings: TransferSettings, completion: @escaping Completion) {
        self.request = request
        self.settings = settings
        self.completion = completion
    }

    deinit {
        close()
    }

    func complete(_ result: Result<HTTPFetchResponse, HTTPFetchError>) {
        completion(result)
    }

    /// Creates and configures the easy handle; returns it, or the error of the option that failed.
    func open() -> Result<UnsafeMutableRawPointer, HTTPFetchError> {
        guard let handle = curl_easy_init() else {
            return .failure(HTTPFetchError(.network, "libcurl could not create a transfer (out of memory)"))
        }
        easy = handle
        let code = configure(handle)
        guard code == CURLE_OK else {
            close()
            return .failure(HTTPFetchError(curl: code))
        }
        return .success(handle)
    }

    /// Frees the easy handle and header list (after the handle left the multi handle).
    func close() {
        if let easy {
            curl_easy_cleanup(easy)
            self.easy = nil
        }
        if let headerList {
            curl_slist_free_all(headerList)
            self.headerList = nil
        }
    }

    /// What the finished transfer amounts to, given libcurl's result. Call before `close()`.
    func result(_ code: CURLcode) -> Result<HTTPFetchResponse, HTTPFetchError> {
        if oversize {
            return .failure(HTTPFetchError(.tooLarge, "the response is larger than the limit"))
        }
        guard code == CURLE_OK || (code == CURLE_WRITE_ERROR && truncated) else {
            if refusedAddress && code == CURLE_COULDNT_CONNECT {
                return .failure(HTTPFetchError(.addressRefused, "the host's addresses are not allowed"))
            }
            return .failure(HTTPFetchError(curl: code))
        }
        var status = 0
        if let easy {
            _ = CCurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        }
        return .success(HTTPFetchResponse(status: status, headers: headers, body: body, truncated: truncated))
    }

    // MARK: Options

    private func configure(_ handle: UnsafeMutableRawPointer) -> CURLcode {
        let context = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        var failure = CURLE_OK
        func apply(_ code: CURLcode) {
            if failure == CURLE_OK { failure = code }
        }
        func apply(_ option: CURLoption, _ value: Int) {
            apply(CCurl_easy_setopt_long(handle, option, value))
        }
        func apply(_ option: CURLoption, _ value: String) {
            apply(value.withCString { CCurl_easy_setopt_pointer(handle, option, $0) })  // libcurl copies strings
        }

        apply(CURLOPT_URL, request.url)
        // https only, for the first URL and every redirect.
        apply(CURLOPT_PROTOCOLS_STR, "https")
        apply(CURLOPT_REDIR_PROTOCOLS_STR, "https")
        apply(CURLOPT_FOLLOWLOCATION, request.followRedirects > 0 ? 1 : 0)
        apply(CURLOPT_MAXREDIRS, request.followRedirects)
        apply(CURLOPT_SSL_VERIFYPEER, 1)
        apply(CURLOPT_SSL_VERIFYHOST, 2)
        if let trust = settings.trust {
            apply(CURLOPT_CAINFO, trust.path)
        }
        // No CA directory (Debian's libcurl has /etc/ssl/certs built in): the CA file, the system bundle or
        // TrustBundle's, holds every certificate, and libcurl caches a CA store only without a directory, so
        // every connection would otherwise parse the bundle into a store of its own (~0.8 MB each).
        apply(CCurl_easy_setopt_pointer(handle, CURLOPT_CAPATH, nil))
        // Never a proxy from http_proxy/https_proxy: the address policy must judge the real peer.
        apply(CURLOPT_PROXY, "")
        // No signals: libcurl would otherwise use SIGALRM for DNS timeouts, unsafe with threads.
        apply(CURLOPT_NOSIGNAL, 1)
        apply(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // Wait for a connection that can multiplex rather than open another one to the same host.
        apply(CURLOPT_PIPEWAIT, 1)
        apply(CURLOPT_USERAGENT, settings.userAgent)
        apply(CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout))
        apply(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout))
        apply(CCurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, heraldFetchWriteBody))
        apply(CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
        apply(CCurl_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, heraldFetchHeaderLine))
        apply(CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
        apply(CCurl_easy_setopt_opensocket_callback(handle, heraldFetchOpenSocket))
        apply(CCurl_easy_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, context))
        apply(setHeaders(handle))
        if request.oversize == .fail {
            // Refuses at once a response whose Content-Length is over the limit; the write callback catches
            // the others.
            apply(CCurl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxResponseBytes)))
        }
        switch request.method {
        case .get:
            apply(CURLOPT_HTTPGET, 1)
        case .post:
            apply(CURLOPT_POST, 1)
            apply(CCurl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
            // COPYPOSTFIELDS: libcurl keeps its own copy, so the body need not outlive this call.
            if request.body.isEmpty {
                apply(CURLOPT_COPYPOSTFIELDS, "")
            } else {
                apply(
                    request.body.withUnsafeBytes {
                        CCurl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress)
                    })
            }
        }
        return failure
    }

    /// Whole milliseconds, rounded up, at least 1 (0 would mean "no timeout" to libcurl).
    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return max(1, Int(min(value.rounded(.up), Double(Int32.max))))
    }

    private func setHeaders(_ handle: UnsafeMutableRawPointer) -> CURLcode {
        // A name with no value removes a header libcurl would add: no `Expect: 100-continue` round trip before
        // a POST body over HTTP/1.1, and no made-up form Content-Type on a POST whose caller named none.
        var lines = request.headers.map { "\($0.name): \($0.value)" } + ["Expect:"]
        if request.method == .post && !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            lines.append("Content-Type:")
        }
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else {
                return CURLE_OUT_OF_MEMORY
            }
            headerList = appended
        }
        return CCurl_easy_setopt_pointer(handle, CURLOPT_HTTPHEADER, headerList)
    }
}
