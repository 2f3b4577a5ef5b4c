import Foundation
import HTTPServer
import HeraldCore
import Store

/// The host's reports of what became of a push delivery on the device: received, opened, dismissed
/// (docs/api-host.md, "Delivery events"). Counted on the push's audit row; opens reach the partner's webhook.
struct DeliveryEventHandler: Sendable {
    let store: DeliveryEventStore
    let clock: @Sendable () -> Date

    static let routes: [IntakeRoute] = [
        .host("POST", "/api/internal/deliveries/{deliveryId}/events") { try $0.deliveryEvents.report($1) }
    ]

    /// 201 when the event is stored, 200 when it changes nothing (a repeat, or after the push's counting window),
    /// 404 `delivery_not_found` for an id of no push delivery. Nothing is written for a body that fails validation.
    func report(_ request: RoutedRequest) throws -> HTTPResponse {
        let deliveryID = try request.uuid("deliveryId")
        let now = clock()
        let report = try DeliveryEventReport.parse(request.jsonBody(), now: now)
        let result = try store.record(deliveryID: deliveryID, report, now: now)
        if result.outcome == .notFound { throw DeliveryEventReport.deliveryNotFound }
        return Reply.json(
            result.outcome == .recorded ? 201 : 200,
            .object([
                ("deliveryId", .string(UUIDText.string(deliveryID))), ("event", .string(report.event.rawValue)),
                ("recorded", .bool(result.outcome == .recorded)),
                // The stored time (a repeat keeps the first report's); a late event's is the one reported.
                ("at", .string(ISO8601.format(result.at ?? report.at))),
            ]))
    }
}
