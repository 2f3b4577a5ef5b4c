import Foundation
import HTTPFetch
import HeraldCore
import HeraldCrypto
import Postgres
import ServiceSupport
import Store
import Synchronization

/// Sends partners' delivery webhooks from `webhook_events` (sql/020_webhooks.sql): a background
/// service claims due events, POSTs each through HTTPFetch (its address policy; no redirects; the answer read up
/// to 4 KiB and ignored) with `Herald-Signature` (signed with the partner's secret, and with the one before its last
/// rotation while that one's overlap lasts) and `Herald-Event-Id`, and records the outcomes in batches:
/// delivered on 2xx, retried with backoff and jitter for 24 hours on timeouts, network errors, 5xx and 429,
/// failed on anything else (WebhookRetryPolicy).
///
/// At most `maxInFlight` events are in flight, and at most `perPartner` of one partner, so a slow or failing
/// endpoint cannot hold the others' slots. An event is leased while it is sent: a worker that dies mid-send
/// leaves it to another after the lease (the partner may then see it twice, with the same event id); a worker
/// that drains waits for its answers and records them, so a normal restart sends nothing twice.
final class WebhookSender: Sendable {
    private struct State {
        var inFlight: [UUID: Int] = [:]
        var total = 0
    }

    private let configuration: WebhookSenderConfiguration
    private let worker: String
    private let store: WebhookStore
    private let loop: SenderLoop<WebhookAttemptRecord>
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let clock: any HeraldClock
    private let state = Mutex(State())
    /// Made by the first step (its failure is retried as any step's).
    private let fetcher = Mutex<HTTPFetcher?>(nil)

    init(
        configuration: WebhookSenderConfiguration, worker: String, databaseURL: String,
        connectionOptions: PostgresConnectionOptions, metrics: WorkerMetrics, logger: Logger, clock: any HeraldClock
    ) {
        self.configuration = configuration
        self.worker = worker
        loop = SenderLoop(
            name: "herald-webhooks", databaseURL: databaseURL, connectionOptions: connectionOptions, logger: logger)
        store = WebhookStore(pool: loop.pool)
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        loop.run { [unowned self] service in try step(service) }
    }

    func start() { loop.start() }

    /// Stops claiming, waits (until `deadline`) for the answers in flight, records every outcome it has, and
    /// stops. Events still unanswered stay leased and go out again after their lease.
    func drain(deadline: Date) {
        loop.drain(
            deadline: deadline, inFlight: { state.withLock { $0.total } }, flush: flush,
            unrecorded: "webhooks: outcomes not recorded at the drain; their events go out again after the lease")
        fetcher.withLock { $0?.stop() }
        loop.pool.close()
    }

    private func step(_ service: BackgroundService) throws {
        let fetcher = try self.fetcher.withLock { fetcher throws -> HTTPFetcher in
            if let fetcher { return fetcher }
            let made = try HTTPFetcher(configuration: configuration.fetch)
            fetcher = made
            return made
        }
        let (room, free) = state.withLock { state in
            (state.inFlight.mapValues { configuration.perPartner - $0 }, configuration.maxInFlight - state.total)
        }
        var claimed: [LeasedWebhookEvent] = []
        // Claims in batches: once a quarter of the slots are free (or none is taken), not at every answer,
        // so a busy sender runs a claim per several events rather than one each.
        let inFlight = configuration.maxInFlight - free
        if free > 0 && !loop.isDraining && (inFlight == 0 || free >= max(1, configuration.maxInFlight / 4)) {
            claimed = try store.claim(
                worker: worker, limit: free, perPartner: configuration.perPartner, room: room,
                leaseSeconds: configuration.leaseSeconds, now: clock.now)
            for event in claimed { send(event, with: fetcher, service: service) }
        }
        // The answers since the last step and this claim's refusals, in one statement.
        try flush()
        // Until an answer comes (it wakes the service: a slot is free, an outcome to record) or the poll.
        service.sleep(for: configuration.pollInterval)
    }

    private func send(_ event: LeasedWebhookEvent, with fetcher: HTTPFetcher, service: BackgroundService) {
        guard let url = event.url, let secret = event.secret else {
            // The partner's webhook was removed after the event was written.
            finish(event, .notAnswered(code: "no_webhook", permanent: true), seconds: 0)
            return
        }
        let total = state.withLock { state in
            state.inFlight[event.partnerID, default: 0] += 1
            state.total += 1
            return state.total
        }
        metrics.setWebhooksInFlight(total)
        let timestamp = Int(clock.now.timeIntervalSince1970)
        let request = HTTPFetchRequest(
            method: .post, url: url,
            headers: [
                HTTPFetchHeader("Content-Type", "application/json"),
                HTTPFetchHeader(
                    WebhookSignature.headerName,
                    WebhookSignature.header(
                        secret: secret, previousSecret: event.previousSecret,
                        timestamp: timestamp, body: event.body)),
                HTTPFetchHeader(WebhookSignature.eventIDHeaderName, event.id.uuidString.lowercased()),
            ],
            body: event.body, timeout: configuration.requestTimeout, maxResponseBytes: 4_096, oversize: .truncate,
            followRedirects: 0)
        let started = ContinuousClock.now
        fetcher.start(request) { [self] result in
            let attempt: WebhookAttemptResult =
                switch result {
                case .success(let response): .answered(status: response.status)
                case .failure(let error):
                    .notAnswered(code: error.code.rawValue, permanent: Self.isPermanent(error.code))
                }
            finish(event, attempt, seconds: (ContinuousClock.now - started) / .seconds(1))
            let total = state.withLock { state in
                state.inFlight[event.partnerID, default: 1] -= 1
                if state.inFlight[event.partnerID] == 0 { state.inFlight[event.partnerID] = nil }
                state.total -= 1
                return state.total
            }
            metrics.setWebhooksInFlight(total)
            service.wake()
        }
    }

    /// Decides an attempt and queues its record for the next flush.
    private func finish(_ event: LeasedWebhookEvent, _ attempt: WebhookAttemptResult, seconds: Double) {
        let now = clock.now
        let decision = configuration.retry.decide(
            attempt, attempts: event.attempts, windowStart: event.windowStart,
            now: now, random: Double.random(in: 0..<1))
        let status: Int? = if case .answered(let status) = attempt { status } else { nil }
        let (outcome, retryAt, label): (WebhookAttemptRecord.Outcome, Date?, String) =
            switch decision {
            case .delivered: (.delivered, nil, "delivered")
            case .retry(let at): (.retry, at, "retried")
            case .failed: (.failed, nil, "failed")
            }
        let record = WebhookAttemptRecord(
            id: event.id, outcome: outcome, status: status,
            error: outcome == .delivered ? nil : WebhookRetryPolicy.errorCode(attempt), retryAt: retryAt)
        metrics.recordWebhook(label, seconds: seconds)
        if outcome == .failed {
            logger.info(
                "webhook failed",
                [
                    ("event", .string(event.id.uuidString.lowercased())),
                    ("partner", .string(event.partnerID.uuidString.lowercased())),
                    ("attempts", .number(Double(event.attempts))), ("error", .string(record.error ?? "")),
                ])
        }
        loop.finish(record)
    }

    /// Records the outcomes gathered so far; on failure they stay queued for the next try.
    private func flush() throws {
        try loop.flush { records in
            try store.record(worker: worker, Array(records), now: clock.now)
            records = []
        }
    }

    /// Refusals no retry changes: the URL itself, or the address policy.
    static func isPermanent(_ code: HTTPFetchError.Code) -> Bool {
        switch code {
        case .invalidURL, .schemeNotAllowed, .addressRefused, .invalidRequest: true
        default: false
        }
    }
}
