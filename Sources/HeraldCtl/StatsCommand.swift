import Foundation
import HeraldCore
import Postgres
import Store

/// `heraldctl stats`: the outbox by state, lane and partner, the oldest due row's wait, and the
/// outcomes of the last 5 minutes and hour.
enum StatsCommand {
    static func run(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        try arguments.allowOnly(["json"])
        guard arguments.positional.isEmpty else { throw UsageError(message: "stats takes no arguments") }
        let stats = try StatsStore(pool: pool).stats()
        printer.emit(json(stats)) { text(stats, $0) }
    }

    static func laneName(_ lane: Int) -> String { lane == 0 ? "realtime" : "bulk" }

    static func json(_ stats: QueueStats) -> JSONValue {
        .object([
            (
                "queue",
                .array(
                    stats.queue.map {
                        .object([
                            ("state", .string($0.state)), ("lane", .string(laneName($0.lane))),
                            ("partner", .string($0.miniAppID)), ("count", .number(Double($0.count))),
                        ])
                    })
            ),
            ("oldestDueSeconds", .number((stats.oldestDueSeconds * 1000).rounded() / 1000)),
            (
                "outcomes",
                .object(
                    stats.outcomes.map { window in
                        (window.window, .object(window.counts.map { ($0.outcome, .number(Double($0.count))) }))
                    })
            ),
        ])
    }

    static func text(_ stats: QueueStats, _ format: TextFormat) -> String {
        let queueRows = stats.queue.map { [$0.state, laneName($0.lane), $0.miniAppID, String($0.count)] }
        let outcomeNames = StatsStore.outcomes
        guard format.isTerminal else {
            // One fact per line, first field saying which: `grep ^queue`, `awk -F'\t'`.
            var lines = queueRows.map { (["queue"] + $0).joined(separator: "\t") }
            lines.append("oldest_due_seconds\t\(String(format: "%.3f", stats.oldestDueSeconds))")
            for window in stats.outcomes {
                lines += window.counts.map { "outcomes\t\(window.window)\t\($0.outcome)\t\($0.count)" }
            }
            return lines.joined(separator: "\n")
        }
        var parts: [String] = []
        parts.append(
            queueRows.isEmpty ? "queue: empty" : format.table(["STATE", "LANE", "PARTNER", "ROWS"], queueRows))
        let total = stats.queue.reduce(0) { $0 + $1.count }
        parts.append(
            "\(total) row\(total == 1 ? "" : "s") queued; "
                + (stats.oldestDueSeconds > 0
                    ? "the oldest due row has waited \(RelativeTime.duration(stats.oldestDueSeconds))"
                    : "nothing is waiting"))
        parts.append(
            format.table(
                ["FINISHED"] + outcomeNames.map { $0.uppercased() },
                stats.outcomes.map { window in
                    ["last " + (window.window == "5m" ? "5 min" : "hour")] + window.counts.map { String($0.count) }
                }))
        return parts.joined(separator: "\n\n")
    }
}
