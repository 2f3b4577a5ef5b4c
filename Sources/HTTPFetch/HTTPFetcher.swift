import Dispatch
import ServiceSupport
import Synchronization

/// Outbound HTTPS requests to URLs that partners chose (icons, delivery webhooks), on libcurl.
///
/// - Only `https`, certificates and host names verified against the system's CAs plus
///   `HTTPFetchConfiguration.extraCAFile`; no proxy from the environment; HTTP/2 when the server offers it.
/// - Every connection, redirects included, goes only to addresses `AddressPolicy` allows, checked on the address
///   actually connected to (after DNS), so a name that resolves to 127.0.0.1 or a metadata service is refused.
/// - One thread (`FetchLoop`) drives every transfer; `start` hands a request to it, `fetch` waits for one.
///   Callers bound how many they keep in flight.
/// - Nothing is logged; errors never quote headers, bodies or URLs.
public final class HTTPFetcher: Sendable {
    public let configuration: HTTPFetchConfiguration
    private let settings: TransferSettings
    private let loop: FetchLoop

    /// Validates the configuration, loads the CA bundle when an extra CA is configured, and starts the thread.
    public init(configuration: HTTPFetchConfiguration = HTTPFetchConfiguration()) throws(ConfigurationError) {
        try configuration.validate()
        let trust = try configuration.extraCAFile.map { (file) throws(ConfigurationError) in
            try TrustBundle(extraCAFile: file)
        }
        guard CurlRuntime.prepare(), let loop = FetchLoop() else {
            throw ConfigurationError(
                variable: "libcurl",
                problem: "could not be initialised (out of memory or threads)")
        }
        self.configuration = configuration
        self.settings = TransferSettings(
            policy: configuration.addressPolicy, userAgent: configuration.userAgent,
            trust: trust)
        self.loop = loop
    }

    deinit {
        loop.stop()
    }

    /// Sends `request`; `completion` gets the response or the error, exactly once. It runs on the fetcher's
    /// thread (keep it short: every transfer waits meanwhile), or at once on the caller's thread when the request
    /// is refused before anything is sent (`invalid_url`, `scheme_not_allowed`, `invalid_request`, `stopped`).
    public func start(
        _ request: HTTPFetchRequest,
        completion: @escaping @Sendable (Result<HTTPFetchResponse, HTTPFetchError>) -> Void
    ) {
        if let problem = RequestCheck.problem(request) {
            completion(.failure(problem))
            return
        }
        let transfer = FetchTransfer(request: request, settings: settings, completion: completion)
        if !loop.submit(transfer) {
            completion(.failure(HTTPFetchError.stoppedError))
        }
    }

    /// Sends `request` and blocks until its response (for handler threads, never the cooperative pool). Must not
    /// be called from a completion: that would wait on its own thread, so it fails with `invalid_request`.
    public func fetch(_ request: HTTPFetchRequest) throws(HTTPFetchError) -> HTTPFetchResponse {
        guard !loop.isCurrentThread else {
            throw HTTPFetchError(.invalidRequest, "fetch was called from a completion; use start")
        }
        let outcome = Outcome()
        start(request) { result in
            outcome.result.withLock { $0 = result }
            outcome.done.signal()
        }
        outcome.done.wait()
        return try outcome.result.withLock { $0! }.get()
    }

    /// Fails what is in flight with `stopped`, ends the thread and waits for it. Later requests fail with
    /// `stopped` at once. Safe to call more than once, and from a completion (it then does not wait).
    public func stop() {
        loop.stop()
    }
}

/// Where `fetch` waits for its completion.
private final class Outcome: Sendable {
    let result = Mutex<Result<HTTPFetchResponse, HTTPFetchError>?>(nil)
    let done = DispatchSemaphore(value: 0)
}
