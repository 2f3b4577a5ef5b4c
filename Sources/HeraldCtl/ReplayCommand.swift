import Foundation
import HeraldCore
import Postgres
import Store

/// `heraldctl replay`: failed, dead or expired deliveries back into the queue.
enum ReplayCommand {
    static let options: Set<String> = [
        "json", "request", "partner", "since", "until", "outcome", "reason",
        "realtime", "dry-run",
    ]

    static func run(pool: PostgresPool, arguments: Arguments, printer: Printer, fallbackTTLSeconds: Int) throws {
        try arguments.allowOnly(options)
        try arguments.single(["partner", "since", "until", "reason"])
        guard arguments.positional.isEmpty else { throw UsageError(message: "replay takes options only") }
        let store = ReplayStore(pool: pool)
        var selection = try selection(arguments, now: printer.now)
        if let ids = try Commands.partnerIDs(arguments, pool: pool) { selection.partnerIDs = ids }
        let dryRun = arguments.flag("dry-run")
        let lane = arguments.flag("realtime") ? 0 : 1
        let showProgress = printer.style != .json && isatty(2) == 1
        let counts = try store.replay(selection, lane: lane, dryRun: dryRun, fallbackTTLSeconds: fallbackTTLSeconds) {
            total in
            if showProgress {
                FileHandle.standardError.write(
                    Data(
                        "\rreplay: \(total.matched) matched, \(total.replayed) \(dryRun ? "replayable" : "replayed")"
                            .utf8))
            }
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        if !dryRun {
            try Commands.auditReplay(
                "deliveries.replayed", pool: pool, partnerIDs: selection.partnerIDs, arguments: arguments,
                matched: counts.matched, replayed: counts.replayed)
        }
        printer.emit(json(counts, dryRun: dryRun)) { text(counts, dryRun: dryRun, lane: lane, $0) }
    }

    /// The selectors, checked: at least one of them (outcomes alone would replay all history).
    static func selection(_ arguments: Arguments, now: Date) throws(UsageError) -> ReplaySelection {
        var selection = ReplaySelection()
        for text in arguments.values("request") {
            guard let id = UUID(uuidString: text) else {
                throw UsageError(message: "--request must be a request id (UUID)")
            }
            selection.requestIDs.append(id)
        }
        selection.since = try arguments.time("since", now: now)
        selection.until = try arguments.time("until", now: now)
        if let since = selection.since, let until = selection.until, since >= until {
            throw UsageError(message: "--since must be before --until")
        }
        let outcomes = arguments.values("outcome")
        for outcome in outcomes where !ReplaySelection.replayableOutcomes.contains(outcome) {
            throw UsageError(message: "--outcome must be failed, dead or expired")
        }
        if !outcomes.isEmpty { selection.outcomes = Array(Set(outcomes)).sorted() }
        if let reason = arguments.option("reason") {
            guard !reason.isEmpty, reason.count <= 200 else {
                throw UsageError(message: "--reason must be 1-200 characters")
            }
            selection.reason = reason
        }
        guard selection.hasSelector || arguments.option("partner") != nil else {
            throw UsageError(message: "replay needs at least one of --request, --partner, --since, --until, --reason")
        }
        return selection
    }

    static func json(_ counts: ReplayCounts, dryRun: Bool) -> JSONValue {
        .object(
            [
                ("matched", .number(Double(counts.matched))),
                ("replayed", .number(Double(dryRun ? 0 : counts.replayed))),
                (
                    "skipped",
                    .object([
                        ("token_invalid", .number(Double(counts.tokenInvalid))),
                        ("opted_out", .number(Double(counts.optedOut))),
                        ("device_removed", .number(Double(counts.deviceRemoved))),
                        ("already_replayed", .number(Double(counts.alreadyReplayed))),
                        ("partner_revoked", .number(Double(counts.partnerRevoked))),
                        ("retracted", .number(Double(counts.retracted))),
                    ])
                ),
            ] + (dryRun ? [("wouldReplay", .number(Double(counts.replayed)))] : []))
    }

    static func text(_ counts: ReplayCounts, dryRun: Bool, lane: Int, _ format: TextFormat) -> String {
        let skipped: [(String, Int)] = [
            ("token_invalid", counts.tokenInvalid), ("opted_out", counts.optedOut),
            ("device_removed", counts.deviceRemoved),
            ("already_replayed", counts.alreadyReplayed),
            ("partner_revoked", counts.partnerRevoked),
            ("retracted", counts.retracted),
        ]
        let laneName = StatsCommand.laneName(lane)
        guard format.isTerminal else {
            return ([("matched", counts.matched), (dryRun ? "would_replay" : "replayed", counts.replayed)] + skipped)
                .map { "\($0.0)\t\($0.1)" }.joined(separator: "\n")
        }
        let head =
            dryRun
            ? "dry run: \(counts.replayed) of \(counts.matched) matched deliveries would be replayed (\(laneName) lane); nothing changed"
            : "replayed \(counts.replayed) of \(counts.matched) matched deliveries into the \(laneName) lane"
        return head + "\n\n" + format.table(["SKIPPED", "ROWS"], skipped.map { [$0.0, String($0.1)] })
    }
}
