import Foundation
import HeraldCore
import Synchronization

/// The one shape of every background loop (the worker's claimer, completer, listener, rescuer,
/// queue sampler and lease extender; the intake's notifier and janitor), as River builds its
/// maintenance services: a named thread that runs `step` until stopped, with the error handling,
/// backoff, interruptible sleeps and stop written once here.
///
/// - `step` does one unit of work and returns; it may wait with `sleep(for:)` (cut short by
///   `stop()` or `wake()`). Services that wait on a signal of their own pass `interrupt`, which
///   `stop()` calls so that wait ends too.
/// - A thrown error is logged (never with secrets: errors' descriptions are redacted, see
///   PostgresError), `onError` runs (a service drops its database connection there), and the
///   next step waits `backoff.delay(afterFailures:)`; a step that succeeds resets the count.
///   A run of failures with the same error writes one line (a database down or migrated under
///   the process for a minute is one fact, not thirty), and the first success after it writes
///   `recovered` with the count.
public final class BackgroundService: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The thread's name (`herald-claimer`), also the `service` field of its log lines.
        public var name: String
        /// Waits after consecutive failures.
        public var backoff: ExponentialBackoff

        public init(name: String, backoff: ExponentialBackoff = .init(base: .milliseconds(50), maximum: .seconds(2))) {
            self.name = name
            self.backoff = backoff
        }

        public func validate() throws(ConfigurationError) {
            guard !name.isEmpty else { throw ConfigurationError(variable: "service", problem: "needs a name") }
            guard backoff.base > .zero, backoff.maximum >= backoff.base else {
                throw ConfigurationError(variable: name, problem: "backoff must be positive with maximum >= base")
            }
        }
    }

    private struct State {
        var stopping = false
        var woken = false
        var started = false
        var failures = 0
    }

    public let configuration: Configuration
    private let logger: Logger
    private let step: @Sendable (BackgroundService) throws -> Void
    private let onError: @Sendable (any Error) -> Void
    private let interrupt: @Sendable () -> Void
    private let state = Mutex(State())
    private let condition = NSCondition()
    /// Entered when the thread starts, left when it ends: any number of `stop()` calls may wait on it.
    private let running = DispatchGroup()

    public init(
        _ configuration: Configuration, logger: Logger,
        onError: @escaping @Sendable (any Error) -> Void = { _ in },
        interrupt: @escaping @Sendable () -> Void = {},
        step: @escaping @Sendable (BackgroundService) throws -> Void
    ) {
        self.configuration = configuration
        self.logger = logger
        self.step = step
        self.onError = onError
        self.interrupt = interrupt
    }

    public var isStopping: Bool { state.withLock { $0.stopping } }

    /// Consecutive failed steps so far (0 after a success).
    public var failures: Int { state.withLock { $0.failures } }

    public func start() {
        let alreadyStarted = state.withLock { state -> Bool in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { return }
        running.enter()
        let thread = Thread { [self] in run() }
        thread.name = configuration.name
        thread.start()
    }

    /// Asks the loop to end after its current step and waits for it, up to `deadline`. Returns
    /// false when the step was still running at the deadline (a call blocked on a database that
    /// stopped answering: its connection's timeouts end it later, the process need not wait).
    @discardableResult
    public func stop(deadline: Date = .distantFuture) -> Bool {
        let started = state.withLock { state -> Bool in
            state.stopping = true
            return state.started
        }
        condition.lock()
        condition.broadcast()
        condition.unlock()
        interrupt()
        guard started else { return true }
        let wait = deadline.timeIntervalSinceNow
        if wait > 1e9 {
            running.wait()
            return true
        }
        return running.wait(timeout: .now() + max(0, wait)) == .success
    }

    /// Ends the current `sleep(for:)` early (new work arrived).
    public func wake() {
        state.withLock { $0.woken = true }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Sleeps up to `duration`, or until `wake()` or `stop()`. Returns false when stopping.
    @discardableResult
    public func sleep(for duration: Duration) -> Bool {
        let deadline = Date().addingTimeInterval(max(0, duration / .seconds(1)))
        condition.lock()
        defer { condition.unlock() }
        while true {
            let (stopping, woken) = state.withLock { state -> (Bool, Bool) in
                defer { state.woken = false }
                return (state.stopping, state.woken)
            }
            if stopping { return false }
            if woken { return true }
            if !condition.wait(until: deadline) { return !isStopping }
        }
    }

    private func run() {
        // The error last logged in the current run of failures.
        var logged: String?
        while !isStopping {
            do {
                try step(self)
                let failures = state.withLock { state -> Int in
                    defer { state.failures = 0 }
                    return state.failures
                }
                if failures > 0 {
                    logger.info(
                        "\(configuration.name) recovered",
                        [("service", .string(configuration.name)), ("failures", .number(Double(failures)))])
                }
                logged = nil
            } catch {
                let failures = state.withLock { state -> Int in
                    state.failures += 1
                    return state.failures
                }
                onError(error)
                let description = String(describing: error)
                if description != logged {
                    logged = description
                    logger.warning(
                        "\(configuration.name) failed; retrying",
                        [
                            ("service", .string(configuration.name)), ("error", .string(description)),
                            ("failures", .number(Double(failures))),
                        ])
                }
                sleep(for: configuration.backoff.step(afterFailures: failures))
            }
        }
        running.leave()
    }
}
