import HTTP2
import HeraldCore

/// The simulator's own API, on the same port as APNs and FCM:
///
/// | request | answer |
/// |---|---|
/// | `GET /sim/received[?token=T][&service=apns\|fcm][&kind=K]` | the answered requests, oldest first (`kind`: see |
/// | | `SimulatorRecord.Kind`) |
/// | `DELETE /sim/received` | forgets them: `{"cleared":n}` |
/// | `GET /sim/stats` | answers by service and status |
/// | `DELETE /sim/stats` | resets the counts |
/// | `PUT /sim/faults/{token}` | sets that token's fault (body: `SimulatorFault` JSON) |
/// | `GET /sim/faults` | the faults in force, by token |
/// | `DELETE /sim/faults/{token}` | clears one fault |
/// | `DELETE /sim/faults` | clears all: `{"cleared":n}` |
/// | `PUT /sim/tokens/{token}` | binds: `{"bundleId":"..."}` (APNs, `TokenOwners`), `{"fcmProject":"..."}` (FCM) |
/// | `GET /sim/tokens` | by token: `{"bundleId","source"}` (APNs), `{"fcmProject"}` (FCM, `FCMTokenProjects`) |
/// | `DELETE /sim/tokens/{token}` | forgets one token's app and project: `{"cleared":n}` |
/// | `DELETE /sim/tokens` | forgets all (`--fcm-token-project` stays): `{"cleared":n}` |
/// | `GET /sim/channels` | broadcast channels by bundle id: `{"<bundle>":[{"channelId",...}]}` (`BroadcastChannels`) |
/// | `DELETE /sim/channels` | forgets every channel: `{"cleared":n}` |
///
/// Answers are JSON; a bad request is 400 `{"error":"..."}` saying what is wrong, an unknown
/// path 404 and a wrong method 405, in the same shape.
struct ControlAPI: Sendable {
    static var prefix: String { "/sim/" }

    let log: RequestLog
    let faults: FaultTable
    let owners: TokenOwners
    let fcmProjects: FCMTokenProjects
    let channels: BroadcastChannels

    func respond(to request: HTTP2ServerRequest) -> HTTP2Response {
        let (path, query) = Self.split(request.path)
        switch (request.method, path) {
        case ("GET", "/sim/received"):
            return received(query: query)
        case ("DELETE", "/sim/received"):
            return Self.json(.object([("cleared", .number(Double(log.clear())))]))
        case ("GET", "/sim/stats"):
            return Self.json(log.statistics.json)
        case ("DELETE", "/sim/stats"):
            log.resetStatistics()
            return Self.json(log.statistics.json)
        case ("GET", "/sim/faults"):
            return Self.json(.object(faults.all().map { ($0.token, $0.value.json) }))
        case ("DELETE", "/sim/faults"):
            return Self.json(.object([("cleared", .number(Double(faults.removeAll())))]))
        case ("GET", "/sim/tokens"):
            return Self.json(tokens())
        case ("DELETE", "/sim/tokens"):
            return Self.json(
                .object([("cleared", .number(Double(owners.removeAll() + fcmProjects.bound.removeAll())))]))
        case ("GET", "/sim/channels"):
            return Self.json(.object(channels.all().map { ($0.bundleID, .array($0.channels.map(\.json))) }))
        case ("DELETE", "/sim/channels"):
            return Self.json(.object([("cleared", .number(Double(channels.removeAll())))]))
        case (_, "/sim/received"), (_, "/sim/stats"), (_, "/sim/faults"), (_, "/sim/tokens"), (_, "/sim/channels"):
            return Self.error(405, "\(request.method) is not allowed on \(path)")
        default:
            if path.hasPrefix("/sim/faults/") {
                return fault(request, segment: path.dropFirst("/sim/faults/".utf8.count))
            }
            if path.hasPrefix("/sim/tokens/") {
                return owner(request, segment: path.dropFirst("/sim/tokens/".utf8.count))
            }
            return Self.error(404, "no such control endpoint: \(path)")
        }
    }

    private func received(query: Substring) -> HTTP2Response {
        guard let parameters = FormURLEncoded.parse(query.utf8) else {
            return Self.error(400, "malformed query string")
        }
        var token: String?
        var service: SimulatorService?
        var kind: SimulatorRecord.Kind?
        for (name, value) in parameters {
            switch name {
            case "token": token = value
            case "service":
                guard let named = SimulatorService(rawValue: value), named != .token else {
                    return Self.error(400, "service must be apns or fcm")
                }
                service = named
            case "kind":
                guard let named = SimulatorRecord.Kind(rawValue: value) else {
                    return Self.error(
                        400,
                        "kind must be one of "
                            + SimulatorRecord.Kind.allCases.map(\.rawValue).joined(separator: ", "))
                }
                kind = named
            default: return Self.error(400, "unknown query parameter \"\(name)\" (known: token, service, kind)")
            }
        }
        var out: [UInt8] = [UInt8(ascii: "[")]
        var first = true
        for entry in log.entries() {
            if let token, entry.token != token { continue }
            if let service, entry.service != service { continue }
            if let kind, entry.kind != kind { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            entry.record.write(into: &out)
        }
        out.append(UInt8(ascii: "]"))
        return HTTP2Response(status: 200, headers: [HTTP2Header("content-type", "application/json")], body: out)
    }

    private func fault(_ request: HTTP2ServerRequest, segment: Substring) -> HTTP2Response {
        // One segment, percent-decoded: an FCM topic target is `%2Ftopics%2Fname`.
        Self.tokenResource(request, segment: segment, path: "/sim/faults/{token}") { token, json in
            do throws(ControlError) {
                let fault = try SimulatorFault(json: json)
                faults.set(fault, token: token)
                return Self.json(.object([("token", .string(token)), ("fault", fault.json)]))
            } catch {
                return Self.error(400, error.message)
            }
        } delete: { token in
            Self.json(.object([("cleared", .number(faults.remove(token: token) ? 1 : 0))]))
        }
    }

    /// Every token's app (APNs) and project (FCM), by token; one object per token.
    private func tokens() -> JSONValue {
        var members: [(key: String, value: [(key: String, value: JSONValue)])] = owners.all().map { owner in
            (owner.token, [("bundleId", .string(owner.bundleID)), ("source", .string(owner.source.rawValue))])
        }
        for binding in fcmProjects.bound.all() {
            if let index = members.firstIndex(where: { $0.key == binding.token }) {
                members[index].value.append(("fcmProject", .string(binding.value)))
            } else {
                members.append((binding.token, [("fcmProject", .string(binding.value))]))
            }
        }
        return .object(members.sorted { $0.key < $1.key }.map { ($0.key, .object($0.value)) })
    }

    static let bindingBody =
        #"the body must be {"bundleId":"<bundle id>"} for an APNs device token or "#
        + #"{"fcmProject":"<project id>"} for an FCM registration token"#

    private func owner(_ request: HTTP2ServerRequest, segment: Substring) -> HTTP2Response {
        // One segment, percent-decoded (FCM tokens may hold ':'; a client may encode it).
        Self.tokenResource(request, segment: segment, path: "/sim/tokens/{token}") { token, json in
            guard let members = json.objectMembers, members.count == 1, let (key, value) = members.first else {
                return Self.error(400, Self.bindingBody)
            }
            switch key {
            case "bundleId":
                guard Identifiers.isDeviceToken(token[...]) else {
                    return Self.error(
                        400,
                        "bundleId binds an APNs device token: the path's token must be hex "
                            + "(an even number of 0-9, a-f)")
                }
                guard let bundleID = value.stringValue, TopicPolicy.problem(with: [bundleID]) == nil else {
                    return Self.error(400, "bundleId must be a bundle id (letters, digits, '.', '-', '_')")
                }
                owners.bind(token: token, bundleID: bundleID)
                return Self.json(.object([("token", .string(token.lowercased())), ("bundleId", .string(bundleID))]))
            case "fcmProject":
                if let problem = FCMTokenProjects.problem(withToken: token) {
                    return Self.error(400, "fcmProject binds an FCM registration token: \(problem)")
                }
                guard let project = value.stringValue else {
                    return Self.error(400, "fcmProject must be a string (a Firebase project id)")
                }
                if let problem = FCMTokenProjects.problem(withProject: project) {
                    return Self.error(400, "fcmProject: \(problem)")
                }
                fcmProjects.bound.set(project, token: token)
                return Self.json(.object([("token", .string(token)), ("fcmProject", .string(project))]))
            default:
                return Self.error(400, "unknown member \"\(key)\": \(Self.bindingBody)")
            }
        } delete: { token in
            // Either kind: a hex string can be an APNs token (compared in lower case) and an FCM one (exactly).
            var cleared = fcmProjects.bound.remove(token: token) ? 1 : 0
            if Identifiers.isDeviceToken(token[...]), owners.remove(token: token) { cleared += 1 }
            return Self.json(.object([("cleared", .number(Double(cleared)))]))
        }
    }

    /// The path and the query string (without `?`).
    static func split(_ target: String) -> (path: Substring, query: Substring) {
        guard let mark = target.firstIndex(of: "?") else { return (target[...], "") }
        return (target[..<mark], target[target.index(after: mark)...])
    }

    static func json(_ value: JSONValue, status: Int = 200) -> HTTP2Response {
        HTTP2Response(
            status: status, headers: [HTTP2Header("content-type", "application/json")],
            body: JSONWriter.bytes(value))
    }

    /// A `/sim/<collection>/{token}` resource: the token is one non-empty path segment, percent-decoded; PUT
    /// takes a JSON body, DELETE none, and any other method is 405.
    private static func tokenResource(
        _ request: HTTP2ServerRequest, segment: Substring, path: String,
        put: (_ token: String, _ body: JSONValue) -> HTTP2Response, delete: (_ token: String) -> HTTP2Response
    ) -> HTTP2Response {
        guard !segment.contains("/"), let token = FormURLEncoded.decodePathSegment(segment), !token.isEmpty else {
            return Self.error(400, "the path must be \(path): one non-empty, percent-encoded segment")
        }
        switch request.method {
        case "PUT":
            let json: JSONValue
            do {
                json = try JSONParser.parse(request.body)
            } catch {
                return Self.error(400, "the body is not JSON: \(error.message) at byte \(error.offset)")
            }
            return put(token, json)
        case "DELETE":
            return delete(token)
        default:
            return Self.error(405, "\(request.method) is not allowed on \(path) (PUT or DELETE)")
        }
    }

    static func error(_ status: Int, _ message: String) -> HTTP2Response {
        json(.object([("error", .string(message))]), status: status)
    }
}
