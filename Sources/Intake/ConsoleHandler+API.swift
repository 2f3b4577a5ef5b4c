import Foundation
import HTTPServer
import HeraldCore
import Store

/// The console's JSON endpoints (docs/api.md, "Operator console"). Query values are checked here: a bad one is
/// a 400 naming it, never a 500.
extension ConsoleHandler {
    func overview(_ request: RoutedRequest) throws -> HTTPResponse {
        let queue = try stats.stats()
        let minutes = try console.lastHour()
        let live = try workers.list(pool: console.pool)
        var totals: [String: Int] = [:]
        for group in queue.queue { totals["\(group.state)|\(group.lane)", default: 0] += group.count }
        let states = ["pending", "scheduled", "leased"]
        let byStateAndLane: [JSONValue] = states.flatMap { state in
            QueueGaugeStore.lanes.map { lane in
                .object([
                    ("state", .string(state)), ("lane", .string(lane.name)),
                    ("count", .number(Double(totals["\(state)|\(lane.number)"] ?? 0))),
                ])
            }
        }
        let hour = queue.outcomes.first { $0.window == "1h" }?.counts ?? []
        let recent = queue.outcomes.first { $0.window == "5m" }?.counts ?? []
        var paused: [JSONValue] = []
        for worker in live where !worker.lost {
            for upstream in worker.heartbeat.pausedUpstreams {
                paused.append(
                    .object([("upstream", .string(upstream)), ("workerId", .string(worker.heartbeat.workerID))]))
            }
        }
        return Self.json(
            .object([
                ("queue", .array(byStateAndLane)),
                (
                    "queueByPartner",
                    .array(
                        queue.queue.map { group in
                            .object([
                                ("state", .string(group.state)), ("lane", .string(Self.laneName(group.lane))),
                                ("miniAppId", .string(group.miniAppID)), ("count", .number(Double(group.count))),
                            ])
                        })
                ),
                ("oldestDueSeconds", .number((queue.oldestDueSeconds * 10).rounded() / 10)),
                (
                    "deliveriesPerSecond",
                    .object([
                        ("last5m", .number(Self.rate(recent, seconds: 300))),
                        ("lastHour", .number(Self.rate(hour, seconds: 3_600))),
                    ])
                ),
                ("outcomesLastHour", .object(hour.map { ($0.outcome, .number(Double($0.count))) })),
                (
                    "lastHour",
                    .array(
                        minutes.map { minute in
                            .object([
                                ("minutesAgo", .number(Double(minute.minutesAgo))),
                                (
                                    "counts",
                                    .object(StatsStore.outcomes.map { ($0, .number(Double(minute.counts[$0] ?? 0))) })
                                ),
                            ])
                        })
                ),
                ("pausedUpstreams", .array(paused)),
                ("workers", .array(live.map(Self.workerJSON))),
            ]))
    }

    func workerList(_ request: RoutedRequest) throws -> HTTPResponse {
        let live = try workers.list(pool: console.pool)
        return Self.json(.object([("workers", .array(live.map(Self.workerJSON)))]))
    }

    func failures(_ request: RoutedRequest) throws -> HTTPResponse {
        let query = ConsoleQuery(values: request.http.query)
        let window = try query.reportWindow()
        let groups = try console.failures(since: window.since, miniAppID: try query.miniAppID("partner"))
        return Self.report(
            window, "groups",
            groups.map { group in
                .object([
                    ("miniAppId", .string(group.miniAppID)), ("outcome", .string(group.outcome)),
                    ("reason", group.reason.map { .string($0) } ?? .null),
                    ("count", .number(Double(group.count))),
                    ("firstAt", .string(ISO8601.format(group.firstAt))),
                    ("lastAt", .string(ISO8601.format(group.lastAt))),
                ])
            })
    }

    /// One failure group back in the queue (bulk lane), through ReplayStore as `heraldctl replay` does;
    /// `dryRun` counts without changing anything.
    func replay(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let fields = try JSONFields(request.jsonBody(), allowed: ["miniAppId", "outcome", "reason", "hours", "dryRun"])
        let miniAppID = try PartnerRules.miniAppID(try fields.requiredString("miniAppId"))
        let outcome = try fields.requiredString("outcome")
        guard ReplaySelection.replayableOutcomes.contains(outcome) else {
            throw HeraldError.invalidField("outcome", "outcome must be one of failed, dead, expired.")
        }
        let reason = try fields.string("reason")
        if let reason, reason.isEmpty || reason.unicodeScalars.count > 256 || TextRules.containsForbidden(reason) {
            throw HeraldError.invalidField(
                "reason", "reason must be 1-256 characters without refused characters, or null.")
        }
        let window = ReportWindow(hours: try fields.integer("hours", range: ReportWindow.hours))
        let dryRun = try fields.bool("dryRun") ?? true
        var selection = ReplaySelection()
        selection.partnerIDs = try replays.partnerIDs(miniAppID: miniAppID)
        guard !selection.partnerIDs.isEmpty else { throw HeraldError.notFound }
        selection.outcomes = [outcome]
        selection.reason = reason
        selection.since = window.since
        let counts = try replays.replay(selection, lane: 1, dryRun: dryRun, fallbackTTLSeconds: replayTTLSeconds)
        if !dryRun {
            logger.info(
                "console replay",
                [
                    ("miniAppId", .string(miniAppID)), ("outcome", .string(outcome)),
                    ("replayed", .number(Double(counts.replayed))),
                ])
            try audits.record(
                "deliveries.replayed", miniAppID: miniAppID,
                detail: .object([
                    ("outcome", .string(outcome)), ("reason", reason.map { .string($0) } ?? .null),
                    ("hours", .number(Double(window.hours))), ("matched", .number(Double(counts.matched))),
                    ("replayed", .number(Double(counts.replayed))),
                ]), by: actor)
        }
        return Self.json(
            .object([
                ("dryRun", .bool(dryRun)), ("matched", .number(Double(counts.matched))),
                ("replayed", .number(Double(counts.replayed))),
                (
                    "skipped",
                    .object([
                        ("tokenInvalid", .number(Double(counts.tokenInvalid))),
                        ("optedOut", .number(Double(counts.optedOut))),
                        ("deviceRemoved", .number(Double(counts.deviceRemoved))),
                        ("alreadyReplayed", .number(Double(counts.alreadyReplayed))),
                        ("partnerRevoked", .number(Double(counts.partnerRevoked))),
                        ("retracted", .number(Double(counts.retracted))),
                    ])
                ),
            ]))
    }

    func requests(_ request: RoutedRequest) throws -> HTTPResponse {
        let query = ConsoleQuery(values: request.http.query)
        var search = RequestSearch()
        search.id = try query.uuid("id")
        search.miniAppID = try query.miniAppID("partner")
        search.since = try query.date("since")
        search.until = try query.date("until")
        search.limit = try query.integer("limit", range: 1...500) ?? 50
        let rows = try console.requests(search)
        return Self.json(.object([("requests", .array(rows.map(Self.requestJSON)))]))
    }

    func requestDetail(_ request: RoutedRequest) throws -> HTTPResponse {
        let id = try request.uuid("requestId")
        var search = RequestSearch()
        search.id = id
        search.limit = 1
        guard let summary = try console.requests(search).first else { throw HeraldError.notFound }
        let deliveries = try console.deliveries(requestID: id, createdAt: summary.createdAt)
        var json = Self.requestJSON(summary)
        if case .object(var members) = json {
            members.append(
                (
                    "deliveryRows",
                    .array(
                        deliveries.map { delivery in
                            .object([
                                ("id", .string(delivery.id.uuidString.lowercased())),
                                ("service", .string(delivery.service)),
                                ("deviceId", .string(delivery.deviceID)), ("outcome", .string(delivery.outcome)),
                                ("reason", delivery.reason.map { .string($0) } ?? .null),
                                ("attempts", .number(Double(delivery.attempts))),
                                ("members", .number(Double(delivery.members))),
                                ("finishedAt", .string(ISO8601.format(delivery.finishedAt))),
                                ("replayed", .bool(delivery.replayed)),
                            ])
                        })
                ))
            json = .object(members)
        }
        return Self.json(json)
    }

    func partnerList(_ request: RoutedRequest) throws -> HTTPResponse {
        let usage = try console.partnerUsage()
        let engagement = try console.partnerEngagement(since: Date().addingTimeInterval(-Self.engagementWindow))
        let rows = try partners.list()
        return Self.json(
            .object([
                (
                    "partners",
                    .array(
                        rows.map { record in
                            guard case .object(var members) = record.json() else { return record.json() }
                            let use = usage[record.id]
                            members.append(
                                (
                                    "usage",
                                    use.map { use in
                                        .object([
                                            ("lastMinute", .number(Double(use.lastMinute))),
                                            ("lastDay", .number(Double(use.lastDay))),
                                            ("webhookFailedLastDay", .number(Double(use.webhookFailedDay))),
                                            ("webhookLastError", use.webhookLastError.map { .string($0) } ?? .null),
                                        ])
                                    } ?? .null
                                ))
                            members.append(("engagement", Self.engagementJSON(engagement[record.id])))
                            return .object(members)
                        })
                )
            ]))
    }

    /// The window of the partners' delivery and open rates: pushes accepted in the last 7 days.
    static let engagementWindow: TimeInterval = 7 * 86_400

    /// A partner's sent, received and opened deliveries of the window, and the rates (null before a send).
    static func engagementJSON(_ engagement: PartnerEngagement?) -> JSONValue {
        guard let engagement else { return .null }
        return .object([
            ("windowDays", .number(engagementWindow / 86_400)), ("sent", .number(Double(engagement.sent))),
            ("received", .number(Double(engagement.received))), ("opened", .number(Double(engagement.opened))),
            ("deliveryRate", engagement.deliveryRate.map { .number($0) } ?? .null),
            ("openRate", engagement.openRate.map { .number($0) } ?? .null),
        ])
    }

    func tokenReport(_ request: RoutedRequest) throws -> HTTPResponse {
        let until = Date()
        let window = try ConsoleQuery(values: request.http.query).reportWindow(now: until)
        let report = try tokens.report(since: window.since, until: until)
        return Self.json(
            .object([
                ("since", .string(ISO8601.format(report.since))), ("until", .string(ISO8601.format(report.until))),
                (
                    "lines",
                    .array(
                        report.lines.map { line in
                            .object([
                                ("upstream", .string(line.upstream)), ("token", .string(line.token)),
                                ("reason", .string(line.reason)),
                                ("count", .number(Double(line.count))), ("devices", .number(Double(line.devices))),
                                ("firstAt", .string(ISO8601.format(line.first))),
                                ("lastAt", .string(ISO8601.format(line.last))),
                            ])
                        })
                ),
                (
                    "skipped",
                    .object(report.skipped.sorted { $0.key < $1.key }.map { ($0.key, .number(Double($0.value))) })
                ),
            ]))
    }

    static func requestJSON(_ row: RequestSummary) -> JSONValue {
        .object([
            ("id", .string(row.id.uuidString.lowercased())), ("createdAt", .string(ISO8601.format(row.createdAt))),
            ("miniAppId", .string(row.miniAppID)), ("title", .string(row.title)), ("lane", .string(laneName(row.lane))),
            ("recipients", .number(Double(row.recipients))), ("deliveries", .number(Double(row.deliveries))),
            ("suppressed", .number(Double(row.suppressed + row.suppressedDeliveries))),
            ("sent", .number(Double(row.sent))), ("failed", .number(Double(row.failed))),
            ("superseded", .number(Double(row.superseded))), ("cancelled", .number(Double(row.cancelled))),
            ("pending", .number(Double(row.pending))), ("held", .number(Double(row.held))),
        ])
    }

    static func workerJSON(_ worker: WorkerStatus) -> JSONValue {
        let beat = worker.heartbeat
        return .object([
            ("workerId", .string(beat.workerID)), ("host", .string(beat.host)), ("version", .string(beat.version)),
            ("release", beat.release.map { .string($0) } ?? .null),
            ("startedAt", .string(ISO8601.format(beat.startedAt))),
            ("lastSeenAt", .string(ISO8601.format(worker.lastSeenAt))),
            ("secondsSinceSeen", .number((worker.secondsSinceSeen * 10).rounded() / 10)),
            ("status", .string(worker.lost ? "lost" : "live")), ("inFlight", .number(Double(beat.inFlight))),
            ("pausedUpstreams", .array(beat.pausedUpstreams.map { .string($0) })),
            ("claimsPerSecond", .number(beat.claimsPerSecond)),
        ])
    }

    static func laneName(_ lane: Int) -> String { lane == 0 ? "realtime" : "bulk" }

    static func rate(_ counts: [(outcome: String, count: Int)], seconds: Double) -> Double {
        (Double(counts.reduce(0) { $0 + $1.count }) / seconds * 100).rounded() / 100
    }
}

/// A console call's query arguments, each checked (400 naming it).
struct ConsoleQuery {
    let values: [String: String]

    /// An absent argument is no filter; an empty one is checked like any value (the page never sends one).
    func text(_ name: String) -> String? { values[name] }

    func integer(_ name: String, range: ClosedRange<Int>) throws(HeraldError) -> Int? {
        guard let text = text(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .invalidField(name, "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound).")
        }
        return value
    }

    /// The report's `hours` before `now`.
    func reportWindow(now: Date = Date()) throws(HeraldError) -> ReportWindow {
        ReportWindow(hours: try integer("hours", range: ReportWindow.hours), now: now)
    }

    func miniAppID(_ name: String) throws(HeraldError) -> String? {
        guard let text = text(name) else { return nil }
        guard Identifiers.isValidMiniAppID(text) else {
            throw .invalidField(
                name,
                "\(name) must be a miniAppId: 1-128 of letters, digits, '.', '_' and '-', not starting with '.', no '..'."
            )
        }
        return text
    }

    func uuid(_ name: String) throws(HeraldError) -> UUID? {
        guard let text = text(name) else { return nil }
        guard text.utf8.count == 36, let id = UUID(uuidString: text) else {
            throw .invalidField(name, "\(name) must be a UUID.")
        }
        return id
    }

    func date(_ name: String) throws(HeraldError) -> Date? {
        guard let text = text(name) else { return nil }
        // From 2000 to 9999: Postgres has no year 0, and nothing Herald wrote is older.
        guard let date = ISO8601.parse(text),
            (946_684_800.0..<253_402_300_800.0).contains(date.timeIntervalSince1970)
        else {
            throw .invalidField(name, "\(name) must be an ISO 8601 date-time, e.g. 2026-12-01T10:00:00Z.")
        }
        return date
    }
}
