import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import ServiceSupport
import Testing

/// The budgets every mini-app shares (HERALD_LA_*), each at its edge, through the real intake and
/// Postgres: a refusal writes nothing and is counted by partner in /metrics.
@Suite(.requiresDatabase, .serialized)
struct LiveActivityBudgetTests {
    static func error(_ response: TestHTTPClient.Response) -> (code: String?, field: String?) {
        let json = try? JSONParser.parse(response.body)
        return (json?["error"]?["code"]?.stringValue, json?["error"]?["field"]?.stringValue)
    }

    static func retryAfter(_ response: TestHTTPClient.Response) -> Int? {
        response.headers["retry-after"].flatMap { Int($0) }
    }

    /// Rows a refused start must not have written.
    static func written(_ harness: LiveActivityHarness) throws -> [Int] {
        try ["live_activities", "live_activity_targets", "deliveries", "idempotency_keys"].map {
            try harness.db.count("SELECT count(*) FROM \($0)")
        }
    }

    @Test func theFourthActiveActivityAcrossMiniAppsIs409AndAReplacementIsNotCountedTwice() throws {
        let harness = try LiveActivityHarness()
        let partners = try (0..<4).map { _ in try harness.partner() }
        let user = try harness.user(sessionWith: partners.map(\.miniApp))
        var ids: [String] = []
        for partner in partners.prefix(3) {
            ids.append(try harness.activityID(harness.start(partner, user)))
        }
        let before = try Self.written(harness)
        let fourth = try harness.start(partners[3], user, idempotencyKey: "fourth")
        #expect(fourth.status == 409, "\(fourth.text)")
        #expect(Self.error(fourth).code == "too_many_activities" && Self.error(fourth).field == "recipient")
        #expect(try Self.written(harness) == before, "a refusal writes nothing, its idempotency key included")
        #expect(try harness.budgetCount(partners[3], .activePerUser) == 1)
        #expect(try harness.budgetCount(partners[0], .activePerUser) == 0)

        // A mini-app with an active activity replaces it: 3 stay active.
        let replacement = try harness.activityID(harness.start(partners[0], user))
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activities WHERE user_id = $1 AND status = 'active'", [user.id]) == 3)
        #expect((try JSONParser.parse(try harness.get(partners[0], ids[0]).body))["status"]?.stringValue == "replaced")
        // An ended activity frees its place, and so does one past its TTL the sweep has not ended yet.
        try harness.expect(harness.end(partners[1], ids[1]), [200])
        try harness.expect(harness.start(partners[3], user, idempotencyKey: "fourth"), [201])
        #expect(Self.error(try harness.start(partners[1], user)).code == "too_many_activities")
        try harness.db.connection.query(
            "UPDATE live_activities SET expires_at = now() - interval '1 second' WHERE id = $1::uuid",
            [replacement])
        try harness.expect(harness.start(partners[1], user), [201])
    }

    @Test func theSeventhStartOfTheHourIs429WithRetryAfterUntilTheOldestLeavesTheWindow() throws {
        let harness = try LiveActivityHarness()
        let partners = try (0..<3).map { _ in try harness.partner() }
        let user = try harness.user(sessionWith: partners.map(\.miniApp))
        // Six starts, replacements included: two per mini-app, three active.
        for partner in partners + partners {
            try harness.expect(harness.start(partner, user), [201])
        }
        let before = try Self.written(harness)
        let seventh = try harness.start(partners[0], user)
        #expect(seventh.status == 429, "\(seventh.text)")
        #expect(Self.error(seventh).code == "live_activity_budget" && Self.error(seventh).field == "recipient")
        let wait = try #require(Self.retryAfter(seventh))
        #expect((3_540...3_600).contains(wait), "seconds until the first start leaves the hour: \(wait)")
        #expect(try Self.written(harness) == before)
        #expect(try harness.budgetCount(partners[0], .startsPerUser) == 1)

        // The oldest start 10 seconds from leaving the window: Retry-After says so; once out, a start is taken.
        try harness.db.connection.query(
            """
            UPDATE live_activities SET created_at = now() - interval '3590 seconds'
             WHERE id = (SELECT id FROM live_activities WHERE user_id = $1 ORDER BY created_at LIMIT 1)
            """, [user.id])
        let almost = try harness.start(partners[0], user)
        #expect(almost.status == 429 && (9...11).contains(Self.retryAfter(almost) ?? 0), "\(almost.headers)")
        try harness.db.connection.query(
            """
            UPDATE live_activities SET created_at = now() - interval '3601 seconds'
             WHERE id = (SELECT id FROM live_activities WHERE user_id = $1 ORDER BY created_at LIMIT 1)
            """, [user.id])
        try harness.expect(harness.start(partners[0], user), [201])
        #expect(try harness.budgetCount(partners[0], .startsPerUser) == 2)
    }

    @Test func theFourthStartOfOneMiniAppInTheHourIs429WhileAnotherMiniAppStarts() throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let other = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp, other.miniApp])
        for _ in 0..<3 {
            try harness.expect(harness.start(partner, user), [201])
        }
        let before = try Self.written(harness)
        let fourth = try harness.start(partner, user)
        #expect(fourth.status == 429 && Self.error(fourth).code == "live_activity_budget", "\(fourth.text)")
        #expect((3_540...3_600).contains(Self.retryAfter(fourth) ?? 0), "\(fourth.headers)")
        #expect(try Self.written(harness) == before)
        #expect(try harness.budgetCount(partner, .startsPerUserApp) == 1)
        #expect(try harness.budgetCount(partner, .startsPerUser) == 0)
        try harness.expect(harness.start(other, user), [201])
        // The refused start gave its rate-limit slot back, like every refusal.
        #expect(
            try harness.db.count(
                "SELECT coalesce(sum(count), 0)::int FROM rate_buckets WHERE partner_id = $1::uuid AND granularity = 'm'",
                [partner.id]) == 3)
    }

    /// Starts for one user raced from two intake processes never pass a limit: the count and the insert
    /// run under one lock on the user (herald_activity_start).
    @Test func concurrentStartsFromTwoIntakesNeverPassTheLimits() throws {
        let harness = try LiveActivityHarness()
        let second = try IntakeServer(configuration: harness.intake.configuration)
        let secondPort = try second.start()
        defer { second.stop() }
        let ports = [harness.port, secondPort]

        // Eight mini-apps race to start for one user: three win (the most active), five are 409.
        let partners = try (0..<8).map { _ in try harness.partner() }
        let user = try harness.user(sessionWith: partners.map(\.miniApp))
        let statuses = Self.race(partners.count) { n in
            (try? harness.start(partners[n], user, port: ports[n % 2]).status) ?? 0
        }
        #expect(statuses == [201, 201, 201, 409, 409, 409, 409, 409])
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activities WHERE user_id = $1 AND status = 'active'", [user.id]) == 3)

        // One mini-app races six starts for another user: three win (the hour's budget), one stays active.
        let partner = partners[0]
        let racer = try harness.user(sessionWith: [partner.miniApp])
        let results = Self.race(6) { n in (try? harness.start(partner, racer, port: ports[n % 2]).status) ?? 0 }
        #expect(results == [201, 201, 201, 429, 429, 429])
        #expect(try harness.db.count("SELECT count(*) FROM live_activities WHERE user_id = $1", [racer.id]) == 3)
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activities WHERE user_id = $1 AND status = 'active'", [racer.id]) == 1)
    }

    /// Runs `body` on `count` threads released together; returns the results sorted.
    static func race(_ count: Int, _ body: @escaping @Sendable (Int) -> Int) -> [Int] {
        let results = LockedBox<[Int]>([])
        let lock = NSLock()
        let group = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        for n in 0..<count {
            group.enter()
            Thread {
                gate.wait()
                let result = body(n)
                lock.withLock { results.set(results.get() + [result]) }
                group.leave()
            }.start()
        }
        for _ in 0..<count { gate.signal() }
        group.wait()
        return results.get().sorted()
    }

    @Test func theEleventhAlertedUpdateOfTheHourIsSentSilentAtPriority5() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(displayName: "Pull")
        let user = try harness.user(sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let id = try harness.activityID(harness.start(partner, user))
        try await harness.workers.waitUntil("the start") { try harness.outstanding(id) == 0 }
        let token = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(id, token), [200])

        for n in 1...11 {
            let answer = try harness.expect(
                harness.update(
                    partner, id, #"{"state":{"statusText":"step \#(n)"},"alert":{"title":"Step \#(n)","body":"b"}}"#),
                [200])
            let json = try JSONParser.parse(answer.body)
            #expect(json["alert"]?.stringValue == (n <= 10 ? "sent" : "dropped_budget"), "update \(n): \(answer.text)")
            #expect(json["status"]?.stringValue == "active" && json["state"]?["statusText"]?.stringValue == "step \(n)")
            try await harness.workers.waitUntil("update \(n) on the iPhone") {
                harness.apnsPushes(to: token).count == n
            }
        }
        let pushes = harness.apnsPushes(to: token)
        for (n, push) in pushes.prefix(10).enumerated() {
            #expect(push.header("apns-priority") == "10")
            #expect(LiveActivityHarness.aps(push)?["alert"]?["title"]?.stringValue == "[Pull] Step \(n + 1)")
        }
        let eleventh = try #require(pushes.last)
        #expect(eleventh.status == 200)
        #expect(eleventh.header("apns-priority") == "5")
        let aps = try #require(LiveActivityHarness.aps(eleventh))
        #expect(aps["alert"] == nil)
        #expect(aps["content-state"]?["statusText"]?.stringValue == "step 11")
        try await harness.workers.waitUntil("the outbox is empty") { try harness.outstanding(id) == 0 }
        // Android gets the same silent update: no alert, NORMAL priority.
        let fcmToken = try #require(user.fcmToken)
        let android = try #require(harness.fcmMessages(to: fcmToken).last?.payload?["message"])
        #expect(android["android"]?["priority"]?.stringValue == "NORMAL")
        #expect(android["data"]?["alertTitle"] == nil)
        #expect(android["data"]?["state"]?.stringValue?.contains("step 11") == true)
        #expect(try harness.budgetCount(partner, .alertedUpdates) == 1)

        // A silent update answers without `alert`; a replayed downgraded update answers as it did.
        let silent = try JSONParser.parse(
            try harness.expect(harness.update(partner, id, #"{"state":{"progress":0.9}}"#), [200]).body)
        #expect(silent["alert"] == nil && silent["state"]?["progress"]?.numberValue == 0.9)
        let body = #"{"state":{"statusText":"step 12"},"alert":{"title":"Step 12"}}"#
        let first = try harness.expect(harness.update(partner, id, body, idempotencyKey: "twelve"), [200])
        let replay = try harness.expect(harness.update(partner, id, body, idempotencyKey: "twelve"), [200])
        #expect(replay.headers["idempotent-replayed"] == "true" && replay.text == first.text)
        #expect((try JSONParser.parse(replay.body))["alert"]?.stringValue == "dropped_budget")
        #expect(try harness.budgetCount(partner, .alertedUpdates) == 2)
        #expect(
            try harness.db.count("SELECT cardinality(alerted_at) FROM live_activities WHERE id = $1::uuid", [id]) == 10)
    }
}

/// What priority each end goes at, and the relevance score, as the simulator received them.
@Suite(.requiresDatabase, .serialized)
struct LiveActivityPriorityTests {
    static func seconds(_ value: JSONValue?) -> Double? { value?.numberValue }

    /// An end keeps the partner's priority also when it waited for the iPhone's update token.
    @Test func aHeldEndGoesAtThePartnersPriorityWhenTheTokenComesLate() async throws {
        let harness = try LiveActivityHarness()
        let loud = try harness.partner(displayName: "Loud")
        let quiet = try harness.partner(displayName: "Quiet")
        let user = try harness.user(pixel: false, sessionWith: [loud.miniApp, quiet.miniApp])
        try harness.workers.startWorker()
        let alerted = try harness.activityID(harness.start(loud, user))
        let silent = try harness.activityID(harness.start(quiet, user))
        try await harness.workers.waitUntil("both starts") {
            try harness.outstanding(alerted) == 0 && harness.outstanding(silent) == 0
        }
        try harness.expect(harness.end(loud, alerted, #"{"alert":{"title":"Done","body":"All good"}}"#), [200])
        try harness.expect(harness.end(quiet, silent), [200])
        #expect(try harness.db.count("SELECT count(*) FROM live_activity_targets WHERE held_event = 'end'") == 2)

        let loudToken = LiveActivityHarness.hexToken(), quietToken = LiveActivityHarness.hexToken()
        #expect((try JSONParser.parse(try harness.putToken(alerted, loudToken).body))["result"]?.stringValue == "sent")
        #expect((try JSONParser.parse(try harness.putToken(silent, quietToken).body))["result"]?.stringValue == "sent")
        try await harness.workers.waitUntil("both ends") {
            harness.apnsPushes(to: loudToken).count == 1 && harness.apnsPushes(to: quietToken).count == 1
        }
        let loudEnd = harness.apnsPushes(to: loudToken)[0], quietEnd = harness.apnsPushes(to: quietToken)[0]
        #expect(loudEnd.header("apns-priority") == "10")
        #expect(LiveActivityHarness.aps(loudEnd)?["event"]?.stringValue == "end")
        #expect(LiveActivityHarness.aps(loudEnd)?["alert"]?["title"]?.stringValue == "[Loud] Done")
        #expect(quietEnd.header("apns-priority") == "5")
        #expect(LiveActivityHarness.aps(quietEnd)?["event"]?.stringValue == "end")
        #expect(LiveActivityHarness.aps(quietEnd)?["alert"] == nil)
    }

    /// A replaced activity's end leaves the screen at once: priority 10 (Android HIGH), dismissed now, no alert;
    /// it is paid from that activity's alerted budget.
    @Test func aReplacedActivitysEndGoesAtPriority10AndIsDismissedAtOnce() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let first = try harness.activityID(harness.start(partner, user))
        try await harness.workers.waitUntil("the first start") { try harness.outstanding(first) == 0 }
        let token = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(first, token), [200])
        let second = try harness.activityID(harness.start(partner, user))
        let replacedAt = Date().timeIntervalSince1970
        try await harness.workers.waitUntil("the replaced end and the new start") {
            try harness.outstanding(first) == 0 && harness.outstanding(second) == 0
        }
        let end = try #require(harness.apnsPushes(to: token).last)
        #expect(end.header("apns-priority") == "10")
        let aps = try #require(LiveActivityHarness.aps(end))
        #expect(aps["event"]?.stringValue == "end" && aps["alert"] == nil)
        let dismissal = try #require(Self.seconds(aps["dismissal-date"]))
        #expect(abs(dismissal - replacedAt) < 5, "dismissed at the replacement: \(dismissal) vs \(replacedAt)")
        let fcmToken = try #require(user.fcmToken)
        let androidEnd = try #require(
            harness.fcmMessages(to: fcmToken).first {
                LiveActivityHarness.data($0)?["activityId"]?.stringValue == first
                    && LiveActivityHarness.data($0)?["event"]?.stringValue == "end"
            }?.payload?["message"])
        #expect(androidEnd["android"]?["priority"]?.stringValue == "HIGH")
        let dismissAt = try #require(androidEnd["data"]?["dismissAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(abs(dismissAt.timeIntervalSince1970 - replacedAt) < 5)
        #expect(
            try harness.db.count("SELECT cardinality(alerted_at) FROM live_activities WHERE id = $1::uuid", [first])
                == 1)
        #expect(try harness.budgetCount(partner, .alertedUpdates) == 0)
    }

    @Test func aReplacedEndGoesAtPriority5OnceItsActivitysAlertedBudgetIsSpent() async throws {
        let harness = try LiveActivityHarness(configure: { $0.liveActivityBudgets.alertedUpdatesPerHour = 2 })
        let partner = try harness.partner()
        let user = try harness.user(pixel: false, sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let first = try harness.activityID(harness.start(partner, user))
        try await harness.workers.waitUntil("the first start") { try harness.outstanding(first) == 0 }
        let token = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(first, token), [200])
        for n in 1...2 {
            let answer = try harness.update(partner, first, #"{"alert":{"title":"Alert \#(n)"}}"#)
            #expect((try JSONParser.parse(answer.body))["alert"]?.stringValue == "sent")
        }
        try await harness.workers.waitUntil("the updates") { try harness.outstanding(first) == 0 }
        let pushes = harness.apnsPushes(to: token).count
        try harness.expect(harness.start(partner, user), [201])
        try await harness.workers.waitUntil("the replaced end") { harness.apnsPushes(to: token).count == pushes + 1 }
        let end = try #require(harness.apnsPushes(to: token).last)
        #expect(LiveActivityHarness.aps(end)?["event"]?.stringValue == "end")
        #expect(end.header("apns-priority") == "5")
        #expect(LiveActivityHarness.aps(end)?["dismissal-date"] != nil)
        #expect(try harness.budgetCount(partner, .alertedUpdates) == 1)
    }

    /// `relevanceScore` reaches iOS (`aps.relevance-score`) and Android (`relevanceScore`) on starts and updates;
    /// an update without one keeps the activity's.
    @Test func theRelevanceScoreReachesBothPlatforms() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let plain = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp, plain.miniApp])
        try harness.workers.startWorker()
        let id = try harness.activityID(harness.start(partner, user, relevanceScore: 80))
        let pushToStart = try #require(user.pushToStartToken), fcm = try #require(user.fcmToken)
        try await harness.workers.waitUntil("the start") { try harness.outstanding(id) == 0 }
        #expect(
            LiveActivityHarness.aps(try #require(harness.apnsPushes(to: pushToStart).last))?["relevance-score"]?
                .numberValue == 80)
        #expect(
            harness.fcmMessages(to: fcm).last.flatMap(LiveActivityHarness.data)?["relevanceScore"]?.stringValue == "80")

        let token = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(id, token), [200])
        try harness.expect(harness.update(partner, id, #"{"state":{"progress":0.4}}"#), [200])
        try await harness.workers.waitUntil("the update") { harness.apnsPushes(to: token).count == 1 }
        #expect(LiveActivityHarness.aps(harness.apnsPushes(to: token)[0])?["relevance-score"]?.numberValue == 80)
        try harness.expect(harness.update(partner, id, #"{"relevanceScore":20}"#), [200])
        try await harness.workers.waitUntil("the second update") { harness.apnsPushes(to: token).count == 2 }
        #expect(LiveActivityHarness.aps(harness.apnsPushes(to: token)[1])?["relevance-score"]?.numberValue == 20)
        try await harness.workers.waitUntil("Android's second update") {
            harness.fcmMessages(to: fcm).last.flatMap(LiveActivityHarness.data)?["relevanceScore"]?.stringValue == "20"
        }

        // Without one, the middle of the scale.
        let other = try harness.activityID(harness.start(plain, user))
        try await harness.workers.waitUntil("the other start") { try harness.outstanding(other) == 0 }
        #expect(
            LiveActivityHarness.aps(try #require(harness.apnsPushes(to: pushToStart).last))?["relevance-score"]?
                .numberValue == 50)

        // Out of range or not a whole number: 400 naming the field, nothing written.
        for bad in ["101", "-1", "7.5", #""high""#] {
            let response = try harness.request(
                "POST", "/api/partners/live-activities", token: plain.apiKey,
                json: """
                    {"recipient":{"email":"\(user.email)"},"template":"progress","attributes":{"title":"T"},
                     "state":\(LiveActivityHarness.progressState),"relevanceScore":\(bad)}
                    """)
            #expect(
                response.status == 400 && LiveActivityBudgetTests.error(response).code == "invalid_field",
                "\(bad): \(response.text)")
            #expect(LiveActivityBudgetTests.error(response).field == "relevanceScore")
            let update = try harness.update(partner, id, #"{"relevanceScore":\#(bad)}"#)
            #expect(update.status == 400 && LiveActivityBudgetTests.error(update).field == "relevanceScore")
        }
    }
}

/// HERALD_LA_* as the intake reads them: defaults, overrides, and configuration errors naming the variable.
@Suite struct LiveActivityBudgetSettingsTests {
    static let base = [
        "HERALD_DATABASE_URL": "postgres://x", "HERALD_ADMIN_TOKEN": "admin-token-0123456789",
        "HERALD_HOST_TOKEN": "host-token-0123456789",
        "HERALD_SIGNING_KEYS": "k1:" + Data(count: 32).base64EncodedString(),
    ]

    @Test func defaultsAndOverrides() throws {
        #expect(
            try IntakeConfiguration.fromEnvironment(Self.base).liveActivityBudgets
                == LiveActivityBudgets(
                    maxActivePerUser: 3, startsPerUserHour: 6, startsPerUserAppHour: 3, alertedUpdatesPerHour: 10))
        var custom = Self.base
        custom["HERALD_LA_MAX_ACTIVE_PER_USER"] = "5"
        custom["HERALD_LA_STARTS_PER_USER_HOUR"] = "20"
        custom["HERALD_LA_STARTS_PER_USER_APP_HOUR"] = "20"
        custom["HERALD_LA_ALERTED_UPDATES_PER_HOUR"] = "0"
        #expect(
            try IntakeConfiguration.fromEnvironment(custom).liveActivityBudgets
                == LiveActivityBudgets(
                    maxActivePerUser: 5, startsPerUserHour: 20, startsPerUserAppHour: 20, alertedUpdatesPerHour: 0))
    }

    @Test(arguments: [
        ("HERALD_LA_MAX_ACTIVE_PER_USER", "0"), ("HERALD_LA_MAX_ACTIVE_PER_USER", "three"),
        ("HERALD_LA_MAX_ACTIVE_PER_USER", "101"), ("HERALD_LA_STARTS_PER_USER_HOUR", "0"),
        ("HERALD_LA_STARTS_PER_USER_HOUR", "6.5"), ("HERALD_LA_STARTS_PER_USER_APP_HOUR", "-1"),
        ("HERALD_LA_STARTS_PER_USER_APP_HOUR", "7"), ("HERALD_LA_ALERTED_UPDATES_PER_HOUR", "-1"),
        ("HERALD_LA_ALERTED_UPDATES_PER_HOUR", "10001"),
    ])
    func invalidValuesAreConfigurationErrorsNamingTheVariable(variable: String, value: String) {
        var environment = Self.base
        environment[variable] = value
        let error = #expect(throws: ConfigurationError.self) { try IntakeConfiguration.fromEnvironment(environment) }
        #expect(error?.variable == variable, "\(variable)=\(value): \(String(describing: error))")
        #expect(error?.description.hasPrefix(variable + ":") == true)
    }

    @Test func aMiniAppsHourlyStartsMayNotExceedTheUsers() {
        var environment = Self.base
        environment["HERALD_LA_STARTS_PER_USER_HOUR"] = "4"
        environment["HERALD_LA_STARTS_PER_USER_APP_HOUR"] = "5"
        let error = #expect(throws: ConfigurationError.self) { try IntakeConfiguration.fromEnvironment(environment) }
        #expect(error?.variable == "HERALD_LA_STARTS_PER_USER_APP_HOUR")
        #expect(error?.problem.contains("HERALD_LA_STARTS_PER_USER_HOUR") == true)
    }
}
