import CCurl

extension HTTPFetchError {
    /// The one place a libcurl result becomes a typed error. The message is libcurl's fixed text for the code
    /// (`curl_easy_strerror`), never its error buffer, which can quote the URL.
    init(curl code: CURLcode) {
        let text = String(cString: curl_easy_strerror(code))
        self.init(Self.code(for: code), "\(text) (curl \(code.rawValue))")
    }

    static func code(for code: CURLcode) -> Code {
        switch code {
        case CURLE_URL_MALFORMAT:
            return .invalidURL
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .schemeNotAllowed
        case CURLE_COULDNT_RESOLVE_HOST:
            return .dnsFailed
        case CURLE_COULDNT_CONNECT:
            return .connectFailed
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            return .tlsFailed
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge
        case CURLE_TOO_MANY_REDIRECTS:
            return .tooManyRedirects
        default:
            return .network
        }
    }
}
