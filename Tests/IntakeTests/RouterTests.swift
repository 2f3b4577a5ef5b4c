import Foundation
import HeraldCore
import Testing

@testable import Intake

@Suite("Routing")
struct RouterTests {
    /// "METHOD path" of the route found, nil for a 404 or 405.
    private func route(_ method: String, _ path: String) -> String? {
        if case .found(let route, _) = IntakeRoutes.match(method: method, path: path) {
            return "\(route.method) \(route.path)"
        }
        return nil
    }

    private func allowed(_ method: String, _ path: String) -> [String]? {
        if case .methodNotAllowed(let allowed) = IntakeRoutes.match(method: method, path: path) { return allowed }
        return nil
    }

    @Test("a path without parameters is found with or without one trailing slash, not with two")
    func literalPaths() {
        #expect(route("POST", "/api/partners/notifications/push") == "POST /api/partners/notifications/push")
        #expect(route("POST", "/api/partners/notifications/push/") == "POST /api/partners/notifications/push")
        #expect(route("POST", "/api/partners/notifications/push//") == nil)
        #expect(route("GET", "/healthz") == "GET /healthz")
        #expect(route("HEAD", "/healthz") == "GET /healthz")
    }

    @Test("a literal path's other methods are 405 with its own methods only; parameters still match")
    func literalOutranksParameters() {
        #expect(allowed("GET", "/api/partners/live-activities/channels") == ["POST"])
        guard
            case .found(let route, let parameters) = IntakeRoutes.match(
                method: "GET", path: "/api/partners/notifications/push/0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d/")
        else { Issue.record("expected the push status"); return }
        #expect(route.path.text == "/api/partners/notifications/push/{requestId}")
        #expect(parameters == ["requestId": "0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d"])
        #expect(self.route("GET", "/api/partners/notifications/pushes") == nil)
    }

    @Test("405 lists the path's methods in the table's order, HEAD after GET")
    func allowListsThePathsMethods() {
        #expect(
            allowed("POST", "/api/partners/live-activities/0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d")
                == ["PATCH", "DELETE", "GET", "HEAD"])
        #expect(allowed("POST", "/api/internal/users/u1/devices/d1") == ["PUT", "DELETE", "GET", "HEAD"])
        #expect(allowed("PUT", "/console/login") == ["GET", "HEAD", "POST"])
        #expect(allowed("DELETE", "/api/admin/mini-app-partners") == ["POST", "GET", "HEAD"])
    }

    @Test("channels come before activities: `.../channels/events` is a channel's path")
    func channelsOutrankActivities() {
        #expect(
            route("GET", "/api/partners/live-activities/channels/events")
                == "GET /api/partners/live-activities/channels/{channelId}")
        #expect(
            allowed("POST", "/api/partners/live-activities/channels/events")
                == ["DELETE", "GET", "HEAD", "GET", "HEAD"])
    }

    @Test("only GET or HEAD /healthz is the liveness check answered without the handler queue")
    func liveness() {
        #expect(IntakeRoutes.isLiveness(method: "GET", path: "/healthz"))
        #expect(IntakeRoutes.isLiveness(method: "HEAD", path: "/healthz/"))
        #expect(!IntakeRoutes.isLiveness(method: "POST", path: "/healthz"))
        #expect(!IntakeRoutes.isLiveness(method: "GET", path: "/healthzz"))
        #expect(!IntakeRoutes.isLiveness(method: "GET", path: "/readyz"))
        #expect(!IntakeRoutes.isLiveness(method: "POST", path: "/api/partners/notifications/push"))
        #expect(IntakeRoutes.all.filter(\.isLiveness).map(\.description) == ["GET /healthz public"])
    }

    @Test("only the icon upload (admin) and the media upload (partner) have larger body limits")
    func largerBodyLimit() {
        let id = "0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d"
        let icon = IntakeRoutes.largerBodyLimit(method: "PUT", path: "/api/admin/mini-app-partners/\(id)/icon")
        #expect(icon?.limit == PartnerIcon.maxSourceBytes && icon?.access == .admin)
        let media = IntakeRoutes.largerBodyLimit(method: "POST", path: "/api/partners/media")
        #expect(media?.limit == PushMedia.maxSourceBytes && media?.access == .partner)
        #expect(IntakeRoutes.largerBodyLimit(method: "POST", path: "/api/admin/mini-app-partners/\(id)/icon") == nil)
        #expect(IntakeRoutes.largerBodyLimit(method: "PUT", path: "/api/internal/users/u1") == nil)
        let larger = IntakeRoutes.all.filter { $0.largerBodyLimit != nil }
        #expect(
            larger.map(\.description) == [
                "PUT /api/admin/mini-app-partners/{id}/icon admin", "POST /api/partners/media partner",
            ])
    }

    @Test("the table declares each method and path once, every parameter typed by its name")
    func tableIsConsistent() {
        let keys = IntakeRoutes.all.map { "\($0.method) \($0.path)" }
        #expect(Set(keys).count == keys.count, "a route is declared twice")
        let parameters = IntakeRoutes.all.flatMap(\.path.parameters)
        for name in ["id", "requestId", "activityId", "channelId", "reminderId", "mediaId"] {
            #expect(parameters.filter { $0.name == name }.allSatisfy { $0.kind == .uuid }, "\(name)")
        }
        #expect(parameters.filter { $0.name == "miniAppId" }.allSatisfy { $0.kind == .miniAppID })
        #expect(Set(parameters.map(\.name)) == Set(PathParameter.kinds.keys), "a kind no route uses")
    }

    @Test("path parameters are checked in name order and UUIDs are parsed once")
    func pathParametersAreTyped() throws {
        let device = PathTemplate("/api/internal/users/{userId}/devices/{deviceId}")
        let deviceRule = "deviceId must be 1-128 of letters, digits, '.', '_', ':' and '-'."
        #expect(throws: HeraldError.invalidField("deviceId", deviceRule)) {
            try PathParameters(["userId": "a b", "deviceId": "c d"], of: device)
        }
        let partner = PathTemplate("/api/admin/mini-app-partners/{id}/previous-key")
        #expect(throws: HeraldError.invalidField("id", "id must be a UUID.")) {
            try PathParameters(["id": "0190b0c28f4e7c3a9d2b5e6f7a8b9c0d"], of: partner)
        }
        let parsed = try PathParameters(["id": "0190B0C2-8F4E-7C3A-9D2B-5E6F7A8B9C0D"], of: partner)
        #expect(try parsed.uuid("id") == UUID(uuidString: "0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d"))
        #expect(parsed.text("id") == "0190B0C2-8F4E-7C3A-9D2B-5E6F7A8B9C0D")
        let icons = PathTemplate("/icons/{miniAppId}/{file}")
        let miniAppRule = "miniAppId must be 1-128 of letters, digits, '.', '_' and '-'."
        #expect(throws: HeraldError.invalidField("miniAppId", miniAppRule)) {
            try PathParameters(["miniAppId": ".hidden", "file": "64.png"], of: icons)
        }
    }
}
