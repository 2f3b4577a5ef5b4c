import Testing
@testable import Intake

@Suite("Routing")
struct RouterTests {
    private func endpoint(_ method: String, _ path: String) -> Endpoint? {
        if case .found(let route, _) = IntakeRoutes.match(method: method, path: path) { return route.endpoint }
        return nil
    }

    @Test("a path without parameters is found with or without one trailing slash, not with two")
    func literalPaths() {
        #expect(endpoint("POST", "/api/partners/notifications/push") == .push)
        #expect(endpoint("POST", "/api/partners/notifications/push/") == .push)
        #expect(endpoint("POST", "/api/partners/notifications/push//") == nil)
        #expect(endpoint("GET", "/healthz") == .healthz)
        #expect(endpoint("HEAD", "/healthz") == .healthz)
    }

    @Test("a literal path's other methods are 405 with its own methods only; parameters still match")
    func literalOutranksParameters() {
        guard case .methodNotAllowed(let allowed) = IntakeRoutes.match(method: "GET", path: "/api/partners/live-activities/channels")
        else { Issue.record("expected 405"); return }
        #expect(allowed == ["POST"])
        guard case .found(let route, let parameters) = IntakeRoutes.match(
            method: "GET", path: "/api/partners/notifications/push/0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d/")
        else { Issue.record("expected the push status"); return }
        #expect(route.endpoint == .pushStatus)
        #expect(parameters == ["requestId": "0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d"])
        #expect(endpoint("GET", "/api/partners/notifications/pushes") == nil)
    }

    @Test("only GET or HEAD /healthz is the liveness check answered without the handler queue")
    func liveness() {
        #expect(IntakeRoutes.isLiveness(method: "GET", path: "/healthz"))
        #expect(IntakeRoutes.isLiveness(method: "HEAD", path: "/healthz/"))
        #expect(!IntakeRoutes.isLiveness(method: "POST", path: "/healthz"))
        #expect(!IntakeRoutes.isLiveness(method: "GET", path: "/healthzz"))
        #expect(!IntakeRoutes.isLiveness(method: "GET", path: "/readyz"))
        #expect(!IntakeRoutes.isLiveness(method: "POST", path: "/api/partners/notifications/push"))
    }
}
