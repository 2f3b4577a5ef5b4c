import HTTP2
import HeraldCore

/// The checks APNs applies to a broadcast push, `POST /4/broadcasts/apps/{bundleId}` on the APNs port (Apple's
/// "Sending broadcast push notification requests to APNs"), in the order the simulator applies them; the first
/// failure is the answer:
///
/// 1. path (404 BadPath), method POST (405 MethodNotAllowed), a repeated `apns-*` header or `authorization`
///    (400 DuplicateHeaders), the provider token (`ProviderTokenVerifier`: 403 / 429);
/// 2. the bundle id of the path, as for channel management (400 TopicDisallowed, 403 TopicMismatch);
/// 3. `apns-request-id` a lowercase canonical UUID when present (400 BadMessageId);
/// 4. `apns-push-type` present (400 MissingPushType) and `liveactivity` in any case (400 InvalidPushType);
/// 5. `apns-channel-id` present (400 MissingChannelId) and well formed (400 BadChannelId);
/// 6. `apns-priority` 5 or 10, absent meaning 10, as for every Live Activity push (400 BadPriority);
///    `apns-expiration` a whole number of UNIX seconds (400 BadExpirationDate);
/// 7. the channel exists for this app (400 ChannelNotRegistered); on a No Message Stored channel (policy 0)
///    a nonzero `apns-expiration` is 400 BadExpirationDate, as Apple documents;
/// 8. the payload: present (400 PayloadEmpty), at most 5120 bytes (413 PayloadTooLarge), the Live Activity
///    rules every `liveactivity` push is held to (`LiveActivityPayloadValidator`), not `event: start` (a
///    broadcast updates or ends the activities subscribed to the channel; an activity is started through a
///    push-to-start token), and `APSFieldsValidator`'s types: 400 PayloadEmpty with the rule as the record's
///    detail, as for device pushes.
///
/// `apns-topic`, `apns-id` and `apns-collapse-id` are not part of the broadcast request and are ignored.
struct BroadcastRequestValidator: Sendable {
    static var pathPrefix: String { "/4/broadcasts/apps/" }
    static let maxPayloadBytes = 5120

    struct Accepted {
        var bundleID: String
        var channel: SimulatorChannel
    }

    let verifier: ProviderTokenVerifier
    var topics = TopicPolicy()
    let channels: BroadcastChannels

    func validate(_ request: HTTP2ServerRequest) -> Result<Accepted, APNsRejection> {
        guard request.path.hasPrefix(Self.pathPrefix) else { return .failure(.badPath) }
        let bundle = request.path.dropFirst(Self.pathPrefix.utf8.count)
        guard !bundle.isEmpty, !bundle.contains("/") else { return .failure(.badPath) }
        guard request.method == "POST" else { return .failure(.methodNotAllowed) }

        guard
            let headers = ChannelRequestValidator.singleHeaders(
                request,
                [
                    "authorization", "apns-request-id", "apns-channel-id", "apns-push-type", "apns-priority",
                    "apns-expiration",
                ])
        else { return .failure(.duplicateHeaders) }
        let authorization = headers["authorization"], requestID = headers["apns-request-id"]
        let channelID = headers["apns-channel-id"], pushType = headers["apns-push-type"]
        let priority = headers["apns-priority"], expiration = headers["apns-expiration"]
        if let rejection = verifier.check(authorization: authorization, connectionID: request.connectionID) {
            return .failure(rejection)
        }
        if let rejection = ChannelRequestValidator.checkBundle(bundle, topics: topics) { return .failure(rejection) }
        if let requestID, !Identifiers.isLowercaseUUID(requestID) { return .failure(.badMessageID) }

        guard let pushType, !pushType.isEmpty else { return .failure(.missingPushType) }
        // Apple's own examples spell it `liveactivity` and `Liveactivity`: the case is not part of the value.
        guard pushType.lowercased() == "liveactivity" else { return .failure(.invalidPushType) }
        guard let channelID, !channelID.isEmpty else { return .failure(.missingChannelID) }
        guard BroadcastChannels.isWellFormedID(channelID) else { return .failure(.badChannelID) }
        if let rejection = APNsRequestValidator.checkPriority(priority, pushType: "liveactivity") {
            return .failure(rejection)
        }
        if let expiration, !APNsRequestValidator.isUnsignedInteger(expiration) { return .failure(.badExpirationDate) }

        let bundleID = String(bundle)
        guard let channel = channels.channel(bundleID: bundleID, id: channelID) else {
            return .failure(.channelNotRegistered)
        }
        if !channel.storesMessages, let expiration, expiration.utf8.contains(where: { $0 != UInt8(ascii: "0") }) {
            return .failure(.badExpirationDate)
        }

        guard !request.body.isEmpty else { return .failure(.payloadEmpty) }
        guard request.body.count <= Self.maxPayloadBytes else { return .failure(.payloadTooLarge) }
        if let rejection = LiveActivityPayloadValidator.check(request.body) { return .failure(rejection) }
        if (try? JSONParser.parse(request.body))?["aps"]?["event"]?.stringValue == "start" {
            return .failure(
                .broadcastPayload(
                    "a broadcast cannot start a Live Activity (aps.event must be update or "
                        + "end): start one with a push-to-start token"))
        }
        if let rejection = APSFieldsValidator.check(request.body) { return .failure(rejection) }
        return .success(Accepted(bundleID: bundleID, channel: channel))
    }
}
