import Foundation
import HeraldCore
import Postgres
import Store

/// `heraldctl workers`: every worker seen in the last day from its heartbeat row (sql/035_console.sql), live or
/// lost (not seen for three of its heartbeat intervals), with the release each runs ("-" for a worker of a release
/// before sql/064_worker_release.sql): during a rolling upgrade, which are replaced yet.
enum WorkersCommand {
    static func run(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        try arguments.allowOnly(["json"])
        guard arguments.positional.isEmpty else { throw UsageError(message: "workers takes no arguments") }
        let workers = try WorkerHeartbeatStore().list(pool: pool)
        printer.emit(json(workers)) { text(workers, $0) }
    }

    static func json(_ workers: [WorkerStatus]) -> JSONValue {
        .object([
            (
                "workers",
                .array(
                    workers.map { worker in
                        let beat = worker.heartbeat
                        return .object([
                            ("workerId", .string(beat.workerID)), ("host", .string(beat.host)),
                            ("version", .string(beat.version)), ("release", beat.release.map { .string($0) } ?? .null),
                            ("status", .string(worker.lost ? "lost" : "live")),
                            ("startedAt", .string(ISO8601.format(beat.startedAt))),
                            ("lastSeenAt", .string(ISO8601.format(worker.lastSeenAt))),
                            ("inFlight", .number(Double(beat.inFlight))),
                            ("pausedUpstreams", .array(beat.pausedUpstreams.map { .string($0) })),
                            ("claimsPerSecond", .number(beat.claimsPerSecond)),
                        ])
                    })
            )
        ])
    }

    static func text(_ workers: [WorkerStatus], _ format: TextFormat) -> String {
        let rows = workers.map { worker in
            let beat = worker.heartbeat
            return [
                beat.workerID, beat.host, beat.version, worker.lost ? "lost" : "live", format.time(worker.lastSeenAt),
                format.time(beat.startedAt), String(beat.inFlight), String(beat.claimsPerSecond),
                beat.pausedUpstreams.isEmpty ? "-" : beat.pausedUpstreams.joined(separator: ","), beat.release ?? "-",
            ]
        }
        guard format.isTerminal else { return rows.map { $0.joined(separator: "\t") }.joined(separator: "\n") }
        guard !rows.isEmpty else { return "no worker has sent a heartbeat in the last day" }
        let lost = workers.filter(\.lost).count
        return format.table(
            [
                "WORKER", "HOST", "VERSION", "STATUS", "LAST SEEN", "STARTED", "IN FLIGHT", "CLAIMS/S",
                "PAUSED", "RELEASE",
            ], rows)
            + "\n\n\(workers.count - lost) live, \(lost) lost"
    }
}
