import Foundation
import HTTP2
import HeraldCore

/// One APNs or FCM request the simulator answered, as `GET /sim/received` lists it.
public struct SimulatorRecord: Sendable {
    /// What an APNs request other than a device push was: a broadcast (`POST /4/broadcasts/apps/{bundleId}`) or a
    /// channel management request (the channel port). Device pushes and FCM sends have none, so their records
    /// keep the shape they always had.
    public enum Kind: String, Sendable, CaseIterable {
        case broadcast
        case channelCreate = "channel-create"
        case channelRead = "channel-read"
        case channelList = "channel-list"
        case channelDelete = "channel-delete"
        /// A channel management request whose path or method names no operation (answered BadPath or
        /// MethodNotAllowed).
        case channel
    }

    public var service: SimulatorService
    /// nil for a device push or an FCM send.
    public var kind: Kind?
    /// The APNs device token from the path, or the FCM message's `token` (else its `topic`, else
    /// its `condition`); for a broadcast or a channel request the channel id (`apns-channel-id`, or the id a
    /// create answered); empty when the request was too malformed to name one, or names none (a list).
    public var token: String
    /// The request headers (pseudo-headers excluded), with `authorization` replaced by
    /// `<redacted>` so a log of what was received never carries a credential.
    public var headers: [HTTP2Header]
    /// The request body exactly as received.
    public var body: [UInt8]
    public var status: Int
    /// The APNs reason or FCM error code of a non-200 answer.
    public var reason: String?
    /// When the request was complete (the answer may have been delayed by the latency or a fault); written to the
    /// microsecond, since a benchmark subtracts it from a request's own time (bench/delivery_latency.py).
    public var receivedAt: Date
    /// What the answer identified the notification by: the `apns-id`, or the FCM message `name`; for a broadcast or
    /// a channel request the `apns-request-id`.
    public var id: String?
    /// For a refused request whose reason does not say which rule it broke (a Live Activity payload answered
    /// PayloadEmpty): the rule, in words. Never part of the answer the client got.
    public var detail: String?

    /// The body as JSON; nil if it is not JSON.
    public var payload: JSONValue? { try? JSONParser.parse(body) }

    /// An APNs payload's `aps`, what iOS itself acts on (alert, `thread-id`, `category`, `sound`,
    /// `interruption-level`); nil when the body is not a JSON object with one.
    public var aps: JSONValue? { payload?["aps"] }

    /// The first value of a header, by lowercase name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// The APNs headers a test checks field by field (nil when the request did not send them; `GET /sim/received`
    /// has them under `headers`).
    public var apnsPushType: String? { header("apns-push-type") }
    public var apnsTopic: String? { header("apns-topic") }
    public var apnsPriority: String? { header("apns-priority") }
    public var apnsExpiration: String? { header("apns-expiration") }
    public var apnsCollapseID: String? { header("apns-collapse-id") }

    /// The record as the control API writes it. The payload is the body itself when it is JSON
    /// (byte for byte, so numbers keep the client's spelling); otherwise `payload` is null and
    /// `rawPayload` holds the body as text.
    func write(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"service":"#.utf8)
        JSONWriter.writeString(service.rawValue, into: &out)
        if let kind {
            out.append(contentsOf: #","kind":"#.utf8)
            JSONWriter.writeString(kind.rawValue, into: &out)
        }
        out.append(contentsOf: #","token":"#.utf8)
        JSONWriter.writeString(token, into: &out)
        out.append(contentsOf: #","headers":{"#.utf8)
        for (position, header) in headers.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(header.name, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.writeString(header.value, into: &out)
        }
        out.append(contentsOf: #"},"payload":"#.utf8)
        if !body.isEmpty && JSONShape.isDocument(body) {
            out.append(contentsOf: body)
        } else {
            out.append(contentsOf: "null".utf8)
            if !body.isEmpty {
                out.append(contentsOf: #","rawPayload":"#.utf8)
                JSONWriter.writeString(String(decoding: body, as: UTF8.self), into: &out)
            }
        }
        out.append(contentsOf: #","status":"#.utf8)
        out.append(contentsOf: String(status).utf8)
        if let reason {
            out.append(contentsOf: #","reason":"#.utf8)
            JSONWriter.writeString(reason, into: &out)
        }
        if let id {
            out.append(contentsOf: #","id":"#.utf8)
            JSONWriter.writeString(id, into: &out)
        }
        if let detail {
            out.append(contentsOf: #","detail":"#.utf8)
            JSONWriter.writeString(detail, into: &out)
        }
        out.append(contentsOf: #","receivedAt":"#.utf8)
        JSONWriter.writeString(ISO8601.format(receivedAt, microseconds: true), into: &out)
        out.append(UInt8(ascii: "}"))
    }
}
