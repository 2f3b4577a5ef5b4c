import HTTP2
import HeraldCore

/// The checks APNs applies to a channel management request (Apple's "Sending channel management requests to
/// APNs"), served on the simulator's channel port, in the order the simulator applies them; the first failure
/// is the answer:
///
/// 1. path: `/1/apps/{bundleId}/channels` or `/1/apps/{bundleId}/all-channels` (404 BadPath);
/// 2. method: POST (create), GET (read) or DELETE (delete) on `channels`, GET (list) on `all-channels`
///    (405 MethodNotAllowed);
/// 3. a repeated `authorization`, `apns-request-id` or `apns-channel-id` (400 DuplicateHeaders);
/// 4. the provider token, as for pushes (`ProviderTokenVerifier`: 403 / 429);
/// 5. the bundle id: with a push-type suffix (`.push-type.liveactivity`, ...) or characters no bundle id has,
///    400 TopicDisallowed; with `--apns-topics`, one not listed is 403 TopicMismatch (the token's team has no
///    such app);
/// 6. `apns-request-id`, when present, a lowercase canonical UUID (400 BadMessageId);
/// 7. create: the body a JSON object (400 BadRequestPayload), no members but `message-storage-policy` and
///    `push-type` (400 BadRequestParams), `push-type` present (400 MissingPushType) and `LiveActivity`, in any
///    case (400 InvalidPushType), `message-storage-policy` 0 or 1 (400 MissingChannelQueueSize);
///    read and delete: `apns-channel-id` present (400 MissingChannelId) and well formed (400 BadChannelId).
///
/// Whether the channel exists and whether the app has room for another are the handler's to check
/// (`BroadcastChannels`): they are state, not shape.
struct ChannelRequestValidator: Sendable {
    static let pathPrefix = "/1/apps/"

    /// What a request asks, once it passed every check.
    enum Operation: Equatable {
        case create(messageStoragePolicy: Int)
        case read(channelID: String)
        case list
        case delete(channelID: String)
    }

    struct Accepted {
        var bundleID: String
        var operation: Operation
    }

    let verifier: ProviderTokenVerifier
    var topics = TopicPolicy()

    /// What the path and method name, before any check: the record's kind even for a refused request.
    static func kind(of request: HTTP2ServerRequest) -> SimulatorRecord.Kind {
        guard let (_, resource) = parse(path: request.path) else { return .channel }
        switch (resource, request.method) {
        case (.channels, "POST"): return .channelCreate
        case (.channels, "GET"): return .channelRead
        case (.channels, "DELETE"): return .channelDelete
        case (.allChannels, "GET"): return .channelList
        default: return .channel
        }
    }

    func validate(_ request: HTTP2ServerRequest) -> Result<Accepted, APNsRejection> {
        guard let (bundle, resource) = Self.parse(path: request.path) else { return .failure(.badPath) }
        let kind = Self.kind(of: request)
        guard kind != .channel else { return .failure(.methodNotAllowed) }

        guard let headers = Self.singleHeaders(request, ["authorization", "apns-request-id", "apns-channel-id"]) else {
            return .failure(.duplicateHeaders)
        }
        let (authorization, requestID, channelID) = (
            headers["authorization"], headers["apns-request-id"],
            headers["apns-channel-id"]
        )
        if let rejection = verifier.check(authorization: authorization, connectionID: request.connectionID) {
            return .failure(rejection)
        }
        if let rejection = Self.checkBundle(bundle, topics: topics) { return .failure(rejection) }
        if let requestID, !Identifiers.isLowercaseUUID(requestID) { return .failure(.badMessageID) }

        let bundleID = String(bundle)
        switch (resource, kind) {
        case (.allChannels, _):
            return .success(Accepted(bundleID: bundleID, operation: .list))
        case (.channels, .channelCreate):
            return Self.createBody(request.body).map { policy in
                Accepted(bundleID: bundleID, operation: .create(messageStoragePolicy: policy))
            }
        default:
            guard let channelID, !channelID.isEmpty else { return .failure(.missingChannelID) }
            guard BroadcastChannels.isWellFormedID(channelID) else { return .failure(.badChannelID) }
            return .success(
                Accepted(
                    bundleID: bundleID,
                    operation: kind == .channelRead
                        ? .read(channelID: channelID) : .delete(channelID: channelID)))
        }
    }

    enum Resource { case channels, allChannels }

    /// The bundle id and the resource of a channel management path (query strings are not part of Apple's API).
    static func parse(path: String) -> (bundle: Substring, resource: Resource)? {
        guard path.hasPrefix(pathPrefix) else { return nil }
        let parts = path.dropFirst(pathPrefix.utf8.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        switch parts[1] {
        case "channels": return (parts[0], .channels)
        case "all-channels": return (parts[0], .allChannels)
        default: return nil
        }
    }

    /// The bundle id of a channel or broadcast path: a bare bundle id (Apple's TopicDisallowed says "Ensure that no
    /// push type suffix is added to the bundle ID"), and with `--apns-topics` one of the team's (TopicMismatch:
    /// "The bundle IDs parsed from your token or certificate don't include the topic present in the path").
    static func checkBundle(_ bundle: Substring, topics: TopicPolicy) -> APNsRejection? {
        let text = String(bundle)
        guard TopicPolicy.problem(with: [text]) == nil, TopicPolicy().bundle(of: text) == bundle else {
            return .topicDisallowed
        }
        if let bundles = topics.bundles, !bundles.contains(text) { return .topicMismatch }
        return nil
    }

    /// The `message-storage-policy` of a create body.
    private static func createBody(_ body: [UInt8]) -> Result<Int, APNsRejection> {
        guard let json = try? JSONParser.parse(body), let members = json.objectMembers else {
            return .failure(.badRequestPayload)
        }
        var policy: JSONValue?
        var pushType: JSONValue?
        for (key, value) in members {
            switch key {
            case "message-storage-policy": policy = value
            case "push-type": pushType = value
            default: return .failure(.badRequestParams)
            }
        }
        guard let pushType else { return .failure(.missingPushType) }
        // Apple writes `LiveActivity` here and `Liveactivity`/`liveactivity` in the broadcast header: the case is
        // not taken as part of the value.
        guard pushType.stringValue?.lowercased() == "liveactivity" else { return .failure(.invalidPushType) }
        guard let number = policy?.numberValue, number == 0 || number == 1 else {
            return .failure(.missingChannelQueueSize)
        }
        return .success(Int(number))
    }

    /// The values of `names` in the request's headers, each sent at most once; nil when one came twice (APNs'
    /// DuplicateHeaders). For the channel and broadcast endpoints; device pushes read theirs in one pass of their own
    /// (APNsRequestValidator), which is the hot path.
    static func singleHeaders(_ request: HTTP2ServerRequest, _ names: Set<String>) -> [String: String]? {
        var values: [String: String] = [:]
        for header in request.headers where names.contains(header.name) {
            guard values.updateValue(header.value, forKey: header.name) == nil else { return nil }
        }
        return values
    }
}
