import Foundation
import HeraldCore
import Postgres
import Store

/// `heraldctl tokens`: token invalidations over a window by upstream, token and reason, so an operator
/// sees a storm (one reason, one upstream, many devices at once) at a glance.
enum TokensCommand {
    static func run(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        try arguments.allowOnly(["json", "since", "until"])
        try arguments.single(["since", "until"])
        guard arguments.positional.isEmpty else { throw UsageError(message: "tokens takes no arguments") }
        let until = try arguments.time("until", now: printer.now) ?? printer.now
        let since = try arguments.time("since", now: printer.now) ?? until.addingTimeInterval(-86_400)
        guard since < until else { throw UsageError(message: "--since must be before --until") }
        let report = try TokenReportStore(pool: pool).report(since: since, until: until)
        printer.emit(json(report)) { text(report, $0) }
    }

    static func json(_ report: TokenReport) -> JSONValue {
        .object([
            ("since", .string(ISO8601.format(report.since))), ("until", .string(ISO8601.format(report.until))),
            (
                "invalidations",
                .array(
                    report.lines.map {
                        .object([
                            ("upstream", .string($0.upstream)), ("token", .string($0.token)),
                            ("reason", .string($0.reason)),
                            ("count", .number(Double($0.count))), ("devices", .number(Double($0.devices))),
                            ("first", .string(ISO8601.format($0.first))), ("last", .string(ISO8601.format($0.last))),
                        ])
                    })
            ),
            ("total", .number(Double(report.lines.reduce(0) { $0 + $1.count }))),
            ("skipped", .object(TokenReportStore.skipReasons.map { ($0, .number(Double(report.skipped[$0] ?? 0))) })),
        ])
    }

    static func text(_ report: TokenReport, _ format: TextFormat) -> String {
        let rows = report.lines.map {
            [
                $0.upstream, $0.token, $0.reason, String($0.count), String($0.devices), format.time($0.first),
                format.time($0.last),
            ]
        }
        guard format.isTerminal else {
            var lines = rows.map { (["invalidations"] + $0).joined(separator: "\t") }
            lines += TokenReportStore.skipReasons.map { "skipped\t\($0)\t\(report.skipped[$0] ?? 0)" }
            return lines.joined(separator: "\n")
        }
        let window = "from \(format.time(report.since)) to \(format.time(report.until))"
        guard !rows.isEmpty else { return "no token invalidated \(window)" }
        let total = report.lines.reduce(0) { $0 + $1.count }
        let skipped = TokenReportStore.skipReasons.map { "\(report.skipped[$0] ?? 0) \($0)" }.joined(separator: ", ")
        return format.table(["UPSTREAM", "TOKEN", "REASON", "DELIVERIES", "DEVICES", "FIRST", "LAST"], rows)
            + "\n\n\(total) deliver\(total == 1 ? "y" : "ies") ended on a dead token \(window); sends skipped: \(skipped)"
    }
}
