import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing

/// The user's language end to end: the host's `locale` on the user, a push's `localized` variants, and each device
/// getting the variant its user's locale matches (LocaleTag.lookup), with the brand prefix, through the intake's
/// batch statement, its two-round-trip path and group rows, to the simulator.
@Suite(.requiresDatabase, .serialized)
struct PushLocaleFlowTests {
    static let variants = #","localized":{"de":{"title":"Hallo","body":"Welt"},"pt":{"title":"Olá"}}"#

    /// PUT of the user with `locale` (a JSON value; nil: the member left out); the answer's body.
    @discardableResult
    static func putUser(
        _ harness: LiveActivityHarness, _ user: LiveActivityHarness.User, locale: String?
    ) throws -> JSONValue {
        let member = locale.map { #","locale":\#($0)"# } ?? ""
        let response = try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(user.id)", #"{"tenantId":"t1","emails":["\#(user.email)"]\#(member)}"#),
            [200])
        return try JSONParser.parse(response.body)
    }

    static func push(
        _ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner, to users: [LiveActivityHarness.User],
        title: String, extra: String = variants
    ) throws -> String {
        let emails = users.map { #""\#($0.email)""# }.joined(separator: ",")
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":[\#(emails)]},"title":"\#(title)","body":"Hello"\#(extra)}"#),
            [202])
        return try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
    }

    /// The (title, body) of each FCM message the simulator accepted for `user`'s Pixel, oldest first.
    static func received(_ harness: LiveActivityHarness, _ user: LiveActivityHarness.User) -> [(String, String)] {
        harness.fcmMessages(to: user.fcmToken!).filter { $0.status == 200 }.compactMap { record in
            let data = record.payload?["message"]?["data"]
            guard let title = data?["title"]?.stringValue, let body = data?["body"]?.stringValue else { return nil }
            return (title, body)
        }
    }

    @Test("the host's locale: canonical case, kept when left out, cleared by null; a malformed one is 400")
    func hostLocale() throws {
        let harness = try LiveActivityHarness()
        let user = try harness.user(iphone: false)
        #expect(try Self.putUser(harness, user, locale: #""pt-br""#)["locale"] == .string("pt-BR"))
        #expect(try Self.putUser(harness, user, locale: nil)["locale"] == .string("pt-BR"))
        #expect(try harness.db.count("SELECT count(*) FROM users WHERE id = $1 AND locale = 'pt-BR'", [user.id]) == 1)
        let bad = try harness.host(
            "PUT", "/api/internal/users/\(user.id)", #"{"tenantId":"t1","emails":["\#(user.email)"],"locale":"pt_BR"}"#)
        #expect(bad.status == 400)
        let error = try JSONParser.parse(bad.body)["error"]
        #expect(error?["code"] == .string("invalid_locale") && error?["field"] == .string("locale"))
        #expect(try harness.db.count("SELECT count(*) FROM users WHERE id = $1 AND locale = 'pt-BR'", [user.id]) == 1)
        #expect(try Self.putUser(harness, user, locale: "null")["locale"] == .null)
        #expect(try harness.db.count("SELECT count(*) FROM users WHERE id = $1 AND locale IS NULL", [user.id]) == 1)
    }

    @Test("each user gets the variant its locale matches, prefixed: de, pt for pt-BR, the default without one")
    func variantPerUser() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let (german, brazilian, plain) = (
            try harness.user(iphone: false), try harness.user(iphone: false), try harness.user(iphone: false)
        )
        try Self.putUser(harness, german, locale: #""de""#)
        try Self.putUser(harness, brazilian, locale: #""pt-BR""#)
        try harness.workers.startWorker()
        // One push each, twice (the batch statement: the first learns who and which locale, the second comes from the
        // intake's cache), then one to all three (more users than the batch statement's slots: rendered per device).
        for _ in 0..<2 {
            for user in [german, brazilian, plain] { _ = try Self.push(harness, partner, to: [user], title: "Hi") }
        }
        _ = try Self.push(harness, partner, to: [german, brazilian, plain], title: "Hi")
        let expected: [(LiveActivityHarness.User, (String, String))] = [
            (german, ("[Pull] Hallo", "Welt")), (brazilian, ("[Pull] Olá", "")), (plain, ("[Pull] Hi", "Hello")),
        ]
        try await harness.workers.waitUntil("three pushes on each Pixel") {
            expected.allSatisfy { Self.received(harness, $0.0).count == 3 }
        }
        for (user, text) in expected {
            let received = Self.received(harness, user)
            #expect(received.allSatisfy { $0 == text }, "\(user.id): \(received)")
        }
    }

    @Test("a locale the host changes after the intake cached the user's gets the new variant, never the old one")
    func localeChangedAfterCacheRead() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(iphone: false)
        try Self.putUser(harness, user, locale: #""de""#)
        try harness.workers.startWorker()
        let both = #","localized":{"de":{"title":"Hallo"},"fr":{"title":"Bonjour"}}"#
        _ = try Self.push(harness, partner, to: [user], title: "Hi", extra: both)
        try await harness.workers.waitUntil("the German push") { Self.received(harness, user).count == 1 }
        // The intake's cache now says `de`; the host moves the user to French.
        try Self.putUser(harness, user, locale: #""fr""#)
        _ = try Self.push(harness, partner, to: [user], title: "Hi", extra: both)
        try await harness.workers.waitUntil("the French push") { Self.received(harness, user).count == 2 }
        #expect(Self.received(harness, user).map(\.0) == ["[Pull] Hallo", "[Pull] Bonjour"])
    }

    @Test("group rows keep each member's own variant: 16 Pixels of German and other users in one push")
    func groupRowsByVariant() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let users = try (0..<16).map { _ in try harness.user(iphone: false) }
        for user in users.prefix(8) { try Self.putUser(harness, user, locale: #""de-AT""#) }
        let request = try Self.push(harness, partner, to: users, title: "Hi")
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM deliveries WHERE request_id = $1::uuid AND member_count > 1", [request]) >= 1)
        try harness.workers.startWorker()
        try await harness.workers.waitUntil("every Pixel") {
            users.allSatisfy { Self.received(harness, $0).count == 1 }
        }
        for (index, user) in users.enumerated() {
            #expect(Self.received(harness, user).first?.0 == (index < 8 ? "[Pull] Hallo" : "[Pull] Hi"), "\(index)")
        }
    }

    @Test("bad tags, too many variants and an oversized variant are refused with their field; nothing is written")
    func refusals() throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(iphone: false)
        let many = (0..<21).map { #""l\#(Character(UnicodeScalar(97 + $0)!))x":{"title":"t"}"# }
        let huge = String(repeating: "😀", count: 1000)
        let cases: [(String, Int, String, String)] = [
            (#","localized":{"de_DE":{"title":"Hallo"}}"#, 400, "invalid_locale", "localized.de_DE"),
            (#","localized":{"de":{"title":""}}"#, 400, "invalid_field", "localized.de.title"),
            (#","localized":{\#(many.joined(separator: ","))}"#, 400, "too_many_variants", "localized"),
            (
                #","localized":{"de":{"title":"Hallo","body":"\#(huge)"}}"#, 422, "payload_too_large",
                "localized.de.body"
            ),
        ]
        for (extra, status, code, field) in cases {
            let response = try harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Hi"\#(extra)}"#)
            let error = try JSONParser.parse(response.body)["error"]
            #expect(response.status == status, "\(code)")
            #expect(
                error?["code"] == .string(code) && error?["field"] == .string(field), "\(String(describing: error))")
        }
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM push_requests p JOIN partners a ON a.id = p.partner_id WHERE a.mini_app_id = $1",
                [partner.miniApp]) == 0)
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE user_id = $1", [user.id]) == 0)
    }

    @Test("a Live Activity alert shows the variant its user's locale matches, on start, update and end")
    func liveActivityAlertLocalized() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        try Self.putUser(harness, user, locale: #""pt-BR""#)
        let fcmToken = try #require(user.fcmToken)
        let pushToStart = try #require(user.pushToStartToken)
        try harness.workers.startWorker()
        let started = try harness.start(
            partner, user,
            alert: #"{"title":"Deposit started","localized":{"pt":{"title":"Depósito iniciado","body":"1/6"}}}"#)
        let id = try harness.activityID(started)
        try await harness.workers.waitUntil("the start on both phones") {
            harness.apnsPushes(to: pushToStart).count == 1 && harness.fcmMessages(to: fcmToken).count == 1
        }
        let aps = try #require(LiveActivityHarness.aps(harness.apnsPushes(to: pushToStart)[0]))
        #expect(aps["alert"]?["title"]?.stringValue == "[Pull] Depósito iniciado")
        #expect(aps["alert"]?["body"]?.stringValue == "1/6")
        let startData = try #require(harness.fcmMessages(to: fcmToken).first.flatMap(LiveActivityHarness.data))
        #expect(startData["alertTitle"]?.stringValue == "[Pull] Depósito iniciado")

        try harness.expect(
            harness.update(
                partner, id,
                #"{"state":{"currentStage":1},"alert":{"title":"Halfway","localized":{"pt-BR":{"title":"Metade"}}}}"#),
            [200])
        try await harness.workers.waitUntil("the update on the Pixel") { harness.fcmMessages(to: fcmToken).count == 2 }
        let updateData = try #require(harness.fcmMessages(to: fcmToken).last.flatMap(LiveActivityHarness.data))
        #expect(updateData["alertTitle"]?.stringValue == "[Pull] Metade")

        // A bad tag in an alert is refused with its field, nothing sent.
        let refused = try harness.update(partner, id, #"{"alert":{"title":"x","localized":{"pt_BR":{"title":"y"}}}}"#)
        let error = try JSONParser.parse(refused.body)["error"]
        #expect(refused.status == 400 && error?["code"] == .string("invalid_locale"))
        #expect(error?["field"] == .string("alert.localized.pt_BR"))

        // A user without a matching variant gets the default text.
        try Self.putUser(harness, user, locale: #""fr""#)
        try harness.expect(
            harness.end(partner, id, #"{"alert":{"title":"Done","localized":{"pt":{"title":"Pronto"}}}}"#), [200])
        try await harness.workers.waitUntil("the end on the Pixel") { harness.fcmMessages(to: fcmToken).count == 3 }
        let endData = try #require(harness.fcmMessages(to: fcmToken).last.flatMap(LiveActivityHarness.data))
        #expect(endData["alertTitle"]?.stringValue == "[Pull] Done")

        #expect(harness.fcmMessages(to: fcmToken).count == 3)
    }
}
