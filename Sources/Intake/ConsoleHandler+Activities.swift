import Foundation
import HTTPServer
import HeraldCore
import Store

/// The console's Live Activities and webhooks pages.
extension ConsoleHandler {
    func activities(_ request: RoutedRequest) throws -> HTTPResponse {
        let counts = try console.activityCounts()
        return Self.json(
            .object([
                (
                    "partners",
                    .array(
                        counts.map { row in
                            .object([
                                ("miniAppId", .string(row.miniAppID)), ("active", .number(Double(row.active))),
                                ("held", .number(Double(row.held))),
                            ])
                        })
                )
            ]))
    }

    func failedWebhooks(_ request: RoutedRequest) throws -> HTTPResponse {
        let window = try ConsoleQuery(values: request.http.query).reportWindow()
        let events = try console.failedWebhooks(since: window.since)
        return Self.report(
            window, "events",
            events.map { event in
                .object([
                    ("id", .string(event.id.uuidString.lowercased())),
                    ("miniAppId", .string(event.miniAppID)),
                    ("type", .string(event.type)),
                    ("subjectId", .string(event.subjectID.uuidString.lowercased())),
                    ("attempts", .number(Double(event.attempts))),
                    ("lastStatus", event.lastStatus.map { .number(Double($0)) } ?? .null),
                    ("lastError", event.lastError.map { .string($0) } ?? .null),
                    ("finishedAt", .string(ISO8601.format(event.finishedAt))),
                ])
            })
    }

    /// Failed webhook events sent again (`heraldctl webhooks replay`'s WebhookStore.replay): one event, or a
    /// mini-app's, failed in the last `hours`; `dryRun` (default true) counts only.
    func replayWebhooks(_ request: RoutedRequest, by actor: AdminActor) throws -> HTTPResponse {
        let fields = try JSONFields(request.jsonBody(), allowed: ["miniAppId", "eventId", "hours", "dryRun"])
        var selection = WebhookReplaySelection()
        if let eventID = try fields.string("eventId") {
            guard eventID.utf8.count == 36, let id = UUID(uuidString: eventID) else {
                throw HeraldError.invalidField("eventId", "eventId must be a UUID.")
            }
            selection.eventIDs = [id]
        }
        let miniAppID = try fields.string("miniAppId").map(PartnerRules.miniAppID)
        if let miniAppID {
            selection.partnerIDs = try replays.partnerIDs(miniAppID: miniAppID)
            guard !selection.partnerIDs.isEmpty else { throw HeraldError.notFound }
        }
        let window = ReportWindow(hours: try fields.integer("hours", range: ReportWindow.hours))
        selection.since = window.since
        let dryRun = try fields.bool("dryRun") ?? true
        let result = try webhooks.replay(selection, dryRun: dryRun, now: Date())
        if !dryRun {
            logger.info("console webhook replay", [("replayed", .number(Double(result.replayed)))])
            try audits.record(
                "webhooks.replayed", miniAppID: miniAppID,
                detail: .object([
                    ("eventId", selection.eventIDs.first.map { .string($0.uuidString.lowercased()) } ?? .null),
                    ("hours", .number(Double(window.hours))), ("matched", .number(Double(result.matched))),
                    ("replayed", .number(Double(result.replayed))),
                ]), by: actor)
        }
        return Self.json(
            .object([
                ("dryRun", .bool(dryRun)), ("matched", .number(Double(result.matched))),
                ("replayable", .number(Double(result.replayable))), ("replayed", .number(Double(result.replayed))),
            ]))
    }
}
