import Foundation
import HeraldCore
import ServiceSupport
import Synchronization

/// Prometheus metrics of the intake, rendered in the text exposition format.
public final class IntakeMetrics: Sendable {
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct RequestKey: Hashable { let route: String; let method: String; let status: Int }
    private struct BudgetKey: Hashable { let partner: String; let reason: String }
    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: PrometheusHistogram] = [:]
        var deliveriesEnqueued = 0
        var pushesAccepted = 0
        var rateLimited = 0
        var idempotentReplays = 0
        var pushesResubmitted = 0
        var pushesRendered = 0
        var activityEvents = 0
        var liveActivityBudget: [BudgetKey: Int] = [:]
        var previousCredentials: [PreviousCredential: Int] = [:]
        /// Requests refused because their partner is suspended, by mini-app.
        var suspendedRefusals: [String: Int] = [:]
    }

    /// A credential accepted during its rotation's overlap (`Authenticator`).
    enum PreviousCredential: Hashable {
        case adminToken, hostToken
        /// `miniAppID` bounds the label: one per partner row.
        case partnerKey(miniAppID: String)
    }

    private let state = Mutex(State())

    public init() {}

    /// The label of a method or route not counted under its own name (no route, a refused request).
    static let other = "other"
    /// Methods counted under their own name; any other is `other`.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    /// Routes counted under their own pattern; anything else (no route, a refused request) is `other`.
    static let knownRoutes: Set<String> = Set(IntakeRoutes.all.map(\.path.text))

    /// Records one answer. Labels are bounded whatever clients send: an unknown method or route is `other`,
    /// a status outside 100-599 is 0.
    public func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        let route = Self.knownRoutes.contains(route) ? route : Self.other
        let method = Self.knownMethods.contains(method) ? method : Self.other
        let status = (100...599).contains(status) ? status : 0
        state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            state.latency[route, default: PrometheusHistogram(bounds: Self.latencyBuckets)].observe(seconds)
        }
    }

    public func recordPushAccepted(deliveries: Int) {
        state.withLock { state in
            state.pushesAccepted += 1
            state.deliveriesEnqueued += deliveries
        }
    }

    /// A Live Activity start, update or end written to the outbox.
    public func recordActivityEvent() { state.withLock { $0.activityEvents += 1 } }
    public func recordRateLimited() { state.withLock { $0.rateLimited += 1 } }

    /// A Live Activity start refused by a budget the mini-apps share, or a push sent at priority 5 because an
    /// activity's alerted budget was spent. `partner` is the mini-app id (bounded: one per partner row).
    public func recordLiveActivityBudget(partner: String, reason: LiveActivityBudgetReason) {
        state.withLock { $0.liveActivityBudget[BudgetKey(partner: partner, reason: reason.rawValue), default: 0] += 1 }
    }
    public func recordIdempotentReplay() { state.withLock { $0.idempotentReplays += 1 } }
    /// A push the batch statement sent back whose slots were signed again for the users it resolved to.
    func recordPushResubmitted() { state.withLock { $0.pushesResubmitted += 1 } }
    /// A push written by the two-round-trip path (`PushStore`), rendered for each device once resolved.
    func recordPushRendered() { state.withLock { $0.pushesRendered += 1 } }
    func recordSuspendedRefusal(miniAppID: String) {
        state.withLock { $0.suspendedRefusals[miniAppID, default: 0] += 1 }
    }
    func recordPreviousCredential(_ credential: PreviousCredential) {
        state.withLock { $0.previousCredentials[credential, default: 0] += 1 }
    }

    /// The exposition text for `GET /metrics`; `preferWaiting` is the number of `Prefer: wait`
    /// requests waiting now.
    public func render(preferWaiting: Int = 0, writer: (batches: Int, pushes: Int) = (0, 0)) -> String {
        let snapshot = state.withLock { $0 }
        var out = PrometheusText()
        out.family(
            "herald_intake_requests_total", .counter,
            help: "HTTP requests answered, by route, method and status.")
        for (key, count) in snapshot.requests.sorted(by: {
            ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
        }) {
            out.sample(
                "herald_intake_requests_total",
                labels: "route=\"\(key.route)\",method=\"\(key.method)\",status=\"\(key.status)\"", count)
        }
        out.family("herald_intake_request_duration_seconds", .histogram, help: "Time to answer a request, by route.")
        for (route, histogram) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            out.histogram("herald_intake_request_duration_seconds", labels: "route=\"\(route)\"", histogram)
        }
        out.single(
            "herald_intake_push_requests_accepted_total", .counter, help: "Push requests written to the outbox.",
            snapshot.pushesAccepted)
        out.single(
            "herald_intake_deliveries_enqueued_total", .counter, help: "Deliveries written to the outbox.",
            snapshot.deliveriesEnqueued)
        out.single(
            "herald_intake_activity_events_accepted_total", .counter,
            help: "Live Activity starts, updates and ends written.", snapshot.activityEvents)
        out.family(
            "herald_intake_live_activity_budget_total", .counter,
            help: "Live Activity starts refused and "
                + "alerted pushes sent silent by the shared budgets, by partner and reason.")
        for (key, count) in snapshot.liveActivityBudget.sorted(by: {
            ($0.key.partner, $0.key.reason) < ($1.key.partner, $1.key.reason)
        }) {
            let labels = "partner=\"\(PrometheusText.escaped(key.partner))\",reason=\"\(key.reason)\""
            out.sample("herald_intake_live_activity_budget_total", labels: labels, count)
        }
        out.single(
            "herald_intake_rate_limited_total", .counter,
            help: "Push requests refused by a partner's rate limit.", snapshot.rateLimited)
        out.single(
            "herald_intake_idempotent_replays_total", .counter,
            help: "Push requests answered from a stored idempotent response.", snapshot.idempotentReplays)
        out.family(
            "herald_intake_previous_credential_requests_total", .counter,
            help: "Requests made with a rotated "
                + "credential still accepted: HERALD_ADMIN_TOKEN_PREVIOUS, HERALD_HOST_TOKEN_PREVIOUS, or a partner's key "
                + "before its last rotation (by partner).")
        let previous = snapshot.previousCredentials.map { (labels: Self.labels($0.key), count: $0.value) }
        for (labels, count) in previous.sorted(by: { $0.labels < $1.labels }) {
            out.sample("herald_intake_previous_credential_requests_total", labels: labels, count)
        }
        out.family(
            "herald_intake_suspended_partner_requests_total", .counter,
            help: "Requests refused "
                + "(403 partner_suspended) because their partner is suspended, by partner.")
        for (partner, count) in snapshot.suspendedRefusals.sorted(by: { $0.key < $1.key }) {
            out.sample(
                "herald_intake_suspended_partner_requests_total",
                labels: "partner=\"\(PrometheusText.escaped(partner))\"", count)
        }
        out.single(
            "herald_intake_prefer_waiting", .gauge, help: "Prefer: wait requests waiting now (no thread held).",
            preferWaiting)
        out.single(
            "herald_intake_push_batches_total", .counter,
            help: "Transactions of the push writer (group commit, herald_intake_push).",
            writer.batches)
        out.single(
            "herald_intake_push_batched_total", .counter,
            help: "Pushes the push writer sent in those transactions.", writer.pushes)
        out.single(
            "herald_intake_push_resubmitted_total", .counter,
            help: "Pushes the push writer sent twice: their first"
                + " slots were signed for other users than their recipients resolved to.", snapshot.pushesResubmitted)
        out.single(
            "herald_intake_push_rendered_total", .counter,
            help: "Pushes written by the two-round-trip path: more"
                + " users or devices than the slots rendered up front.", snapshot.pushesRendered)
        return out.text
    }

    private static func labels(_ credential: PreviousCredential) -> String {
        switch credential {
        case .adminToken: "credential=\"admin_token\""
        case .hostToken: "credential=\"host_token\""
        case .partnerKey(let miniAppID): "credential=\"partner_key\",partner=\"\(PrometheusText.escaped(miniAppID))\""
        }
    }
}
