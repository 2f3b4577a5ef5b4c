import Foundation
import HeraldCore
import Postgres
import Store

/// `heraldctl webhooks replay`: failed delivery webhooks sent again, each with a new 24-hour
/// window; its partner sees the same event id (`Herald-Event-Id`) it may already have seen.
enum WebhooksCommand {
    static func run(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        guard arguments.positional.first == "replay", arguments.positional.count == 1 else {
            throw UsageError(message: "webhooks needs the action replay")
        }
        try arguments.allowOnly(["json", "event", "partner", "since", "until", "dry-run"])
        try arguments.single(["partner", "since", "until"])
        var selection = WebhookReplaySelection()
        for text in arguments.values("event") {
            guard let id = UUID(uuidString: text) else {
                throw UsageError(message: "--event must be an event id (UUID)")
            }
            selection.eventIDs.append(id)
        }
        selection.since = try arguments.time("since", now: printer.now)
        selection.until = try arguments.time("until", now: printer.now)
        if let since = selection.since, let until = selection.until, since >= until {
            throw UsageError(message: "--since must be before --until")
        }
        if let ids = try Commands.partnerIDs(arguments, pool: pool) { selection.partnerIDs = ids }
        guard selection.hasSelector else {
            throw UsageError(message: "webhooks replay needs at least one of --event, --partner, --since, --until")
        }
        let dryRun = arguments.flag("dry-run")
        let counts = try WebhookStore(pool: pool).replay(selection, dryRun: dryRun, now: printer.now)
        if !dryRun {
            try Commands.auditReplay(
                "webhooks.replayed", pool: pool, partnerIDs: selection.partnerIDs, arguments: arguments,
                matched: counts.matched, replayed: counts.replayed)
        }
        let noWebhook = counts.matched - counts.replayable
        var members: [(key: String, value: JSONValue)] = [
            ("matched", .number(Double(counts.matched))), ("replayed", .number(Double(counts.replayed))),
            ("skipped", .object([("no_webhook", .number(Double(noWebhook)))])),
        ]
        if dryRun { members.append(("wouldReplay", .number(Double(counts.replayable)))) }
        printer.emit(.object(members)) { _ in
            let done =
                dryRun
                ? "\(counts.replayable) would be sent again (dry run: nothing changed)"
                : "\(counts.replayed) sent again"
            return "\(counts.matched) failed events matched: \(done)"
                + (noWebhook > 0 ? "; \(noWebhook) skipped (no webhook)" : "")
        }
    }
}
