import Foundation
import HeraldCore
import Postgres
import Store

/// `heraldctl audit`: the admin audit trail, newest first (sql/047_admin_audit.sql).
enum AuditCommand {
    static func run(pool: PostgresPool, arguments: Arguments, printer: Printer) throws {
        try arguments.allowOnly(["json", "partner", "limit", "before"])
        try arguments.single(["partner", "limit", "before"])
        guard arguments.positional.isEmpty else { throw UsageError(message: "audit takes options only") }
        let limit = try arguments.integer("limit") ?? 50
        guard (1...1_000).contains(limit) else { throw UsageError(message: "--limit must be 1-1000") }
        let before = try arguments.integer("before")
        if let before, before < 1 { throw UsageError(message: "--before must be an entry's id") }
        let partnerIDs = try Commands.partnerIDs(arguments, pool: pool)
        if let partnerIDs, partnerIDs.count > 1 {
            throw CommandFailure(
                message: "\(partnerIDs.count) partners (revoked ones too) had this mini-app id: give the id")
        }
        let partnerID = partnerIDs?.first
        let entries = try AdminAuditStore(pool: pool).list(partnerID: partnerID, before: before, limit: limit)
        printer.emit(.object([("entries", .array(entries.map(\.json)))])) { text in
            entries.isEmpty
                ? "no entries"
                : text.table(
                    ["ID", "AT", "ACTOR", "CLIENT", "ACTION", "MINI-APP", "DETAIL"],
                    entries.map { entry in
                        [
                            String(entry.id), text.time(entry.at),
                            entry.actor + (entry.actorDetail.map { " \($0)" } ?? ""),
                            entry.client ?? "-", entry.action, entry.miniAppID ?? "-", JSONWriter.string(entry.detail),
                        ]
                    })
        }
    }
}
