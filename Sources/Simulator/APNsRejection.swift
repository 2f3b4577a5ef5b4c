import HTTP2
import HeraldCore

/// An APNs error answer: a status and one of the reason strings Apple documents.
///
/// Reasons are string literals, so building a rejection allocates nothing.
struct APNsRejection: Error, Sendable, Equatable {
    var status: Int
    var reason: String
    /// Which rule was broken, when the reason alone does not say (Live Activity payloads). It goes to the
    /// simulator's record (`detail` in `GET /sim/received`), never into the answer: APNs answers a reason only.
    var detail: String?

    static let badCollapseID = APNsRejection(status: 400, reason: "BadCollapseId")
    static let badDeviceToken = APNsRejection(status: 400, reason: "BadDeviceToken")
    static let badExpirationDate = APNsRejection(status: 400, reason: "BadExpirationDate")
    static let badMessageID = APNsRejection(status: 400, reason: "BadMessageId")
    static let badPriority = APNsRejection(status: 400, reason: "BadPriority")
    static let deviceTokenNotForTopic = APNsRejection(status: 400, reason: "DeviceTokenNotForTopic")
    static let duplicateHeaders = APNsRejection(status: 400, reason: "DuplicateHeaders")
    static let invalidPushType = APNsRejection(status: 400, reason: "InvalidPushType")
    static let missingDeviceToken = APNsRejection(status: 400, reason: "MissingDeviceToken")
    static let missingTopic = APNsRejection(status: 400, reason: "MissingTopic")
    static let payloadEmpty = APNsRejection(status: 400, reason: "PayloadEmpty")
    static let topicDisallowed = APNsRejection(status: 400, reason: "TopicDisallowed")
    static let expiredProviderToken = APNsRejection(status: 403, reason: "ExpiredProviderToken")
    static let invalidProviderToken = APNsRejection(status: 403, reason: "InvalidProviderToken")
    static let missingProviderToken = APNsRejection(status: 403, reason: "MissingProviderToken")
    static let badEnvironmentKeyIDInToken = APNsRejection(status: 403, reason: "BadEnvironmentKeyIdInToken")
    static let badPath = APNsRejection(status: 404, reason: "BadPath")
    static let methodNotAllowed = APNsRejection(status: 405, reason: "MethodNotAllowed")
    static let payloadTooLarge = APNsRejection(status: 413, reason: "PayloadTooLarge")
    static let tooManyProviderTokenUpdates = APNsRejection(status: 429, reason: "TooManyProviderTokenUpdates")

    // Broadcast and channel management (the broadcast table of Apple's "Handling error responses from APNs").
    static let badChannelID = APNsRejection(status: 400, reason: "BadChannelId")
    static let badRequestParams = APNsRejection(status: 400, reason: "BadRequestParams")
    static let badRequestPayload = APNsRejection(status: 400, reason: "BadRequestPayload")
    static let cannotCreateChannelConfig = APNsRejection(status: 400, reason: "CannotCreateChannelConfig")
    static let channelNotRegistered = APNsRejection(status: 400, reason: "ChannelNotRegistered")
    static let missingChannelID = APNsRejection(status: 400, reason: "MissingChannelId")
    static let missingPushType = APNsRejection(status: 400, reason: "MissingPushType")
    /// Not in Apple's table: what clients report APNs answers a create without a usable `message-storage-policy`.
    static let missingChannelQueueSize = APNsRejection(status: 400, reason: "MissingChannelQueueSize")
    static let topicMismatch = APNsRejection(status: 403, reason: "TopicMismatch")

    /// A `liveactivity` push whose payload breaks a rule of `LiveActivityPayloadValidator`.
    ///
    /// APNs documents no reason for these, and clients report that APNs itself answers 200 and the device drops
    /// such a push; the simulator refuses it so that a sender's mistake shows in tests instead of on a phone.
    /// Of the reasons Apple documents, PayloadEmpty is the one about an unusable payload: the simulator already
    /// answers it for a body that is not a JSON object, every client's reason list knows it, and like any 400
    /// it says "do not retry unchanged" without blaming the token or the credentials (Herald's
    /// `APNsResponseClassifier` fails the delivery, retiring nothing).
    static func liveActivityPayload(_ detail: String) -> APNsRejection {
        APNsRejection(status: 400, reason: "PayloadEmpty", detail: detail)
    }

    /// A push whose `aps` breaks a type or value rule of `APSFieldsValidator`: PayloadEmpty with the rule as the
    /// detail, for the reasons `liveActivityPayload` gives.
    static func apsField(_ detail: String) -> APNsRejection {
        APNsRejection(status: 400, reason: "PayloadEmpty", detail: detail)
    }

    /// The reason a fault answers with when it names only a status.
    static func defaultReason(status: Int) -> String {
        switch status {
        case 400: return "BadDeviceToken"
        case 403: return "Forbidden"
        case 404: return "BadPath"
        case 405: return "MethodNotAllowed"
        case 410: return "Unregistered"
        case 413: return "PayloadTooLarge"
        case 429: return "TooManyRequests"
        case 503: return "ServiceUnavailable"
        case 500..<600: return "InternalServerError"
        default: return "Forbidden"
        }
    }

    /// A broadcast payload that breaks a rule of its own (beside `LiveActivityPayloadValidator`'s): PayloadEmpty
    /// with the rule as the detail, for the reasons `liveActivityPayload` gives.
    static func broadcastPayload(_ detail: String) -> APNsRejection {
        APNsRejection(status: 400, reason: "PayloadEmpty", detail: detail)
    }

    /// The answer of the broadcast and channel management APIs: JSON `{"reason":...}` and the request's
    /// `apns-request-id` (those APIs have no `apns-id`).
    func response(requestID: String, retryAfter: Int? = nil) -> HTTP2Response {
        var body = Array(#"{"reason":"#.utf8)
        JSONWriter.writeString(reason, into: &body)
        body.append(UInt8(ascii: "}"))
        var headers = [HTTP2Header("apns-request-id", requestID), HTTP2Header("content-type", "application/json")]
        if let retryAfter { headers.append(HTTP2Header("retry-after", String(retryAfter))) }
        return HTTP2Response(status: status, headers: headers, body: body)
    }

    /// The reason a fault on a broadcast answers with when it names only a status: as for device pushes, except
    /// that a 400 is about the channel, not a device token.
    static func defaultBroadcastReason(status: Int) -> String {
        status == 400 ? "ChannelNotRegistered" : defaultReason(status: status)
    }

    /// The answer APNs gives: JSON `{"reason":...}`, plus `timestamp` (milliseconds since the
    /// epoch, when the token stopped being valid) for 410, and the request's `apns-id`.
    func response(apnsID: String, timestampMillis: Int64, retryAfter: Int? = nil) -> HTTP2Response {
        var body = Array(#"{"reason":"#.utf8)
        JSONWriter.writeString(reason, into: &body)
        if status == 410 {
            body.append(contentsOf: #","timestamp":"#.utf8)
            body.append(contentsOf: String(timestampMillis).utf8)
        }
        body.append(UInt8(ascii: "}"))
        var headers = [HTTP2Header("apns-id", apnsID), HTTP2Header("content-type", "application/json")]
        if let retryAfter { headers.append(HTTP2Header("retry-after", String(retryAfter))) }
        return HTTP2Response(status: status, headers: headers, body: body)
    }
}
