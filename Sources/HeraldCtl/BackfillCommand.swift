import Foundation
import HeraldCore
import HeraldCrypto
import Postgres
import ServiceSupport
import Store

/// `heraldctl backfill sends FILE` and `heraldctl backfill users FILE`.
///
/// Streamed: lines are read, validated and written a batch at a time (HERALD_BACKFILL_BATCH_SIZE,
/// default 1,000), each batch in two round trips (recipients and taken keys pipelined, then one
/// statement writing every row of the batch) and one transaction. A bad line is reported and the
/// rest go on. SIGINT/SIGTERM stop after the batch in flight has committed; the summary then says
/// what was committed (`"interrupted":true`) and the exit status is 1.
enum BackfillCommand {
    static func run(pool: PostgresPool, arguments: Arguments, printer: Printer, environment: [String: String]) throws {
        try arguments.allowOnly(["json"])
        guard let kind = arguments.positional.first else { throw UsageError(message: "backfill needs sends or users") }
        guard kind == "sends" || kind == "users" else {
            throw UsageError(message: "unknown backfill sub-command \(kind)")
        }
        guard arguments.positional.count >= 2 else { throw UsageError(message: "backfill \(kind) needs a FILE") }
        guard arguments.positional.count == 2 else {
            throw UsageError(message: "unexpected argument \(arguments.positional[2])")
        }
        let reader = EnvironmentReader(environment: environment)
        let batchSize: Int
        do {
            batchSize = try reader.integer(Settings.backfillBatchSize)
        } catch { throw CommandFailure(message: error.description) }
        let input = try LineReader(path: arguments.positional[1])
        Interruption.install()
        if kind == "sends" {
            let settings: PushSettings
            do { settings = try PushSettings.read(reader) } catch { throw CommandFailure(message: error.description) }
            var run = SendsBackfill(store: BackfillStore(pool: pool), settings: settings, batchSize: batchSize)
            let summary = try run.load(input)
            printer.emit(summary.json) { text in summary.text(text) }
            if summary.interrupted { throw CommandFailure(message: "interrupted: the batches above were committed") }
        } else {
            var run = UsersBackfill(store: BackfillStore(pool: pool), batchSize: batchSize)
            let summary = try run.load(input)
            printer.emit(summary.json) { text in summary.text(text) }
            if summary.interrupted { throw CommandFailure(message: "interrupted: the batches above were committed") }
        }
    }
}

/// A line that was not loaded: its number, a stable code and a message.
struct RejectedLine: Error {
    let line: Int
    let code: String
    let message: String

    var json: JSONValue {
        .object([("line", .number(Double(line))), ("code", .string(code)), ("message", .string(message))])
    }

    static func of(_ line: Int, _ error: HeraldError) -> RejectedLine {
        RejectedLine(line: line, code: error.code, message: error.message)
    }
}

/// The JSON object of a line, or the line's rejection.
enum BackfillLine {
    static func parse(_ bytes: [UInt8], line: Int) -> Result<JSONValue, RejectedLine> {
        do {
            let json = try JSONParser.parse(bytes)
            guard json.objectMembers != nil else {
                return .failure(
                    RejectedLine(line: line, code: "invalid_json", message: "The line must be a JSON object."))
            }
            return .success(json)
        } catch {
            return .failure(
                RejectedLine(
                    line: line, code: "invalid_json",
                    message: "The line is not valid JSON: \(error.message) at byte \(error.offset)."))
        }
    }

    static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }
}

/// What `backfill sends` did.
struct SendsSummary {
    var lines = 0
    var accepted = 0
    var duplicates = 0
    var rejected: [RejectedLine] = []
    var deliveries = 0
    var interrupted = false

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("lines", .number(Double(lines))), ("accepted", .number(Double(accepted))),
            ("duplicates", .number(Double(duplicates))), ("rejected", .array(rejected.map(\.json))),
            ("deliveries", .number(Double(deliveries))),
        ]
        if interrupted { members.append(("interrupted", .bool(true))) }
        return .object(members)
    }

    func text(_ format: TextFormat) -> String {
        var pairs = [
            ("lines", "\(lines)"), ("accepted", "\(accepted)"), ("duplicates", "\(duplicates)"),
            ("rejected", "\(rejected.count)"), ("deliveries", "\(deliveries)"),
        ]
        if interrupted { pairs.append(("interrupted", "yes")) }
        return BackfillText.render(format, pairs, rejected)
    }
}

/// What `backfill users` did.
struct UsersSummary {
    var lines = 0
    var users = 0
    var devices = 0
    var rejected: [RejectedLine] = []
    var interrupted = false

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("lines", .number(Double(lines))), ("users", .number(Double(users))),
            ("devices", .number(Double(devices))), ("rejected", .array(rejected.map(\.json))),
        ]
        if interrupted { members.append(("interrupted", .bool(true))) }
        return .object(members)
    }

    func text(_ format: TextFormat) -> String {
        var pairs = [
            ("lines", "\(lines)"), ("users", "\(users)"), ("devices", "\(devices)"),
            ("rejected", "\(rejected.count)"),
        ]
        if interrupted { pairs.append(("interrupted", "yes")) }
        return BackfillText.render(format, pairs, rejected)
    }
}

enum BackfillText {
    /// The counts, then the rejected lines as a table (line, code, message).
    static func render(_ format: TextFormat, _ pairs: [(String, String)], _ rejected: [RejectedLine]) -> String {
        let counts = format.fields(pairs)
        guard !rejected.isEmpty else { return counts }
        let table = format.table(["LINE", "CODE", "MESSAGE"], rejected.map { ["\($0.line)", $0.code, $0.message] })
        return counts + "\n" + (format.isTerminal ? "\n" : "") + table
    }
}
