import HTTP2
import HeraldCore

/// The checks FCM HTTP v1 applies to `POST /v1/projects/{project}/messages:send`: path, method,
/// access token (401; a token without an FCM scope 403), project (the access token's service account's, else 403
/// PERMISSION_DENIED), then the message (strict proto-JSON: unknown fields are errors), and last whether the
/// registration token belongs to that project (else 403 SENDER_ID_MISMATCH, see `FCMTokenProjects`). The first
/// failure is the answer.
struct FCMRequestValidator: Sendable {
    static var pathPrefix: String { "/v1/projects/" }
    static var pathSuffix: String { "/messages:send" }
    static let maxDataBytes = 4096
    static let maxTTLSeconds: Double = 2_419_200
    /// Fields of `Message`, in both spellings proto-JSON accepts.
    static let messageFields: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions", "token", "topic",
        "condition",
    ]

    struct Accepted {
        var project: String
        /// The message's token, else `/topics/<topic>`, else its condition: what faults and
        /// records are keyed by.
        var target: String
        var validateOnly: Bool
    }

    /// What passed the body's checks.
    struct Body: Equatable {
        var target: String
        var validateOnly: Bool
        /// The target is a registration token (not a topic or a condition): it belongs to a project.
        var isToken: Bool
    }

    let tokens: AccessTokenStore
    var tokenProjects = FCMTokenProjects()

    /// The project named by an FCM path; nil if the path is not one.
    static func project(inPath path: String) -> Substring? {
        guard path.hasPrefix(pathPrefix), path.hasSuffix(pathSuffix) else { return nil }
        let project = path.dropFirst(pathPrefix.utf8.count).dropLast(pathSuffix.utf8.count)
        guard !project.isEmpty, !project.contains("/") else { return nil }
        return project
    }

    func validate(_ request: HTTP2ServerRequest, now: Double) -> Result<Accepted, FCMRejection> {
        guard let project = Self.project(inPath: request.path) else { return .failure(.notFound) }
        guard request.method == "POST" else { return .failure(.methodNotAllowed) }
        let authorization = request.headers.first { $0.name == "authorization" }?.value ?? ""
        guard authorization.utf8.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            return .failure(.unauthenticated)
        }
        switch tokens.grant(authorization.dropFirst(7), project: project, now: now) {
        case .invalid: return .failure(.unauthenticated)
        case .insufficientScope: return .failure(.insufficientScopes)
        case .otherProject: return .failure(.permissionDenied(project: String(project)))
        case .mayMessage: break
        }

        // The common message without a document (FCMFastPath); everything else, and every rejection, in checkBody.
        let body: Body
        if let fast = FCMFastPath.accept(request.body) {
            body = Body(target: fast.token, validateOnly: fast.validateOnly, isToken: true)
        } else {
            switch checkBody(request.body) {
            case .failure(let rejection): return .failure(rejection)
            case .success(let checked): body = checked
            }
        }
        // Last, as FCM can tell only once it has the token; one relaxed load when no token has a project.
        if body.isToken, !tokenProjects.isInactive, !tokenProjects.admits(token: body.target, project: project) {
            return .failure(.senderIDMismatch)
        }
        return .success(Accepted(project: String(project), target: body.target, validateOnly: body.validateOnly))
    }

    /// The body's checks on a parsed document: the message's target and `validate_only`, or the rejection.
    func checkBody(_ bytes: [UInt8]) -> Result<Body, FCMRejection> {
        guard let body = try? JSONParser.parse(bytes), let members = body.objectMembers else {
            return .failure(.invalidArgument("Invalid JSON payload received. The body is not a JSON object."))
        }
        var validateOnly = false
        for (key, value) in members where key != "message" {
            guard key == "validate_only" || key == "validateOnly" else {
                return .failure(
                    .invalidArgument("Invalid JSON payload received. Unknown name \"\(key)\": Cannot find field."))
            }
            guard case .bool(let flag) = value else {
                return .failure(.invalidArgument("Invalid value at 'validate_only' (TYPE_BOOL)"))
            }
            validateOnly = flag
        }
        guard let message = body["message"], let fields = message.objectMembers else {
            return .failure(.invalidArgument("Request contains an invalid argument: message is required"))
        }
        for (key, _) in fields where !Self.messageFields.contains(key) {
            return .failure(
                .invalidArgument(
                    "Invalid JSON payload received. Unknown name \"\(key)\" at 'message': Cannot find field."))
        }
        switch checkTarget(message) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let target):
            if let rejection = checkData(message["data"], at: "message.data") { return .failure(rejection) }
            if let android = message["android"], let rejection = checkAndroid(android) { return .failure(rejection) }
            // checkTarget made sure exactly one target is present.
            return .success(Body(target: target, validateOnly: validateOnly, isToken: message["token"] != nil))
        }
    }

    /// Exactly one of token, topic and condition, each a non-empty string.
    func checkTarget(_ message: JSONValue) -> Result<String, FCMRejection> {
        let targets = ["token", "topic", "condition"].compactMap { name in message[name].map { (name, $0) } }
        guard targets.count == 1, let (name, value) = targets.first else {
            return .failure(
                .invalidArgument(
                    "Request contains an invalid argument: exactly one of message.token, "
                        + "message.topic and message.condition is required (got \(targets.count))"))
        }
        guard let text = value.stringValue, !text.isEmpty else {
            return .failure(.invalidArgument("Invalid value at 'message.\(name)': a non-empty string is required"))
        }
        switch name {
        case "token": return .success(text)
        case "topic":
            let topic = text.hasPrefix("/topics/") ? String(text.dropFirst(8)) : text
            let allowed = topic.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || "-_.~%".utf8.contains(byte)
            }
            guard !topic.isEmpty, allowed else {
                return .failure(
                    .invalidArgument("Invalid value at 'message.topic': topic names match [a-zA-Z0-9-_.~%]+"))
            }
            return .success("/topics/" + topic)
        default: return .success(text)
        }
    }

    /// A map of string to string, keys not reserved, at most 4096 bytes of keys and values.
    func checkData(_ data: JSONValue?, at field: String) -> FCMRejection? {
        guard let data else { return nil }
        guard let members = data.objectMembers else {
            return .invalidArgument("Invalid value at '\(field)': a map of string to string is required")
        }
        var bytes = 0
        for (key, value) in members {
            guard let text = value.stringValue else {
                return .invalidArgument("Invalid value at '\(field)[\(key)]' (TYPE_STRING), \(value.typeName)")
            }
            // Google documents the reserved words in lower case; other spellings are ordinary keys.
            if key == "from" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm") {
                return .invalidArgument(
                    "Invalid data payload key: \(key) (from, message_type and keys starting with "
                        + "google or gcm are reserved)")
            }
            bytes += key.utf8.count + text.utf8.count
        }
        guard bytes <= Self.maxDataBytes else {
            return .invalidArgument("Message is too big: data is \(bytes) bytes, the limit is \(Self.maxDataBytes)")
        }
        return nil
    }

    /// `android.priority` NORMAL or HIGH (or their enum numbers 0 and 1, which proto3 JSON accepts too);
    /// `android.ttl` a duration string of 0 to 4 weeks; `android.collapse_key` a string.
    func checkAndroid(_ android: JSONValue) -> FCMRejection? {
        guard android.objectMembers != nil else {
            return .invalidArgument("Invalid value at 'message.android': an object is required")
        }
        if let priority = android["priority"] {
            guard
                priority == .string("NORMAL") || priority == .string("HIGH") || priority == .number(0)
                    || priority == .number(1)
            else {
                return .invalidArgument(
                    "Invalid value at 'message.android.priority' (type.googleapis.com/"
                        + "google.firebase.fcm.v1.AndroidMessagePriority): NORMAL or HIGH")
            }
        }
        if let ttl = android["ttl"] {
            guard let text = ttl.stringValue, let seconds = Self.durationSeconds(text), seconds <= Self.maxTTLSeconds
            else {
                return .invalidArgument(
                    "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration): "
                        + "a duration like \"3.5s\" from 0 to 2419200s is required")
            }
        }
        if let collapseKey = android["collapse_key"], collapseKey.stringValue == nil {
            return .invalidArgument(
                "Invalid value at 'message.android.collapse_key' (TYPE_STRING), \(collapseKey.typeName)")
        }
        return checkData(android["data"], at: "message.android.data")
    }

    /// `^[0-9]+(\.[0-9]{1,9})?s$` as seconds; nil if it does not match.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit) else {
            return nil
        }
        if parts.count == 2 {
            let fraction = parts[1]
            guard (1...9).contains(fraction.count), fraction.allSatisfy(\.isASCIIDigit) else { return nil }
        }
        return Double(number)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
