import Foundation
import HTTPServer
import HeraldCore

/// What routing found for a request.
enum RouteMatch {
    case found(IntakeRoute, [String: String])
    /// The path exists with other methods: the `Allow` header lists them.
    case methodNotAllowed(allowed: [String])
    case notFound
}

/// The intake's routes: the one table the server dispatches from, each handler's own routes in turn.
/// `IntakeRoutes.all` is also what the OpenAPI test compares with `docs/openapi.yaml` (methods, paths,
/// credentials and path parameters' schemas), so the document cannot drift from the code.
public enum IntakeRoutes {
    public static let all: [IntakeRoute] =
        PushHandler.routes + ActivityHandler.routes + AdminHandler.routes
        + IconHandler.routes + MediaHandler.routes + HostHandler.routes + DeliveryEventHandler.routes
        + ReminderHandler.routes + ProbeHandler.routes + ConsoleHandler.routes

    /// The larger body limit of the route `method` and `path` name, if it has one (the icon upload's 1 MiB, the
    /// media upload's 5 MiB), and the credential it needs.
    public static func largerBodyLimit(method: String, path: String) -> (limit: Int, access: RouteAccess)? {
        // Asked for every request before its body is read: other methods cost one set lookup.
        guard largerBodyMethods.contains(method), case .found(let route, _) = match(method: method, path: path),
            let limit = route.largerBodyLimit
        else { return nil }
        return (limit, route.access)
    }

    private static let largerBodyMethods = Set(all.filter { $0.largerBodyLimit != nil }.map(\.method))

    /// True for a path under `/api/admin/` (the console's JSON API included), the admin credential's group.
    public static func isAdminPath(_ path: String) -> Bool {
        path.hasPrefix("/api/admin/") || path == "/api/admin"
    }

    /// True for GET (or HEAD) of the liveness route, the check that never blocks; other paths cost a prefix test.
    public static func isLiveness(method: String, path: String) -> Bool {
        guard method == "GET" || method == "HEAD", livenessPaths.contains(where: { path.hasPrefix($0) }),
            case .found(let route, _) = match(method: method, path: path)
        else { return false }
        return route.isLiveness
    }

    private static let livenessPaths = all.filter(\.isLiveness).map(\.path.text)

    /// The routes without parameters by path: a push's path is found by one lookup, not by trying every route.
    private static let literalRoutes = Dictionary(
        grouping: all.filter { $0.path.parameters.isEmpty },
        by: \.path.text)

    /// The route `method` and `path` name, with its parameters' raw values (checked by `PathParameters`), or why
    /// there is none. One trailing slash is ignored. A path some routes name with fewer parameters is theirs
    /// alone: `/api/partners/live-activities/channels` is the channels' path (405 for GET), not an activity whose
    /// id is "channels"; among routes with as many, the first in `all` wins.
    static func match(method: String, path: String) -> RouteMatch {
        var allowed: [String] = []
        let trimmed = path.utf8.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        let matching: [(IntakeRoute, [String: String])]
        if let routes = literalRoutes[trimmed] {
            matching = routes.map { ($0, [:]) }
        } else {
            let pathSegments = Array(trimmed.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
            matching = all.compactMap { route in route.path.match(pathSegments).map { (route, $0) } }
        }
        let fewest = matching.map { $0.1.count }.min() ?? 0
        for (route, values) in matching where values.count == fewest {
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .found(route, values)
            }
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}
