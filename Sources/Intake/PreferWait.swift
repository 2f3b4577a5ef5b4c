import Foundation
import HTTPServer
import HeraldCore
import ServiceSupport
import Store

/// The `wait` preference of a `Prefer` header (RFC 7240), as the push endpoint honours it.
enum PreferWait {
    /// The longest wait the intake grants; a larger request is shortened to it (RFC 7240 lets a
    /// server apply a preference partly; `Preference-Applied` says what was applied).
    static let maximum = Duration.seconds(30)

    /// nil when there is no `wait` preference or it is 0. Other preferences are ignored.
    static func parse(_ header: String?) throws(HeraldError) -> Duration? {
        guard let header else { return nil }
        for preference in header.split(separator: ",") {
            let parts = preference.split(separator: "=", maxSplits: 1).map { $0.trimmingASCIIWhitespace() }
            guard parts.first?.lowercased() == "wait" else { continue }
            guard parts.count == 2, let seconds = Int(parts[1]), seconds >= 0 else {
                throw HeraldError.invalidField("Prefer", "Prefer: wait must be a whole number of seconds (at most 30).")
            }
            if seconds == 0 { return nil }
            return min(.seconds(seconds), maximum)
        }
        return nil
    }
}

/// Holds `Prefer: wait` requests without holding a thread each: the handler registers the request and returns
/// a deferred answer (its connection stays suspended, its handler thread is free at once); ONE thread looks
/// up every waiting request with one query per tick and answers those whose deliveries are all decided or
/// whose wait is over. The worker is not asked for anything: the counts on `push_requests` are the truth.
///
/// At most `maxPerPartner` requests of one partner wait at once; beyond that the caller answers at once.
final class PreferWaiter: @unchecked Sendable {
    private struct Waiter {
        let requestID: UUID
        let createdAt: Date
        let partnerID: UUID
        let deadline: ContinuousClock.Instant
        let pending: DeferredResponse
        let render: @Sendable (PushRequestSummary) -> HTTPResponse
    }

    let maxPerPartner: Int
    private let store: PushStore
    private let tick: Duration
    private let logger: Logger
    // Guards everything below; the waiter thread sleeps on it.
    private let condition = NSCondition()
    private var waiters: [UUID: Waiter] = [:]
    private var perPartner: [UUID: Int] = [:]
    private var stopping = false
    private var service: BackgroundService!

    init(store: PushStore, maxPerPartner: Int, tick: Duration = .milliseconds(25), logger: Logger) {
        self.store = store
        self.maxPerPartner = maxPerPartner
        self.tick = tick
        self.logger = logger
        service = BackgroundService(
            .init(name: "herald-prefer-wait"), logger: logger,
            interrupt: { [unowned self] in
                condition.lock()
                condition.broadcast()
                condition.unlock()
            },
            step: { [unowned self] service in step(service) })
    }

    /// Requests waiting now (for tests and metrics).
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiters.count
    }

    /// A deferred answer for the request, rendered by `render` once its outcome is known or `wait` is over;
    /// nil when the partner already has `maxPerPartner` waiting (or the waiter is stopping).
    func wait(
        requestID: UUID, createdAt: Date, partnerID: UUID, for wait: Duration,
        render: @escaping @Sendable (PushRequestSummary) -> HTTPResponse
    ) -> HTTPResponse? {
        let pending = DeferredResponse()
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, perPartner[partnerID, default: 0] < maxPerPartner else { return nil }
        perPartner[partnerID, default: 0] += 1
        waiters[requestID] = Waiter(
            requestID: requestID, createdAt: createdAt, partnerID: partnerID,
            deadline: .now + wait, pending: pending, render: render)
        condition.signal()
        return .deferred(pending)
    }

    func start() { service.start() }

    /// Answers every waiting request with its counts as they are now, then stops the thread.
    /// Idempotent.
    func stop() {
        condition.lock()
        stopping = true
        condition.unlock()
        service.stop()
        condition.lock()
        let remaining = Array(waiters.values)
        condition.unlock()
        check(remaining, final: true)
    }

    private func step(_ service: BackgroundService) {
        condition.lock()
        while waiters.isEmpty && !stopping { condition.wait() }
        let snapshot = stopping ? [] : Array(waiters.values)
        condition.unlock()
        check(snapshot, final: false)
        service.sleep(for: tick)
    }

    /// One query for every waiter; answers the decided and the expired (all of them when `final`).
    private func check(_ snapshot: [Waiter], final: Bool) {
        guard !snapshot.isEmpty else { return }
        let now = ContinuousClock.now
        var answers: [(Waiter, HTTPResponse)] = []
        do {
            let summaries = try store.summaries(of: snapshot.map { ($0.requestID, $0.createdAt) })
            for waiter in snapshot {
                let expired = final || now >= waiter.deadline
                guard let summary = summaries[waiter.requestID] else {
                    if expired { answers.append((waiter, Reply.error(.internalError))) }
                    continue
                }
                if expired || summary.pending == 0 {
                    answers.append((waiter, waiter.render(summary)))
                }
            }
        } catch {
            logger.warning("Prefer: wait lookup failed", [("error", .string(String(describing: error)))])
            for waiter in snapshot where final || now >= waiter.deadline {
                answers.append((waiter, Reply.error(.databaseUnavailable)))
            }
        }
        guard !answers.isEmpty else { return }
        condition.lock()
        for (waiter, _) in answers where waiters.removeValue(forKey: waiter.requestID) != nil {
            let left = perPartner[waiter.partnerID, default: 1] - 1
            perPartner[waiter.partnerID] = left > 0 ? left : nil
        }
        condition.unlock()
        // Completing resumes the connection; outside the lock, it never waits on this class.
        for (waiter, response) in answers {
            waiter.pending.complete(response)
        }
    }
}
