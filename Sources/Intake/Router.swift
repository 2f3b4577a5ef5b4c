import HTTPServer
import HeraldCore

/// Which bearer token a route requires.
public enum RouteAuth: Sendable { case none, partner, admin, host }

/// A route: method, a path pattern with `{name}` segments, its auth and its handler name.
public struct Route: Sendable {
    public let method: String
    public let pattern: String
    public let auth: RouteAuth
    let segments: [Substring]

    init(_ method: String, _ pattern: String, _ auth: RouteAuth) {
        self.method = method
        self.pattern = pattern
        self.auth = auth
        self.segments = pattern.split(separator: "/")
    }

    /// The path parameters when `path` matches the pattern.
    func match(_ pathSegments: [Substring]) -> [String: String]? {
        guard pathSegments.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (pattern, value) in zip(segments, pathSegments) {
            if pattern.first == "{" && pattern.last == "}" {
                guard !value.isEmpty else { return nil }
                parameters[String(pattern.dropFirst().dropLast())] = String(value)
            } else if pattern != value {
                return nil
            }
        }
        return parameters
    }
}

/// What routing found for a request.
enum RouteMatch {
    case found(Route, [String: String])
    case methodNotAllowed
    case notFound
}

/// The intake's routes. `IntakeRoutes.all` is also what the OpenAPI test compares with
/// `docs/openapi.yaml`, so the document cannot drift from the code.
public enum IntakeRoutes {
    public static let push = Route("POST", "/api/partners/notifications/push", .partner)
    public static let pushStatus = Route("GET", "/api/partners/notifications/push/{requestId}", .partner)

    public static let createPartner = Route("POST", "/api/admin/mini-app-partners", .admin)
    public static let listPartners = Route("GET", "/api/admin/mini-app-partners", .admin)
    public static let updatePartner = Route("PATCH", "/api/admin/mini-app-partners/{id}", .admin)
    public static let revokePartner = Route("DELETE", "/api/admin/mini-app-partners/{id}", .admin)
    public static let rotatePartnerKey = Route("POST", "/api/admin/mini-app-partners/{id}/rotate-key", .admin)

    public static let putUser = Route("PUT", "/api/internal/users/{userId}", .host)
    public static let putDevice = Route("PUT", "/api/internal/users/{userId}/devices/{deviceId}", .host)
    public static let deleteDevice = Route("DELETE", "/api/internal/users/{userId}/devices/{deviceId}", .host)
    public static let putSession = Route("PUT", "/api/internal/users/{userId}/mini-app-sessions/{miniAppId}", .host)
    public static let putOptOut = Route("PUT", "/api/internal/users/{userId}/opt-outs/{miniAppId}", .host)
    public static let deleteOptOut = Route("DELETE", "/api/internal/users/{userId}/opt-outs/{miniAppId}", .host)
    public static let listSenders = Route("GET", "/api/internal/users/{userId}/mini-app-senders", .host)

    public static let healthz = Route("GET", "/healthz", .none)
    public static let readyz = Route("GET", "/readyz", .none)
    public static let metrics = Route("GET", "/metrics", .none)

    public static let all: [Route] = [
        push, pushStatus, createPartner, listPartners, updatePartner, revokePartner, rotatePartnerKey,
        putUser, putDevice, deleteDevice, putSession, putOptOut, deleteOptOut, listSenders,
        healthz, readyz, metrics,
    ]

    static func match(method: String, path: String) -> RouteMatch {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let pathSegments = Array(segments.last == "" && segments.count > 1 ? segments.dropLast() : segments)
        var pathMatched = false
        for route in all {
            guard let parameters = route.match(pathSegments) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .found(route, parameters)
            }
            pathMatched = true
        }
        return pathMatched ? .methodNotAllowed : .notFound
    }
}
