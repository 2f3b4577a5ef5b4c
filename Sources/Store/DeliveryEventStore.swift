import Foundation
import HeraldCore
import Postgres

/// What a delivery event report changed (`herald_delivery_event`, Migrations/functions/delivery_event.sql).
public enum DeliveryEventOutcome: String, Sendable, Decodable {
    /// Stored and counted on the push's audit row.
    case recorded
    /// Reported before: nothing changed.
    case repeated
    /// Its push was accepted more than `DeliveryEventReport.countingDays` ago: nothing changed.
    case late
    /// No push delivery has this id (or not for the user given).
    case notFound = "not_found"
}

/// The outcome of a report, with the event's stored time (nil when nothing is stored).
public struct DeliveryEventResult: Sendable, Equatable {
    public let outcome: DeliveryEventOutcome
    public let at: Date?
}

/// The host's delivery events: one function stores a report and counts it (sql/061_delivery_events.sql).
public struct DeliveryEventStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// Records `report` of delivery `deliveryID`, judged at `now`.
    public func record(deliveryID: UUID, _ report: DeliveryEventReport, now: Date) throws -> DeliveryEventResult {
        let row = try pool.withConnection { connection in
            try connection.row(
                Queries.DeliveryEvents.Record(
                    deliveryID: deliveryID, event: report.event.rawValue, at: report.at, userID: report.userID,
                    now: now, windowDays: DeliveryEventReport.countingDays,
                    webhookDelay: DeliveryEventReport.openedWebhookDelaySeconds))
        }
        guard let row else {
            throw PostgresError(code: .decodingFailed, serverMessage: "herald_delivery_event answered no row")
        }
        return DeliveryEventResult(outcome: row.result, at: row.at)
    }
}

// The statements' rows (Sources/Store/Queries/delivery_events.sql).
extension DeliveryEventStore {
    public struct Recorded: QueryRow, Decodable, Sendable {
        let result: DeliveryEventOutcome
        let at: Date?
    }
}
