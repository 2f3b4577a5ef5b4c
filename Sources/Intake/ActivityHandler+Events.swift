import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Store

/// `GET /api/partners/live-activities/{activityId}/events`: the activity's audit rows (one per start, update,
/// end, TTL expiry and replacement's end), newest first, each with its deliveries' outcomes so far.
extension ActivityHandler {
    static let defaultEventsLimit = 20
    static let maxEventsLimit = 100

    func events(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        let activityID = try request.uuid("activityId")
        let limit = try Self.eventsLimit(request.http.query["limit"])
        let cursor = try request.http.query["cursor"].map(Self.eventsCursor)
        // Activity ids are UUIDv7 (their time bounds the partitions read): any other id is no activity.
        guard UUIDv7.millisecond(of: activityID) != nil else { throw HeraldError.notFound }
        // One more than asked: whether another page follows.
        let page = try store.events(activityID: activityID, partnerID: partner.id, after: cursor, limit: limit + 1)
        // Events carry their partner, so an empty page is either a foreign or unknown activity (404) or one with
        // no events (written before the audit existed): the activity row tells which.
        if page.isEmpty, try store.find(id: activityID, partnerID: partner.id) == nil { throw HeraldError.notFound }
        let shown = page.prefix(limit)
        let next: JSONValue = page.count > limit ? shown.last.map { .string(Self.cursorText($0)) } ?? .null : .null
        return Reply.json(200, .object([("events", .array(try shown.map(Self.eventJSON))), ("nextCursor", next)]))
    }

    /// `limit`: 1-100 in decimal digits, default 20.
    static func eventsLimit(_ text: String?) throws -> Int {
        guard let text else { return defaultEventsLimit }
        guard !text.isEmpty, text.count <= 3, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let limit = Int(text),
            (1...maxEventsLimit).contains(limit)
        else { throw HeraldError.invalidField("limit", "limit must be a whole number from 1 to \(maxEventsLimit).") }
        return limit
    }

    /// A `nextCursor`: base64url (no padding) of the last event's 16-byte id, 22 characters. The id is a UUIDv7
    /// whose millisecond is the event's `created_at`, so it alone is the (created_at, id) the next page starts
    /// after. Any 22 such characters decode to an id (the last one carries 2 bits: `A`, `Q`, `g` or `w`), so
    /// a cursor of the documented shape is a position, never an error; anything else is refused.
    static func eventsCursor(_ text: String) throws -> ActivityEventCursor {
        guard text.utf8.count == 22, let bytes = Base64URL.decode(text), bytes.count == 16,
            Base64URL.encode(bytes) == text
        else { throw HeraldError.invalidField("cursor", "cursor must be a nextCursor of this list.") }
        let id = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        // 48 bits reach the year 10889: a made-up cursor is held to the year 9999, which Postgres' text form and
        // PostgresTimestamp share (its position is then after every event, as it asked).
        let millis = min(bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, 253_402_300_799_999)
        return ActivityEventCursor(createdAt: Date(timeIntervalSince1970: Double(millis) / 1000), id: id)
    }

    static func cursorText(_ event: ActivityEventRecord) -> String {
        let u = event.id.uuid
        return Base64URL.encode([u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15])
    }

    /// An event's time is a whole millisecond (its UUIDv7's); read back as a Double it may fall a hair short.
    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    static func eventJSON(_ event: ActivityEventRecord) throws -> JSONValue {
        // Half a millisecond on: ISO8601.format truncates to the millisecond.
        let createdAt = Date(timeIntervalSince1970: (Double(millis(event.createdAt)) + 0.5) / 1000)
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(text(event.id))), ("kind", .string(event.kind.rawValue)),
            ("createdAt", .string(ISO8601.format(createdAt))),
        ]
        if let state = event.stateJSON { members.append(("state", try parse(state))) }
        if let title = event.alertTitle { members.append(("alert", .object([("title", .string(title))]))) }
        if let ttl = event.ttlSeconds { members.append(("ttlSeconds", .number(Double(ttl)))) }
        if let dismissAt = event.dismissAt { members.append(("dismissAt", .string(ISO8601.format(dismissAt)))) }
        if let key = event.idempotencyKey { members.append(("idempotencyKey", .string(key))) }
        if let reason = event.reason { members.append(("reason", .string(reason))) }
        members.append(
            (
                "devices",
                .object([
                    ("total", .number(Double(event.devices))), ("apns", .number(Double(event.apnsDevices))),
                    ("fcm", .number(Double(event.fcmDevices))),
                ])
            ))
        members += [
            ("sent", .number(Double(event.sent))), ("failed", .number(Double(event.failed))),
            ("superseded", .number(Double(event.superseded))), ("pending", .number(Double(event.pending))),
        ]
        return .object(members)
    }
}
