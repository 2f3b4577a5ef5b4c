import Foundation

/// What the host's app reports of a push delivery it was sent (docs/api-host.md, "Delivery events"): the body of
/// `POST /api/internal/deliveries/{deliveryId}/events`, checked without the database.
public struct DeliveryEventReport: Sendable, Equatable {
    /// `received` from the app's notification service extension; `opened` or `dismissed` from its tap handler.
    public enum Event: String, Sendable, CaseIterable {
        case received, opened, dismissed
    }

    public let event: Event
    /// When it happened on the device; the time of the report when the body has none.
    public let at: Date
    /// The user the host believes the delivery was for: a delivery of another user is not found.
    public let userID: String?

    public init(event: Event, at: Date, userID: String? = nil) {
        self.event = event
        self.at = at
        self.userID = userID
    }

    public static let fields: Set<String> = ["event", "at", "userId"]
    /// How far ahead of the server's clock `at` may be (a phone's clock runs a little fast).
    public static let maxSkew: TimeInterval = 300
    /// How old `at` may be: an app holds a report it could not send for at most a week.
    public static let maxAge: TimeInterval = 7 * 86_400
    /// Events count for this many days after their push's acceptance; later ones change nothing, so a request's
    /// counts are final then (and its month's partition of delivery_events can go with the request's).
    public static let countingDays = 30
    /// push.opened is coalesced per request: a first open queues the event this many seconds ahead, and every
    /// report until it leaves rewrites its counts (Sources/Store/Migrations/functions/delivery_event.sql).
    public static let openedWebhookDelaySeconds = 60

    /// The report in `json`, judged at `now`.
    public static func parse(_ json: JSONValue, now: Date) throws(HeraldError) -> DeliveryEventReport {
        let fields = try JSONFields(json, allowed: fields)
        let name = try fields.requiredString("event")
        guard let event = Event(rawValue: name) else {
            throw .invalidField("event", "event must be one of received, opened, dismissed.")
        }
        let at = try fields.date("at") ?? now
        if at > now.addingTimeInterval(maxSkew) {
            throw HeraldError(
                status: 422, code: "event_time_in_future",
                message: "at may be at most \(Int(maxSkew)) seconds ahead of the server's clock.", field: "at")
        }
        if at < now.addingTimeInterval(-maxAge) {
            throw HeraldError(
                status: 422, code: "event_time_too_old",
                message: "at may be at most \(Int(maxAge / 86_400)) days ago.", field: "at")
        }
        var userID: String?
        if let value = try fields.string("userId") {
            userID = try HostDirectoryRules.externalID(value, field: "userId")
        }
        return DeliveryEventReport(event: event, at: at, userID: userID)
    }

    /// The answer to a report of a delivery Herald has no push delivery of (or not for the user given).
    public static let deliveryNotFound = HeraldError(
        status: 404, code: "delivery_not_found", message: "No push delivery has this id.", field: "deliveryId")
}
