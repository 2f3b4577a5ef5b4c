import HTTPServer
import HeraldCore

/// Which credential a route requires: checked once for the whole group (`RouteGuard`) before the handler runs.
public enum RouteAccess: String, Sendable, CaseIterable {
    /// No credential: the probes, icons (phones load them to render a notification's avatar) and a push's media
    /// (at signed paths).
    case `public`
    /// A partner's API key.
    case partner
    /// HERALD_HOST_TOKEN.
    case host
    /// HERALD_ADMIN_TOKEN, or a console session with its CSRF token (`ConsoleGate`).
    case admin
    /// The console's pages: no credential, and 404 unless HERALD_CONSOLE_ENABLED=1.
    case consolePage
    /// The console's JSON API: the admin credential, and 404 unless HERALD_CONSOLE_ENABLED=1.
    case consoleAPI
}

/// The credential `RouteGuard` found for a route's access.
enum RouteCredential {
    case none
    case partner(PartnerProfile)
    case host
    case admin(AdminCaller)
}

/// One route of the intake: method, path template, access, and what answers it. Each handler declares its own
/// (`PushHandler.routes`, ...) and `IntakeRoutes.all` lists them; nothing else names a route.
public struct IntakeRoute: Sendable, CustomStringConvertible {
    typealias Respond = @Sendable (IntakeHandlers, RoutedRequest, RouteCredential) throws -> HTTPResponse

    public let method: String
    public let path: PathTemplate
    public let access: RouteAccess
    /// A body limit above the server's 64 KiB, granted before the body is read and only to the route's credential
    /// (`IntakeServer.start`).
    public let largerBodyLimit: Int?
    /// The liveness check: answered at once under overload (never queued, never refused) and never logged.
    public let isLiveness: Bool
    let respond: Respond

    init(
        _ method: String, _ path: String, _ access: RouteAccess, largerBodyLimit: Int? = nil,
        isLiveness: Bool = false, _ respond: @escaping Respond
    ) {
        self.method = method
        self.path = PathTemplate(path)
        self.access = access
        self.largerBodyLimit = largerBodyLimit
        self.isLiveness = isLiveness
        self.respond = respond
    }

    public var description: String { "\(method) \(path) \(access.rawValue)" }
}

extension IntakeRoute {
    /// A route without a credential (`access` is `.public` or `.consolePage`).
    static func open(
        _ method: String, _ path: String, _ access: RouteAccess = .public, isLiveness: Bool = false,
        _ respond: @escaping @Sendable (IntakeHandlers, RoutedRequest) throws -> HTTPResponse
    ) -> Self {
        precondition(access == .public || access == .consolePage, "\(method) \(path): \(access) needs a credential")
        return Self(method, path, access, isLiveness: isLiveness) { handlers, request, _ in
            try respond(handlers, request)
        }
    }

    /// A route for a partner's key; the handler gets the key's partner.
    static func partner(
        _ method: String, _ path: String, largerBodyLimit: Int? = nil,
        _ respond: @escaping @Sendable (IntakeHandlers, RoutedRequest, PartnerProfile) throws -> HTTPResponse
    ) -> Self {
        Self(method, path, .partner, largerBodyLimit: largerBodyLimit) { handlers, request, credential in
            guard case .partner(let partner) = credential else { throw HeraldError.unauthorized }
            return try respond(handlers, request, partner)
        }
    }

    /// A route for the host token.
    static func host(
        _ method: String, _ path: String,
        _ respond: @escaping @Sendable (IntakeHandlers, RoutedRequest) throws -> HTTPResponse
    ) -> Self {
        Self(method, path, .host) { handlers, request, credential in
            guard case .host = credential else { throw HeraldError.unauthorized }
            return try respond(handlers, request)
        }
    }

    /// A route for the admin credential (`access` is `.admin` or `.consoleAPI`); the handler gets its caller.
    static func admin(
        _ method: String, _ path: String, _ access: RouteAccess = .admin, largerBodyLimit: Int? = nil,
        _ respond: @escaping @Sendable (IntakeHandlers, RoutedRequest, AdminCaller) throws -> HTTPResponse
    ) -> Self {
        precondition(access == .admin || access == .consoleAPI, "\(method) \(path): \(access) is not an admin group")
        return Self(method, path, access, largerBodyLimit: largerBodyLimit) { handlers, request, credential in
            guard case .admin(let caller) = credential else { throw HeraldError.unauthorized }
            return try respond(handlers, request, caller)
        }
    }

    /// A route for the admin credential whose handler reads and needs not know the caller.
    static func admin(
        _ method: String, _ path: String, _ access: RouteAccess = .admin,
        _ respond: @escaping @Sendable (IntakeHandlers, RoutedRequest) throws -> HTTPResponse
    ) -> Self {
        admin(method, path, access) { handlers, request, _ in try respond(handlers, request) }
    }
}
