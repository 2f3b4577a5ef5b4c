import HTTP2

/// The checks APNs applies to `POST /3/device/{token}`, in the order the simulator applies them:
/// path, method, duplicate headers, provider token, topic (missing; not the team's: TopicDisallowed),
/// push type, priority, expiration, collapse id, apns-id, device token, payload (for `liveactivity`
/// also its content: `LiveActivityPayloadValidator`; for every push the types of `aps.thread-id`, `category`,
/// `sound` and `interruption-level`: `APSFieldsValidator`), and last whether the token belongs to the topic's
/// app (DeviceTokenNotForTopic, see `TokenOwners`). The first failure is the answer.
///
/// Only what Apple documents as required is required: `authorization` and `apns-topic` (token auth).
/// `apns-push-type` is required only on watchOS, so a request without it is taken (as an alert for
/// the priority rule); `apns-id` (APNs makes one), `apns-expiration`, `apns-priority` (10) and
/// `apns-collapse-id` are optional. Device tokens are hex of any whole number of bytes: Apple says
/// their length varies and must not be hard-coded (Live Activity push-to-start and update tokens are
/// tokens too, of their own lengths).
///
/// Everything here reads the request in place: the headers are scanned once, the token is a
/// slice of the path and the payload check builds no document (except for Live Activity pushes,
/// whose rules need one).
struct APNsRequestValidator: Sendable {
    /// Computed, not stored: a literal needs no lazy global initialisation on every access.
    static var pathPrefix: String { "/3/device/" }
    static let maxPayloadBytes = 4096
    /// VoIP pushes may be larger.
    static let maxVoIPPayloadBytes = 5120
    static let maxCollapseIDBytes = 64
    static let liveActivityTopicSuffix = ".push-type.liveactivity"
    /// The `apns-push-type` values Apple documents (a switch: cheaper than hashing for a Set).
    static func isPushType(_ value: String) -> Bool {
        switch value {
        case "alert", "background", "liveactivity", "voip", "complication", "fileprovider", "location", "mdm",
            "pushtotalk", "widgets", "controls":
            return true
        default:
            return false
        }
    }

    /// What passed: the device token (a slice of the path) and the client's `apns-id`, if any.
    struct Accepted {
        var token: Substring
        var apnsID: String?
    }

    let verifier: ProviderTokenVerifier
    var topics = TopicPolicy()
    var owners = TokenOwners(learns: false)

    /// The device-token part of an APNs path, for recording a rejected request; empty otherwise.
    static func token(inPath path: String) -> Substring {
        path.hasPrefix(pathPrefix) ? path.dropFirst(pathPrefix.utf8.count) : ""
    }

    func validate(_ request: HTTP2ServerRequest) -> Result<Accepted, APNsRejection> {
        guard request.path.hasPrefix(Self.pathPrefix) else { return .failure(.badPath) }
        guard request.method == "POST" else { return .failure(.methodNotAllowed) }

        var authorization: String?
        var topic: String?
        var pushType: String?
        var priority: String?
        var expiration: String?
        var collapseID: String?
        var apnsID: String?
        var duplicate = false
        for header in request.headers {
            // Only the headers APNs defines; the switch on a short ASCII name costs a compare.
            switch header.name {
            case "authorization": duplicate = duplicate || authorization != nil; authorization = header.value
            case "apns-topic": duplicate = duplicate || topic != nil; topic = header.value
            case "apns-push-type": duplicate = duplicate || pushType != nil; pushType = header.value
            case "apns-priority": duplicate = duplicate || priority != nil; priority = header.value
            case "apns-expiration": duplicate = duplicate || expiration != nil; expiration = header.value
            case "apns-collapse-id": duplicate = duplicate || collapseID != nil; collapseID = header.value
            case "apns-id": duplicate = duplicate || apnsID != nil; apnsID = header.value
            default: break
            }
        }
        if duplicate { return .failure(.duplicateHeaders) }

        if let rejection = verifier.check(authorization: authorization, connectionID: request.connectionID) {
            return .failure(rejection)
        }

        guard let topic, !topic.isEmpty else { return .failure(.missingTopic) }
        var bundle: Substring?
        if topics.restricts {
            guard let allowed = topics.bundle(of: topic) else { return .failure(.topicDisallowed) }
            bundle = allowed
        }
        if let pushType, !Self.isPushType(pushType) { return .failure(.invalidPushType) }
        // A Live Activity push must go to the bundle's Live Activity topic. APNs documents no
        // reason for the mismatch; InvalidPushType says which header the client got wrong.
        if pushType == "liveactivity" && !topic.hasSuffix(Self.liveActivityTopicSuffix) {
            return .failure(.invalidPushType)
        }
        if let rejection = Self.checkPriority(priority, pushType: pushType) { return .failure(rejection) }
        if let expiration, !Self.isUnsignedInteger(expiration) { return .failure(.badExpirationDate) }
        if let collapseID, collapseID.utf8.count > Self.maxCollapseIDBytes { return .failure(.badCollapseID) }
        if let apnsID, !Identifiers.isLowercaseUUID(apnsID) { return .failure(.badMessageID) }

        let token = request.path.dropFirst(Self.pathPrefix.utf8.count)
        guard !token.isEmpty else { return .failure(.missingDeviceToken) }
        guard Identifiers.isDeviceToken(token) else { return .failure(.badDeviceToken) }

        guard !request.body.isEmpty else { return .failure(.payloadEmpty) }
        let limit = pushType == "voip" ? Self.maxVoIPPayloadBytes : Self.maxPayloadBytes
        guard request.body.count <= limit else { return .failure(.payloadTooLarge) }
        if pushType == "liveactivity" {
            // The only payload parsed into a document: Live Activities have rules about its content.
            if let rejection = LiveActivityPayloadValidator.check(request.body) { return .failure(rejection) }
        } else {
            // APNs documents no reason for a payload that is not a JSON object; of the documented
            // ones PayloadEmpty is the closest (there is no usable payload), and like any 400 it
            // tells the client not to retry unchanged.
            guard JSONShape.isObject(request.body) else { return .failure(.payloadEmpty) }
        }
        if let rejection = APSFieldsValidator.check(request.body) { return .failure(rejection) }
        if !owners.isInactive,
            !owners.admit(token: token, bundleID: bundle ?? topics.bundle(of: topic) ?? topic[...])
        {
            return .failure(.deviceTokenNotForTopic)
        }
        return .success(Accepted(token: token, apnsID: apnsID))
    }

    /// `apns-priority` must be 1, 5 or 10. A background push must say 5: an absent header means
    /// 10 to APNs, which Apple calls an error for background pushes. Live Activities take 5 or 10.
    /// Without `apns-push-type` the push is taken as an alert (any priority).
    static func checkPriority(_ priority: String?, pushType: String?) -> APNsRejection? {
        switch priority {
        case nil, "10": return pushType == "background" ? .badPriority : nil
        case "5": return nil
        case "1": return pushType == "background" || pushType == "liveactivity" ? .badPriority : nil
        default: return .badPriority
        }
    }

    static func isUnsignedInteger(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 19 && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
