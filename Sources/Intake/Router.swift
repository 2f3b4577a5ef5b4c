import Foundation
import HTTPServer
import HeraldCore

/// Which bearer token a route requires.
public enum RouteAuth: Sendable { case none, partner, admin, host }

/// What a route does: the key the intake dispatches on.
public enum Endpoint: Sendable {
    case push, pushStatus
    case startActivity, updateActivity, endActivity, getActivity, putActivityToken, putActivityDeviceState
    case listActivityEvents
    case openChannel, updateChannel, endChannel, getChannel, startFromChannel, listLiveChannels
    case createPartner, listPartners, updatePartner, revokePartner, suspendPartner, resumePartner, rotatePartnerKey,
        endPreviousPartnerKey
    case putPartnerIcon, adminAudit
    case rotateWebhookSecret, endPreviousWebhookSecret
    case icon
    case putUser, putDevice, deleteDevice, putSession, putOptOut, deleteOptOut, listSenders
    case listDevices, getDevice
    case scheduleReminder, listReminders, cancelReminder
    case healthz, readyz
    case consolePage, consoleLoginPage, consoleLogin, consoleAsset
    case consoleSession, consoleSignOut, consoleOverview, consoleWorkers, consoleFailures, consoleReplay
    case consoleRequests, consoleRequest, consolePartners, consoleTokens
    case consoleActivities, consoleWebhooks, consoleWebhookReplay

    /// The operator console's pages and API: 404 unless HERALD_CONSOLE_ENABLED=1.
    var isConsole: Bool {
        switch self {
        case .consolePage, .consoleLoginPage, .consoleLogin, .consoleAsset, .consoleSession, .consoleSignOut,
             .consoleOverview, .consoleWorkers, .consoleFailures, .consoleReplay, .consoleRequests, .consoleRequest,
             .consolePartners, .consoleTokens, .consoleActivities, .consoleWebhooks, .consoleWebhookReplay:
            return true
        default:
            return false
        }
    }
}

/// A route: its endpoint, method, a path pattern with `{name}` segments, and its auth.
public struct Route: Sendable {
    public let endpoint: Endpoint
    public let method: String
    public let pattern: String
    public let auth: RouteAuth
    let segments: [Substring]

    init(_ endpoint: Endpoint, _ method: String, _ pattern: String, _ auth: RouteAuth) {
        self.endpoint = endpoint
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
    /// The path exists with other methods: the `Allow` header lists them.
    case methodNotAllowed(allowed: [String])
    case notFound
}

/// The intake's routes. `IntakeRoutes.all` is also what the OpenAPI test compares with
/// `docs/openapi.yaml`, so the document cannot drift from the code.
public enum IntakeRoutes {
    public static let push = Route(.push, "POST", "/api/partners/notifications/push", .partner)
    public static let pushStatus = Route(.pushStatus, "GET", "/api/partners/notifications/push/{requestId}", .partner)

    public static let startActivity = Route(.startActivity, "POST", "/api/partners/live-activities", .partner)
    public static let updateActivity = Route(
        .updateActivity, "POST", "/api/partners/live-activities/{activityId}/update", .partner)
    public static let patchActivity = Route(.updateActivity, "PATCH", "/api/partners/live-activities/{activityId}", .partner)
    public static let endActivity = Route(.endActivity, "DELETE", "/api/partners/live-activities/{activityId}", .partner)
    public static let getActivity = Route(.getActivity, "GET", "/api/partners/live-activities/{activityId}", .partner)
    public static let listActivityEvents = Route(
        .listActivityEvents, "GET", "/api/partners/live-activities/{activityId}/events", .partner)

    public static let openChannel = Route(.openChannel, "POST", "/api/partners/live-activities/channels", .partner)
    public static let updateChannel = Route(
        .updateChannel, "POST", "/api/partners/live-activities/channels/{channelId}/update", .partner)
    public static let endChannel = Route(
        .endChannel, "DELETE", "/api/partners/live-activities/channels/{channelId}", .partner)
    public static let getChannel = Route(
        .getChannel, "GET", "/api/partners/live-activities/channels/{channelId}", .partner)
    public static let startFromChannel = Route(
        .startFromChannel, "POST", "/api/partners/live-activities/channels/{channelId}/starts", .partner)

    public static let createPartner = Route(.createPartner, "POST", "/api/admin/mini-app-partners", .admin)
    public static let listPartners = Route(.listPartners, "GET", "/api/admin/mini-app-partners", .admin)
    public static let updatePartner = Route(.updatePartner, "PATCH", "/api/admin/mini-app-partners/{id}", .admin)
    public static let revokePartner = Route(.revokePartner, "DELETE", "/api/admin/mini-app-partners/{id}", .admin)
    public static let suspendPartner = Route(
        .suspendPartner, "POST", "/api/admin/mini-app-partners/{id}/suspend", .admin)
    public static let resumePartner = Route(.resumePartner, "POST", "/api/admin/mini-app-partners/{id}/resume", .admin)
    public static let rotatePartnerKey = Route(.rotatePartnerKey, "POST", "/api/admin/mini-app-partners/{id}/rotate-key", .admin)
    public static let adminAudit = Route(.adminAudit, "GET", "/api/admin/audit", .admin)
    public static let endPreviousPartnerKey = Route(
        .endPreviousPartnerKey, "DELETE", "/api/admin/mini-app-partners/{id}/previous-key", .admin)
    public static let rotateWebhookSecret = Route(
        .rotateWebhookSecret, "POST", "/api/admin/mini-app-partners/{id}/rotate-webhook-secret", .admin)
    public static let endPreviousWebhookSecret = Route(
        .endPreviousWebhookSecret, "DELETE", "/api/admin/mini-app-partners/{id}/previous-webhook-secret", .admin)
    public static let putPartnerIcon = Route(.putPartnerIcon, "PUT", "/api/admin/mini-app-partners/{id}/icon", .admin)
    /// Without auth: phones load it to render a notification's avatar.
    public static let icon = Route(.icon, "GET", "/icons/{miniAppId}/{file}", .none)

    public static let putUser = Route(.putUser, "PUT", "/api/internal/users/{userId}", .host)
    public static let putDevice = Route(.putDevice, "PUT", "/api/internal/users/{userId}/devices/{deviceId}", .host)
    public static let deleteDevice = Route(.deleteDevice, "DELETE", "/api/internal/users/{userId}/devices/{deviceId}", .host)
    public static let listDevices = Route(.listDevices, "GET", "/api/internal/users/{userId}/devices", .host)
    public static let getDevice = Route(.getDevice, "GET", "/api/internal/users/{userId}/devices/{deviceId}", .host)
    public static let putSession = Route(.putSession, "PUT", "/api/internal/users/{userId}/mini-app-sessions/{miniAppId}", .host)
    public static let putOptOut = Route(.putOptOut, "PUT", "/api/internal/users/{userId}/opt-outs/{miniAppId}", .host)
    public static let deleteOptOut = Route(.deleteOptOut, "DELETE", "/api/internal/users/{userId}/opt-outs/{miniAppId}", .host)
    public static let listSenders = Route(.listSenders, "GET", "/api/internal/users/{userId}/mini-app-senders", .host)
    public static let scheduleReminder = Route(.scheduleReminder, "POST", "/api/internal/users/{userId}/reminders", .host)
    public static let listReminders = Route(.listReminders, "GET", "/api/internal/users/{userId}/reminders", .host)
    public static let cancelReminder = Route(
        .cancelReminder, "DELETE", "/api/internal/users/{userId}/reminders/{reminderId}", .host)
    public static let putActivityToken = Route(
        .putActivityToken, "PUT", "/api/internal/live-activities/{activityId}/push-tokens/{deviceId}", .host)
    public static let putActivityDeviceState = Route(
        .putActivityDeviceState, "PUT", "/api/internal/live-activities/{activityId}/devices/{deviceId}/state", .host)
    public static let listLiveChannels = Route(
        .listLiveChannels, "GET", "/api/internal/mini-apps/{miniAppId}/live-channels", .host)

    public static let healthz = Route(.healthz, "GET", "/healthz", .none)
    public static let readyz = Route(.readyz, "GET", "/readyz", .none)

    public static let consolePage = Route(.consolePage, "GET", "/console", .none)
    public static let consoleLoginPage = Route(.consoleLoginPage, "GET", "/console/login", .none)
    public static let consoleLogin = Route(.consoleLogin, "POST", "/console/login", .none)
    public static let consoleAsset = Route(.consoleAsset, "GET", "/console/assets/{file}", .none)
    public static let consoleSession = Route(.consoleSession, "GET", "/api/admin/console/session", .admin)
    public static let consoleSignOut = Route(.consoleSignOut, "POST", "/api/admin/console/sign-out", .admin)
    public static let consoleOverview = Route(.consoleOverview, "GET", "/api/admin/console/overview", .admin)
    public static let consoleWorkers = Route(.consoleWorkers, "GET", "/api/admin/console/workers", .admin)
    public static let consoleFailures = Route(.consoleFailures, "GET", "/api/admin/console/failures", .admin)
    public static let consoleReplay = Route(.consoleReplay, "POST", "/api/admin/console/failures/replay", .admin)
    public static let consoleRequests = Route(.consoleRequests, "GET", "/api/admin/console/requests", .admin)
    public static let consoleRequest = Route(.consoleRequest, "GET", "/api/admin/console/requests/{requestId}", .admin)
    public static let consolePartners = Route(.consolePartners, "GET", "/api/admin/console/partners", .admin)
    public static let consoleTokens = Route(.consoleTokens, "GET", "/api/admin/console/tokens", .admin)
    public static let consoleActivities = Route(.consoleActivities, "GET", "/api/admin/console/live-activities", .admin)
    public static let consoleWebhooks = Route(.consoleWebhooks, "GET", "/api/admin/console/webhooks", .admin)
    public static let consoleWebhookReplay = Route(
        .consoleWebhookReplay, "POST", "/api/admin/console/webhooks/replay", .admin)

    public static let all: [Route] = [
        // Channels first: `.../channels/{channelId}` would also match `.../{activityId}/events`.
        openChannel, updateChannel, endChannel, getChannel, startFromChannel,
        push, pushStatus, startActivity, updateActivity, patchActivity, endActivity, getActivity, listActivityEvents,
        createPartner, listPartners, updatePartner, revokePartner, suspendPartner, resumePartner, rotatePartnerKey,
        endPreviousPartnerKey, adminAudit,
        putPartnerIcon, rotateWebhookSecret, endPreviousWebhookSecret, icon,
        putUser, putDevice, deleteDevice, listDevices, getDevice, putSession, putOptOut, deleteOptOut, listSenders, putActivityToken,
        putActivityDeviceState, listLiveChannels,
        scheduleReminder, listReminders, cancelReminder,
        healthz, readyz,
        consolePage, consoleLoginPage, consoleLogin, consoleAsset, consoleSession, consoleSignOut, consoleOverview,
        consoleWorkers, consoleFailures, consoleReplay, consoleRequests, consoleRequest, consolePartners, consoleTokens,
        consoleActivities, consoleWebhooks, consoleWebhookReplay,
    ]

    /// True for `PUT /api/admin/mini-app-partners/{id}/icon`, the one request with a larger body limit.
    public static func isIconUpload(method: String, path: String) -> Bool {
        guard method == "PUT", case .found(let route, _) = match(method: method, path: path) else { return false }
        return route.endpoint == .putPartnerIcon
    }

    /// True for a path under `/api/admin/` (the console's JSON API included), the admin credential's group.
    public static func isAdminPath(_ path: String) -> Bool {
        path.hasPrefix("/api/admin/") || path == "/api/admin"
    }

    /// True for `GET /healthz` (or HEAD), the liveness check that never blocks; other paths cost one prefix test.
    public static func isLiveness(method: String, path: String) -> Bool {
        guard method == "GET" || method == "HEAD", path.hasPrefix(healthz.pattern),
              case .found(let route, _) = match(method: method, path: path) else { return false }
        return route.endpoint == .healthz
    }

    /// The routes without parameters by pattern: a push's path is found by one lookup, not by trying every route.
    private static let literalRoutes = Dictionary(grouping: all.filter { !$0.pattern.contains("{") }, by: \.pattern)

    static func match(method: String, path: String) -> RouteMatch {
        var allowed: [String] = []
        // A path a route names with fewer parameters is that route's alone: `/api/partners/live-activities/channels`
        // is the channels' path (405 for GET), not an activity whose id is "channels". So a path some routes name
        // with none is theirs.
        // One trailing slash is ignored.
        let trimmed = path.utf8.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        let matching: [(Route, [String: String])]
        if let routes = literalRoutes[trimmed] {
            matching = routes.map { ($0, [:]) }
        } else {
            let pathSegments = Array(trimmed.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
            matching = all.compactMap { route in route.match(pathSegments).map { (route, $0) } }
        }
        let fewest = matching.map { $0.1.count }.min() ?? 0
        for (route, parameters) in matching where parameters.count == fewest {
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .found(route, parameters)
            }
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    /// Refuses (400, naming the parameter) a path parameter its id kind does not allow, before any handler
    /// or store sees it: the ids are the keys of the rows a request writes.
    static func checkParameters(_ parameters: [String: String]) throws(HeraldError) {
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) {
            let valid: Bool
            let rule: String
            switch name {
            case "id", "requestId", "activityId", "reminderId", "channelId":
                valid = value.utf8.count == 36 && UUID(uuidString: value) != nil
                rule = "a UUID"
            case "miniAppId":
                valid = Identifiers.isValidMiniAppID(value)
                rule = "1-128 of letters, digits, '.', '_' and '-'"
            default:
                valid = Identifiers.isValidExternalID(value)
                rule = "1-128 of letters, digits, '.', '_', ':' and '-'"
            }
            guard valid else { throw .invalidField(name, "\(name) must be \(rule).") }
        }
    }
}
