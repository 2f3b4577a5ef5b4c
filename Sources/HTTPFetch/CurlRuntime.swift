import CCurl

#if canImport(Glibc)
    import Glibc
#endif

/// Process-wide set-up, done once before the first fetcher: curl_global_init, and SIGPIPE ignored (OpenSSL
/// writes to sockets with plain `write`; with CURLOPT_NOSIGNAL libcurl leaves the signal alone, and a peer that
/// closed its end would otherwise kill the process).
enum CurlRuntime {
    private static let initialised: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return CCurl_global_init() == CURLE_OK
    }()

    /// False when libcurl could not initialise (no memory, TLS library failure).
    static func prepare() -> Bool {
        initialised
    }
}
