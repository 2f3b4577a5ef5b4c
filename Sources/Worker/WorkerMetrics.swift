import Foundation
import HeraldCore
import ServiceSupport
import Store
import Synchronization

/// The worker's Prometheus metrics: per-upstream outcome counters, the send latency histogram,
/// and gauges of the queue and of the work in hand.
public final class WorkerMetrics: Sendable {
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// Counter names, in exposition order.
    enum Counter: String, CaseIterable {
        case claimed, sent, failed, retried, dead
        case tokenInvalid = "token_invalid"
        case expired, suppressed
        /// A Live Activity row a newer row of the same activity and device made moot (never sent).
        case superseded
        /// A revoked partner's row, never sent.
        case cancelled
        /// Held back because the upstream refused Herald's setup (attempt not counted).
        case deferred
    }

    /// The worker's unlabelled counters, in exposition order: each a `Total` of the state's `totals`.
    enum Total: Int, CaseIterable {
        case rescued, releasedUnheard, claims, listedClaims, leasedReads, carriedRows, completionBatches, databaseErrors
        case unrecordable, leasesExtended, activitiesExpired, activityStartsUnconfirmed
        case activityScheduledStarts, activityScheduledRefused

        /// The metric's name and help text.
        var family: (name: String, help: String) {
            switch self {
            case .rescued: ("herald_worker_rescued_total", "Expired leases this worker returned to pending.")
            case .releasedUnheard:
                (
                    "herald_worker_released_unheard_total",
                    "Rows leased to this worker that it never heard of (a claim's answer or a notification lost with"
                        + " the connection), given back without waiting for their lease."
                )
            case .claims: ("herald_worker_claims_total", "Claim statements run.")
            case .listedClaims:
                (
                    "herald_worker_listed_claims_total",
                    "Of the claims, those that leased the rows a notification listed by primary key"
                        + " (no walk of the due index)."
                )
            case .leasedReads:
                (
                    "herald_worker_leased_reads_total",
                    "Reads of the rows an intake leased to this worker by id with its notification (no claim)."
                )
            case .carriedRows:
                (
                    "herald_worker_carried_rows_total",
                    "Rows an intake leased to this worker that its notification carried whole"
                        + " (sent with no statement)."
                )
            case .completionBatches: ("herald_worker_completion_batches_total", "Completion statements run.")
            case .databaseErrors: ("herald_worker_database_errors_total", "Failed database calls (retried).")
            case .unrecordable:
                ("herald_worker_unrecordable_total", "Outcomes the database refused to record (recorded as failed).")
            case .leasesExtended: ("herald_worker_leases_extended_total", "Leases renewed for sends that took long.")
            case .activitiesExpired:
                ("herald_worker_activities_expired_total", "Live Activities this worker ended at their TTL.")
            case .activityStartsUnconfirmed:
                (
                    "herald_worker_activity_starts_unconfirmed_total",
                    "iPhones where a Live Activity start created nothing (no update token in time),"
                        + " marked by this worker."
                )
            case .activityScheduledStarts:
                (
                    "herald_worker_activity_scheduled_starts_total",
                    "Scheduled Live Activity starts this worker sent when they came due."
                )
            case .activityScheduledRefused:
                (
                    "herald_worker_activity_scheduled_refused_total",
                    "Scheduled Live Activity starts this worker refused when they came due (a check failed)."
                )
            }
        }
    }

    private struct State {
        var counters: [PushService: [Counter: Int]] = [:]
        var latency: [PushService: PrometheusHistogram] = [:]
        var inFlight = 0
        /// HERALD_WORKER_MAX_IN_FLIGHT (0 until a worker sets it).
        var inFlightLimit = 0
        /// By `Total.rawValue`: an increment is an index, no hashing.
        var totals = [Int](repeating: 0, count: Total.allCases.count)
        /// The paused upstreams and why.
        var paused: [PauseScope: String] = [:]
        var setupFaults: [PushService: Int] = [:]
        var suspects: [PushService: Int] = [:]
        /// Webhook attempts by outcome (`delivered`, `retried`, `failed`), their duration, and those in flight.
        var webhooks: [String: Int] = [:]
        var webhookLatency = PrometheusHistogram(bounds: WorkerMetrics.latencyBuckets)
        var webhooksInFlight = 0
        /// Broadcast channel calls by (kind, outcome) and their latency.
        var channelCalls: [String: Int] = [:]
        var channelLatency = PrometheusHistogram(bounds: WorkerMetrics.latencyBuckets)
        /// Channel sweeps by outcome (done, failed), unknown channels deleted, and the last sweep's counts.
        var channelSweeps: [String: Int] = [:]
        var channelOrphansDeleted = 0
        var channelsAtAPNs: Int?
        var channelsUnknown = 0
        /// The autoscaling gauges per lane; empty until the first refresh (no figure rather than a false 0).
        var lanes: [LaneGauge] = []
        /// Deliveries the host's guards stopped, by reason (`GuardReason`).
        var guarded: [GuardReason: Int] = [:]
    }

    /// Why the host's guards stopped a delivery (functions/user_guards.sql): held for the user's quiet hours
    /// (counted under `deferred` too), or suppressed by the cap per user (under `suppressed` too).
    enum GuardReason: String, CaseIterable {
        case quietHours = "quiet_hours"
        case userCap = "user_cap"
    }

    private let state = Mutex(State())

    public init() {}

    func add(_ counter: Counter, _ service: PushService, _ amount: Int = 1) {
        state.withLock { $0.counters[service, default: [:]][counter, default: 0] += amount }
    }

    /// Counts the outcome of one delivery and, for one that was sent, observes how long the upstream took
    /// (one lock for both: this runs once per delivery).
    func record(_ outcome: DeliveryOutcome, _ service: PushService, sendSeconds: Double? = nil) {
        let counter: Counter
        switch outcome {
        case .sent: counter = .sent
        case .failed: counter = .failed
        case .dead: counter = .dead
        case .tokenInvalid: counter = .tokenInvalid
        case .expired: counter = .expired
        case .suppressed: counter = .suppressed
        case .superseded: counter = .superseded
        case .cancelled: counter = .cancelled
        case .retry: counter = .retried
        case .deferred: counter = .deferred
        }
        let guardReason: GuardReason? =
            switch outcome {
            case .suppressed(let reason), .deferred(_, let reason): GuardReason(rawValue: reason)
            default: nil
            }
        state.withLock { state in
            state.counters[service, default: [:]][counter, default: 0] += 1
            if let guardReason { state.guarded[guardReason, default: 0] += 1 }
            if let sendSeconds {
                state.latency[service, default: PrometheusHistogram(bounds: Self.latencyBuckets)].observe(sendSeconds)
            }
        }
    }

    func setInFlight(_ value: Int) { state.withLock { $0.inFlight = value } }
    func setInFlightLimit(_ value: Int) { state.withLock { $0.inFlightLimit = value } }
    func setLanes(_ lanes: [LaneGauge]) { state.withLock { $0.lanes = lanes } }
    func add(_ total: Total, _ amount: Int = 1) { state.withLock { $0.totals[total.rawValue] += amount } }
    /// One claim statement; `listed` when it leased the rows a notification listed (no walk of the due index).
    func addClaim(listed: Bool = false) {
        state.withLock { state in
            state.totals[Total.claims.rawValue] += 1
            if listed { state.totals[Total.listedClaims.rawValue] += 1 }
        }
    }
    func setPaused(_ reasons: [PauseScope: String]) { state.withLock { $0.paused = reasons } }
    func addSetupFault(_ service: PushService) { state.withLock { $0.setupFaults[service, default: 0] += 1 } }
    func addSuspect(_ service: PushService) { state.withLock { $0.suspects[service, default: 0] += 1 } }
    func setWebhooksInFlight(_ value: Int) { state.withLock { $0.webhooksInFlight = value } }

    /// One webhook attempt: its outcome and how long the receiver took.
    func recordWebhook(_ outcome: String, seconds: Double) {
        state.withLock { state in
            state.webhooks[outcome, default: 0] += 1
            state.webhookLatency.observe(seconds)
        }
    }

    /// One call to APNs for a broadcast channel (`kind`: create, broadcast, delete) and what came of it.
    func recordChannelCall(_ kind: String, outcome: String, seconds: Double) {
        state.withLock { state in
            state.channelCalls[kind + "\u{0}" + outcome, default: 0] += 1
            state.channelLatency.observe(seconds)
        }
    }

    /// One channel sweep (ChannelSweeper): the channels APNs listed (nil: the list failed), those Herald has no
    /// record of, and how many of them were deleted.
    func recordChannelSweep(listed: Int?, unknown: Int, deleted: Int) {
        state.withLock { state in
            state.channelSweeps[listed == nil ? "failed" : "done", default: 0] += 1
            guard let listed else { return }
            state.channelsAtAPNs = listed - deleted
            state.channelsUnknown = unknown - deleted
            state.channelOrphansDeleted += deleted
        }
    }

    /// Unknown channels the sweeps deleted so far (tests).
    public var channelOrphansDeleted: Int { state.withLock { $0.channelOrphansDeleted } }

    /// Channel sweeps so far that listed the app's channels (`done`) or could not (`failed`) (tests).
    public func channelSweeps(_ outcome: String) -> Int { state.withLock { $0.channelSweeps[outcome] ?? 0 } }

    /// Channel calls of this kind and outcome so far (tests).
    public func channelCalls(_ kind: String, outcome: String) -> Int {
        state.withLock { $0.channelCalls[kind + "\u{0}" + outcome] ?? 0 }
    }

    /// Claim statements run so far (tests).
    public var claims: Int { total(.claims) }

    /// Of `claims`, those of listed rows (tests).
    public var listedClaims: Int { total(.listedClaims) }

    /// Reads of rows an intake leased to this worker (tests).
    public var leasedReads: Int { total(.leasedReads) }

    /// Rows an intake leased to this worker that its notification carried whole, sent without a statement (tests).
    public var carriedRows: Int { total(.carriedRows) }

    func total(_ total: Total) -> Int { state.withLock { $0.totals[total.rawValue] } }

    /// Webhook attempts with this outcome so far (tests).
    public func webhooks(_ outcome: String) -> Int { state.withLock { $0.webhooks[outcome] ?? 0 } }

    /// Suspect token verdicts so far (tests).
    public func tokenSuspects(_ service: PushService) -> Int { state.withLock { $0.suspects[service] ?? 0 } }

    /// Deliveries the host's guards stopped for `reason` so far (tests).
    func guarded(_ reason: GuardReason) -> Int { state.withLock { $0.guarded[reason] ?? 0 } }

    /// A counter's value (tests and logs).
    public func value(_ name: String, _ service: PushService) -> Int {
        guard let counter = Counter(rawValue: name) else { return 0 }
        return state.withLock { $0.counters[service]?[counter] ?? 0 }
    }

    /// A label value as the exposition format needs it, cut to 128 characters (the upstream's reason text is
    /// outside input).
    static func labelValue(_ text: String) -> String {
        PrometheusText.escaped(text.prefix(128))
    }

    /// The exposition text for `GET /metrics`, with each upstream's streams as its client reports them now
    /// (`DeliveryWorker.pipes`).
    public func render(pipes: [PushService: UpstreamPipe] = [:]) -> String {
        let snapshot = state.withLock { $0 }
        var out = PrometheusText()
        out.family(
            "herald_worker_deliveries_total", .counter,
            help: "Deliveries by upstream and outcome (claimed counts claims).")
        for service in PushService.allCases {
            for counter in Counter.allCases {
                out.sample(
                    "herald_worker_deliveries_total",
                    labels: "upstream=\"\(service.rawValue)\",outcome=\"\(counter.rawValue)\"",
                    snapshot.counters[service]?[counter] ?? 0)
            }
        }
        out.family(
            "herald_worker_deliveries_guarded_total", .counter,
            help: "Deliveries the host's guards per user stopped, by reason.")
        for reason in GuardReason.allCases {
            out.sample(
                "herald_worker_deliveries_guarded_total", labels: "reason=\"\(reason.rawValue)\"",
                snapshot.guarded[reason] ?? 0)
        }
        out.family(
            "herald_worker_send_duration_seconds", .histogram,
            help: "Time from handing a delivery to the upstream client to its answer.")
        for service in PushService.allCases {
            let histogram = snapshot.latency[service] ?? PrometheusHistogram(bounds: Self.latencyBuckets)
            out.histogram("herald_worker_send_duration_seconds", labels: "upstream=\"\(service.rawValue)\"", histogram)
        }
        out.family(
            "herald_worker_upstream_paused", .gauge,
            help: "1 while the upstream is paused: it refused Herald's credentials or configuration.")
        // Each upstream paused whole, and each APNs environment paused alone (`apns-sandbox`).
        let scopes =
            PushService.allCases.map { PauseScope($0) }
            + ["production", "sandbox"].map { PauseScope(.apns, environment: $0) }
        for scope in scopes {
            out.sample(
                "herald_worker_upstream_paused", labels: "upstream=\"\(scope.name)\"",
                snapshot.paused[scope] == nil ? 0 : 1)
        }
        out.family(
            "herald_worker_upstream_pause_reason", .gauge,
            help: "1 for each paused upstream, labelled with why "
                + "(the upstream's reason, or token_storm_<reason>).")
        for (scope, reason) in snapshot.paused.sorted(by: { $0.key.name < $1.key.name }) {
            out.sample(
                "herald_worker_upstream_pause_reason",
                labels: "upstream=\"\(scope.name)\",reason=\"\(Self.labelValue(reason))\"", 1)
        }
        let perUpstream: [(String, String, [PushService: Int])] = [
            (
                "herald_worker_setup_faults_total", "Answers refusing Herald's credentials or configuration.",
                snapshot.setupFaults
            ),
            (
                "herald_worker_token_suspects_total",
                "Tokens refused in words that may blame Herald's setup "
                    + "(held until the upstream accepts another token).", snapshot.suspects
            ),
        ]
        for (name, help, counts) in perUpstream {
            out.family(name, .counter, help: help)
            for service in PushService.allCases {
                out.sample(name, labels: "upstream=\"\(service.rawValue)\"", counts[service] ?? 0)
            }
        }
        out.family(
            "herald_worker_webhooks_total", .counter,
            help: "Webhook attempts by outcome (retried: a retry is scheduled).")
        for outcome in ["delivered", "retried", "failed"] {
            out.sample(
                "herald_worker_webhooks_total", labels: "outcome=\"\(outcome)\"",
                snapshot.webhooks[outcome] ?? 0)
        }
        out.family(
            "herald_worker_webhook_duration_seconds", .histogram,
            help: "Time from sending a webhook to its answer (or failure).")
        out.histogram("herald_worker_webhook_duration_seconds", snapshot.webhookLatency)
        out.family(
            "herald_worker_channel_calls_total", .counter,
            help: "Calls to APNs for broadcast channels, by kind "
                + "and outcome (done, retry, refused: that change only, gone: the channel failed).")
        for kind in ["create", "broadcast", "delete"] {
            for outcome in ["done", "retry", "refused", "gone"] {
                out.sample(
                    "herald_worker_channel_calls_total", labels: "kind=\"\(kind)\",outcome=\"\(outcome)\"",
                    snapshot.channelCalls[kind + "\u{0}" + outcome] ?? 0)
            }
        }
        out.family(
            "herald_worker_channel_sweeps_total", .counter,
            help: "Sweeps of the app's channels at APNs (done, or failed: APNs did not list them).")
        for outcome in ["done", "failed"] {
            out.sample(
                "herald_worker_channel_sweeps_total", labels: "outcome=\"\(outcome)\"",
                snapshot.channelSweeps[outcome] ?? 0)
        }
        out.family(
            "herald_worker_channel_orphans_deleted_total", .counter,
            help: "Channels at APNs Herald had no record of (a create whose answer was lost), deleted by the sweep.")
        out.sample("herald_worker_channel_orphans_deleted_total", snapshot.channelOrphansDeleted)
        if let atAPNs = snapshot.channelsAtAPNs {
            out.family(
                "herald_worker_channels_at_apns", .gauge,
                help: "The app's channels at APNs after the last sweep (Apple allows 10,000 per app).")
            out.sample("herald_worker_channels_at_apns", atAPNs)
            out.family(
                "herald_worker_channels_unknown", .gauge,
                help: "Of those, channels Herald has no record of (deleted once a later sweep finds them again).")
            out.sample("herald_worker_channels_unknown", snapshot.channelsUnknown)
        }
        out.family(
            "herald_worker_channel_call_duration_seconds", .histogram,
            help: "Time from a channel call to APNs' answer.")
        out.histogram("herald_worker_channel_call_duration_seconds", snapshot.channelLatency)
        // How full the round-trip pipe is: sends per second are at most the streams in flight over the upstream's
        // round trip. Deliveries queued while no stream is available: the streams are the bound; streams available
        // and none queued: the claims are.
        let pipeGauges: [(String, String, KeyPath<UpstreamPipe, Int>)] = [
            (
                "herald_worker_upstream_streams_in_flight", "HTTP/2 streams open to the upstream (sent, not answered).",
                \.streamsInFlight
            ),
            (
                "herald_worker_upstream_streams_available",
                "HTTP/2 streams the upstream's ready connections may still "
                    + "open (our cap lowered by its SETTINGS_MAX_CONCURRENT_STREAMS).", \.streamsAvailable
            ),
            (
                "herald_worker_upstream_queued", "Claimed deliveries waiting in the upstream's client for a stream.",
                \.queued
            ),
        ]
        for (name, help, field) in pipeGauges where !pipes.isEmpty {
            out.family(name, .gauge, help: help)
            for (service, pipe) in pipes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                out.sample(name, labels: "upstream=\"\(service.rawValue)\"", pipe[keyPath: field])
            }
        }
        let gauges: [(String, String, Int)] = [
            ("herald_worker_in_flight", "Deliveries claimed by this worker and not yet recorded.", snapshot.inFlight),
            (
                "herald_worker_in_flight_limit",
                "The most deliveries this worker holds claimed and not yet recorded "
                    + "(HERALD_WORKER_MAX_IN_FLIGHT).", snapshot.inFlightLimit
            ),
            ("herald_worker_webhooks_in_flight", "Webhook events this worker is sending.", snapshot.webhooksInFlight),
        ]
        for (name, help, value) in gauges {
            out.single(name, .gauge, help: help, value)
        }
        if !snapshot.lanes.isEmpty {
            out.family(
                "herald_queue_due_deliveries", .gauge,
                help: "Pending deliveries due now, by lane (counted up "
                    + "to \(QueueGaugeStore.countLimit) per lane; every HERALD_QUEUE_GAUGE_INTERVAL_MS).")
            for lane in snapshot.lanes {
                out.sample("herald_queue_due_deliveries", labels: "lane=\"\(lane.lane)\"", lane.due)
            }
            out.family(
                "herald_queue_oldest_due_seconds", .gauge,
                help: "Age of the oldest due pending delivery, by lane.")
            for lane in snapshot.lanes {
                out.sample("herald_queue_oldest_due_seconds", labels: "lane=\"\(lane.lane)\"", lane.oldestDueSeconds)
            }
        }
        for total in Total.allCases {
            out.single(total.family.name, .counter, help: total.family.help, snapshot.totals[total.rawValue])
        }
        return out.text
    }
}
