import APNs
import Foundation
import HTTP2
import HTTPFetch
import HeraldCore
import ServiceSupport

// The settings of each background service of the worker. A setting read from the environment takes its
// default and range from the catalog (`Settings`); the others' defaults are written here, as the property's
// initial value. `WorkerConfiguration.fromEnvironment` reads overrides and each `validate()` states the rules,
// naming the environment variable.

/// The claim loop: how much to lease and how it waits for work.
public struct ClaimerConfiguration: Sendable, Equatable {
    /// Deliveries per claim statement (HERALD_BATCH_SIZE). 500 rather than 200: a claim's and a
    /// completion's statements cost Postgres about a fifth less per delivery at 500, and a group row's members come 50 at a time.
    public var batchSize = Settings.batchSize.integer
    /// Deliveries claimed and not yet recorded, at most (HERALD_WORKER_MAX_IN_FLIGHT). Sends per second are at
    /// most the streams in flight over the upstream's round trip: 3 connections x 1,000 streams (APNs' limit) at
    /// 80 ms is 37,500/s (bench/rtt: one worker 87% of that, two 38,000/s, the two cores' bound). A delivery is held a little longer than its send (waiting for a stream, then for its
    /// completion statement), so the bound is twice the streams of one upstream: the streams stay full, with a
    /// claim or two queued behind them, and none waits on Postgres.
    public var maxInFlight = Settings.workerMaxInFlight.integer
    /// Of those, bulk-lane rows (backfills, replays) at most (HERALD_WORKER_MAX_BULK_IN_FLIGHT): a
    /// realtime row claimed while a backfill drains waits behind at most this many bulk sends.
    public var maxBulkInFlight = Settings.workerMaxBulkInFlight.integer
    /// A claimed row not recorded within this time is rescued by any worker (HERALD_LEASE_SECONDS).
    public var leaseSeconds = Settings.leaseSeconds.integer
    /// The poll fallback: how long the loop sleeps when no NOTIFY arrives (HERALD_POLL_INTERVAL_MS).
    public var pollInterval = Settings.pollInterval.duration
    /// After a claim that emptied the queue, the next claim waits at least this long, so that live
    /// traffic is claimed in batches rather than one claim per NOTIFY (HERALD_CLAIM_SPACING_MS).
    public var minimumClaimSpacing = Settings.claimSpacing.duration
    /// How often a claim ignores the cursors and considers every due row.
    public var fullScanInterval: Duration = .seconds(5)
    /// The partner pushes one user gets in a sliding hour from all mini-apps, at most; beyond it a delivery is
    /// suppressed (`user_cap`). 0 turns the cap off (HERALD_USER_MAX_PUSHES_PER_HOUR; functions/user_guards.sql).
    /// With it on, intakes lease this worker no rows at their write: every partner push is counted by a claim.
    public var userMaxPushesPerHour = Settings.userMaxPushesPerHour.integer

    public func validate() throws(ConfigurationError) {
        try check(batchSize, Settings.batchSize)
        try check(maxInFlight, Settings.workerMaxInFlight)
        try check(maxBulkInFlight, Settings.workerMaxBulkInFlight)
        try check(leaseSeconds, Settings.leaseSeconds)
        try check(pollInterval, Settings.pollInterval)
        try check(minimumClaimSpacing, Settings.claimSpacing)
        try check(fullScanInterval, .milliseconds(100)...(.seconds(600)), "fullScanInterval")
        try check(userMaxPushesPerHour, Settings.userMaxPushesPerHour)
    }
}

/// The completer: batched recording of outcomes.
public struct CompleterConfiguration: Sendable, Equatable {
    /// Outcomes per completion statement, at most.
    public var maxBatch = 500
    /// How long the answered members of a group row wait for the rest of its claimed members before they
    /// are recorded without them. A group recorded whole in one statement costs Postgres about half what
    /// one recorded in pieces does (sql/functions/complete_deliveries.sql); its members' answers come within a
    /// round trip of each other, so the wait is short unless an upstream is slow. Zero records every
    /// outcome as soon as the previous statement is done.
    public var groupHold: Duration = .milliseconds(100)
    /// A completion statement starts at most this often, unless `maxBatch` outcomes wait. At moderate
    /// rates most of a statement's cost is starting its plans, whatever its rows (a statement of one
    /// outcome costs Postgres about as much as the claim of that push): waiting gathers more outcomes
    /// into each. At 250 pushes/s across two workers, 20 ms made 0.4 statements a push and 50 ms makes
    /// 0.16. Nothing waits on a completion to send (the sends are done), so the delay shows only as a
    /// request's status, webhook or `Prefer: wait` answer coming up to this much later, less than an
    /// upstream's own round trip from a data centre. Zero records as soon as the previous statement is
    /// done (HERALD_COMPLETION_INTERVAL_MS).
    public var minimumInterval = Settings.completionInterval.duration

    public func validate() throws(ConfigurationError) {
        try check(maxBatch, 1...10_000, "completer.maxBatch")
        try check(groupHold, .zero...(.seconds(5)), "completer.groupHold")
        try check(minimumInterval, Settings.completionInterval)
    }
}

/// The rescuer: returns rows whose lease expired (a crashed worker's) to pending.
public struct RescuerConfiguration: Sendable, Equatable {
    /// nil: a third of the lease (a crashed worker's rows wait at most 4/3 of a lease).
    public var interval: Duration?
    /// Rows per rescue statement.
    public var limit = 1000

    public func interval(leaseSeconds: Int) -> Duration { interval ?? .seconds(max(1.0, Double(leaseSeconds) / 3)) }

    public func validate() throws(ConfigurationError) {
        if let interval { try check(interval, .milliseconds(100)...(.seconds(3600)), "rescuer.interval") }
        try check(limit, 1...100_000, "rescuer.limit")
    }
}

/// The lease extender: sends that take long (a queue inside the HTTP/2 client, a paused upstream's
/// probe, a slow answer) keep their rows' leases, so no other worker sends them meanwhile.
public struct LeaseExtenderConfiguration: Sendable, Equatable {
    /// nil: a third of the lease. Rows held longer than this get their lease renewed.
    public var interval: Duration?

    public func interval(leaseSeconds: Int) -> Duration { interval ?? .seconds(max(1.0, Double(leaseSeconds) / 3)) }

    public func validate() throws(ConfigurationError) {
        if let interval { try check(interval, .milliseconds(100)...(.seconds(3600)), "leaseExtender.interval") }
    }
}

/// The queue sampler: when the next scheduled row is due.
public struct QueueSamplerConfiguration: Sendable, Equatable {
    public var interval: Duration = .seconds(2)

    public func validate() throws(ConfigurationError) {
        try check(interval, .milliseconds(100)...(.seconds(600)), "sampler.interval")
    }
}

/// The autoscaling gauges: due rows and the oldest due age per lane (QueueGaugeStore), for an HPA
/// that scales the workers on queue depth (docs/deployment.md). Every worker exports the same
/// figures; slower than the sampler, since an autoscaler reacts in tens of seconds anyway.
public struct QueueGaugeConfiguration: Sendable, Equatable {
    /// HERALD_QUEUE_GAUGE_INTERVAL_MS.
    public var interval = Settings.queueGaugeInterval.duration

    public func validate() throws(ConfigurationError) {
        try check(interval, Settings.queueGaugeInterval)
    }
}

/// The heartbeat: the worker's row in worker_heartbeats (sql/035_console.sql), which the console and
/// `heraldctl workers` read; a worker missing three beats is shown lost.
public struct HeartbeatConfiguration: Sendable, Equatable {
    /// HERALD_HEARTBEAT_INTERVAL_MS.
    public var interval = Settings.heartbeatInterval.duration

    public func validate() throws(ConfigurationError) {
        try check(interval, Settings.heartbeatInterval)
    }
}

/// The Live Activity TTL sweep: ends activities past their TTL (sql/functions/expire_activities.sql,
/// herald_expire_activities). Every worker sweeps; SKIP LOCKED gives each activity to one of them.
public struct ActivitySweeperConfiguration: Sendable, Equatable {
    /// HERALD_ACTIVITY_SWEEP_ENABLED (1 or 0).
    public var enabled = Settings.activitySweepEnabled.flag
    /// How often a sweep looks for due activities (HERALD_ACTIVITY_SWEEP_INTERVAL_MS): an activity ends
    /// within about this long after its TTL.
    public var interval = Settings.activitySweepInterval.duration
    /// Activities per sweep transaction (HERALD_ACTIVITY_SWEEP_BATCH): short transactions, so a sweep of
    /// many activities leaves room for the other maintenance statements that share the session.
    public var batchSize = Settings.activitySweepBatch.integer
    /// HERALD_LA_START_CONFIRM_SECONDS: how long after a push-to-start reached APNs the iPhone's update token
    /// may take before the start counts as having created nothing (`unconfirmed`; its held updates dropped).
    public var startConfirmation = Settings.liveActivityStartConfirmSeconds.duration

    public func validate() throws(ConfigurationError) {
        try check(interval, Settings.activitySweepInterval)
        try check(batchSize, Settings.activitySweepBatch)
        try check(startConfirmation, Settings.liveActivityStartConfirmSeconds)
    }
}

/// The listener: LISTEN for new work (off for connection poolers in transaction mode: poll only).
public struct ListenerConfiguration: Sendable, Equatable {
    /// HERALD_WORKER_LISTEN.
    public var enabled = Settings.workerListen.flag
    /// How long one wait for notifications lasts (stop is noticed within it).
    public var waitSlice: Duration = .milliseconds(250)

    public func validate() throws(ConfigurationError) {
        try check(waitSlice, .milliseconds(10)...(.seconds(10)), "listener.waitSlice")
    }
}

/// How long an upstream that refused Herald's credentials or configuration stays paused: the first
/// pause `base`, doubling with each failed probe, at most `maximum` (HERALD_UPSTREAM_PAUSE_MAX_SECONDS).
public struct UpstreamPauseConfiguration: Sendable, Equatable {
    public var base: Duration = .seconds(1)
    public var maximum = Settings.upstreamPauseMaxSeconds.duration

    public var backoff: ExponentialBackoff { ExponentialBackoff(base: base, maximum: maximum) }

    public func validate() throws(ConfigurationError) {
        try check(base, .milliseconds(10)...(.seconds(3600)), "pauses.base")
        // From the first pause up, whatever it is (the catalog's range assumes the default 1 s).
        try check(
            maximum, base...Settings.upstreamPauseMaxSeconds.durationBounds.upperBound,
            Settings.upstreamPauseMaxSeconds.name)
    }
}

/// How suspect token verdicts are judged (TokenVerdicts).
public struct TokenVerdictConfiguration: Sendable, Equatable {
    /// Distinct tokens refused within `stormWindow`, with no success in between, that make a storm: a setup
    /// fault that pauses the upstream (HERALD_TOKEN_STORM_TOKENS).
    public var stormTokens = Settings.tokenStormTokens.integer
    /// HERALD_TOKEN_STORM_WINDOW_SECONDS.
    public var stormWindow = Settings.tokenStormWindowSeconds.duration
    /// How long a suspect delivery waits for the upstream to accept another token before it is deferred
    /// (HERALD_TOKEN_SUSPECT_WAIT_SECONDS); the lease extender keeps its lease meanwhile.
    public var wait = Settings.tokenSuspectWaitSeconds.duration
    /// An unconfirmed suspect is tried again after this, doubling for each unconfirmed verdict of the same
    /// delivery, at most `maximumRecheck`.
    public var recheck: Duration = .seconds(60)
    public var maximumRecheck: Duration = .seconds(3600)

    public func validate() throws(ConfigurationError) {
        try check(stormTokens, Settings.tokenStormTokens)
        try check(stormWindow, Settings.tokenStormWindowSeconds)
        // From 10 ms, below the catalog's whole seconds, for tests that set it directly.
        try check(
            wait, .milliseconds(10)...Settings.tokenSuspectWaitSeconds.durationBounds.upperBound,
            Settings.tokenSuspectWaitSeconds.name)
        try check(recheck, .milliseconds(10)...(.seconds(86_400)), "tokenVerdicts.recheck")
        try check(maximumRecheck, recheck...(.seconds(604_800)), "tokenVerdicts.maximumRecheck")
    }
}

func check(_ value: Int, _ range: ClosedRange<Int>, _ variable: String) throws(ConfigurationError) {
    guard range.contains(value) else {
        throw ConfigurationError(
            variable: variable, problem: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
    }
}

func check(_ value: Duration, _ range: ClosedRange<Duration>, _ variable: String) throws(ConfigurationError) {
    guard range.contains(value) else {
        throw ConfigurationError(
            variable: variable, problem: "must be between \(range.lowerBound) and \(range.upperBound)")
    }
}

/// `value` within the catalog's range of `setting`.
func check(_ value: Int, _ setting: Setting) throws(ConfigurationError) {
    try check(value, setting.bounds, setting.name)
}

/// `value` within the catalog's range of `setting`, in its unit.
func check(_ value: Duration, _ setting: Setting) throws(ConfigurationError) {
    try check(value, setting.durationBounds, setting.name)
}

/// The webhook sender: partners' delivery webhooks, signed, retried for 24 hours.
public struct WebhookSenderConfiguration: Sendable, Equatable {
    /// HERALD_WEBHOOKS_ENABLED: 0 leaves the webhooks to the other workers.
    public var enabled = Settings.webhooksEnabled.flag
    /// Events this worker sends at once (HERALD_WEBHOOK_MAX_IN_FLIGHT).
    public var maxInFlight = Settings.webhookMaxInFlight.integer
    /// Events of one partner this worker sends at once (HERALD_WEBHOOK_CONCURRENCY_PER_PARTNER): a slow or
    /// failing endpoint holds at most this many of the sender's slots, the others keep flowing.
    public var perPartner = Settings.webhookConcurrencyPerPartner.integer
    /// How often the sender looks for due events while it finds none (HERALD_WEBHOOK_POLL_MS).
    public var pollInterval = Settings.webhookPoll.duration
    /// One POST's whole exchange.
    public var requestTimeout: Duration = .seconds(10)
    /// A claimed event whose attempt is not recorded within this (a crashed worker's) is sent again.
    public var leaseSeconds = 60
    public var retry = WebhookRetryPolicy()
    /// HERALD_WEBHOOK_ALLOW_PRIVATE and HERALD_CA_FILE.
    public var fetch = HTTPFetchConfiguration()

    public func validate() throws(ConfigurationError) {
        try check(maxInFlight, Settings.webhookMaxInFlight)
        try check(perPartner, Settings.webhookConcurrencyPerPartner)
        try check(pollInterval, Settings.webhookPoll)
        try check(requestTimeout, .milliseconds(100)...(.seconds(60)), "webhooks.requestTimeout")
        guard Duration.seconds(leaseSeconds) > requestTimeout * 2 else {
            throw ConfigurationError(
                variable: "webhooks.leaseSeconds", problem: "must be over twice the request timeout")
        }
        try fetch.validate()
    }
}

/// The broadcast channel sender (iOS 18 broadcast channels): runs where APNs is configured.
public struct ChannelSenderConfiguration: Sendable, Equatable {
    /// HERALD_CHANNELS_ENABLED: 0 leaves the channels to the other workers.
    public var enabled = Settings.channelsEnabled.flag
    /// The APNs environment channels are made and broadcast in (HERALD_APNS_CHANNEL_ENVIRONMENT): the one the host
    /// app's followers run (App Store and TestFlight builds: production).
    public var environment = APNsEnvironment(rawValue: Settings.apnsChannelEnvironment.text)!
    /// The channel management host (HERALD_APNS_CHANNEL_URL); nil: Apple's for `environment`
    /// (`APNsChannels.defaultManagementURL`).
    public var managementURL: String?
    /// Channel calls this worker makes at once (HERALD_CHANNEL_MAX_IN_FLIGHT).
    public var maxInFlight = Settings.channelMaxInFlight.integer
    /// How often the sender looks for due channels while it finds none (HERALD_CHANNEL_POLL_MS): the TTL's ends are
    /// found on this beat, and a partner's change when no notification comes (HERALD_WORKER_LISTEN=0, behind a
    /// transaction pooler; the listener wakes the sender at once otherwise).
    public var pollInterval = Settings.channelPoll.duration
    /// A channel whose call is not recorded within this (a crashed worker's) is taken again.
    public var leaseSeconds = 30
    /// Between tries after 429, 5xx, a timeout or a setup fault.
    public var retry = ExponentialBackoff(base: .seconds(1), maximum: .seconds(300))
    /// The sweep of channels APNs has and Herald does not (ChannelSweeper).
    public var sweep = ChannelSweepConfiguration()

    public func validate() throws(ConfigurationError) {
        try check(maxInFlight, Settings.channelMaxInFlight)
        try check(pollInterval, Settings.channelPoll)
        try sweep.validate()
        try check(leaseSeconds, 5...3_600, "channels.leaseSeconds")
        if let managementURL {
            guard let url = try? UpstreamURL(managementURL), url.isOrigin else {
                throw ConfigurationError(
                    variable: Settings.apnsChannelURL.name,
                    problem: "must be an http:// or https:// scheme, host and optional port, without a path")
            }
        }
    }
}

/// The channel sweep (ChannelSweeper): list the app's channels at APNs, delete those Herald has none for.
public struct ChannelSweepConfiguration: Sendable, Equatable {
    /// HERALD_CHANNEL_SWEEP_ENABLED.
    public var enabled = Settings.channelSweepEnabled.flag
    /// HERALD_CHANNEL_SWEEP_SECONDS: between sweeps while none is asked for.
    public var interval = Settings.channelSweepInterval.duration
    /// HERALD_CHANNEL_SWEEP_MAX_DELETES: unknown channels deleted per sweep.
    public var maxDeletes = Settings.channelSweepMaxDeletes.integer
    /// How long a channel must stay unknown, from the sweep that first found it to one that finds it again, before
    /// it is deleted: longer than any create in flight at the first sweep takes to be recorded (two channel leases,
    /// `WorkerConfiguration.fromEnvironment`).
    public var confirmation: Duration = .seconds(60)

    public func validate() throws(ConfigurationError) {
        try check(interval, Settings.channelSweepInterval)
        try check(maxDeletes, Settings.channelSweepMaxDeletes)
        try check(confirmation, .milliseconds(1)...(.seconds(86_400)), "channels.sweep.confirmation")
    }
}
