import HTTPServer
import HeraldCore

/// Checks a route's credential, the one place each credential group is enforced: a route is answered by its
/// handler only with the credential this returns.
struct RouteGuard: Sendable {
    let authenticator: Authenticator
    let consoleGate: ConsoleGate
    /// HERALD_CONSOLE_ENABLED: the console's routes are 404 without it, before any credential is checked.
    let consoleEnabled: Bool

    /// 404 for a console route while the console is off; 401 (or the partner's 403) without the credential.
    func credential(for access: RouteAccess, _ request: HTTPRequest) throws -> RouteCredential {
        switch access {
        case .public:
            return .none
        case .consolePage:
            guard consoleEnabled else { throw HeraldError.notFound }
            return .none
        case .consoleAPI:
            guard consoleEnabled else { throw HeraldError.notFound }
            return .admin(try consoleGate.requireAdmin(request, authenticator: authenticator))
        case .admin:
            return .admin(try consoleGate.requireAdmin(request, authenticator: authenticator))
        case .host:
            try authenticator.requireHost(request)
            return .host
        case .partner:
            return .partner(try authenticator.requirePartner(request))
        }
    }
}
