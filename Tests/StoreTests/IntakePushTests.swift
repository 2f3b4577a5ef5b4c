import Foundation
import HeraldTestSupport
import Postgres
import Synchronization
import Testing

@testable import HeraldCore
@testable import Store

/// `herald_intake_push` (sql/functions/intake_push.sql) on whole batches, as the intake's writer sends
/// them: what one transaction decides for several pushes at once.
@Suite("Intake push batches", .serialized, .requiresDatabase)
struct IntakePushTests {
    static let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 2))

    /// A tenant, a partner profile (no partners row is needed by the function) and users:
    /// `ios` one iPhone each, `both` an iPhone and an Android phone each.
    struct Fixture {
        let partner: PartnerProfile
        let ios: [String]
        let both: [String]
        func email(_ user: String) -> String { "\(user)@example.com" }
    }

    static func fixture(perMinute: Int = 1_000, perDay: Int = 100_000) throws -> Fixture {
        try StoreDatabase.migrate(pool)
        let tenant = TestEnvironment.unique("batch")
        let partner = PartnerProfile(
            id: UUID(), miniAppID: TestEnvironment.unique("app"), displayName: "Batch",
            tenantID: tenant, iconPath: nil, rateLimitPerMinute: perMinute,
            rateLimitPerDay: perDay, sound: .systemDefault, allowTimeSensitive: false)
        let ios = (1...3).map { "\(tenant)-ios-\($0)" }
        let both = ["\(tenant)-both-1"]
        try pool.withTransaction { connection in
            _ = try connection.query("INSERT INTO tenants (id) VALUES ($1)", [tenant])
            for user in ios + both {
                _ = try connection.query("INSERT INTO users (id, tenant_id) VALUES ($1, $2)", [user, tenant])
                _ = try connection.query(
                    "INSERT INTO user_emails (tenant_id, email, user_id) VALUES ($1, $2, $3)",
                    [tenant, "\(user)@example.com", user])
                _ = try connection.query(
                    """
                    INSERT INTO devices (user_id, device_id, platform, environment, apns_token)
                    VALUES ($1, 'phone', 'ios', 'production', repeat('ab', 32))
                    """, [user])
            }
            for user in both {
                _ = try connection.query(
                    """
                    INSERT INTO devices (user_id, device_id, platform, environment, fcm_token)
                    VALUES ($1, 'pixel', 'android', 'production', 'fcm-token')
                    """, [user])
            }
        }
        return Fixture(partner: partner, ios: ios, both: both)
    }

    /// A push to `user` with `slots` deliveries rendered for `user` (slot k's payloads name it: `"slot":k`).
    static func push(
        _ fixture: Fixture, to user: String, key: String? = nil, bodyHash: String = "h",
        slots: Int = 1
    ) -> IntakePush {
        let now = Date()
        let request = OutboxWrite.newRequest(at: now)
        return IntakePush(
            write: OutboxWrite(
                requestID: request.id, createdAt: request.createdAt, partnerID: fixture.partner.id,
                miniAppID: fixture.partner.miniAppID, title: "t", body: "b", deepLink: nil, sendAt: nil,
                ttlSeconds: 60, interruptionLevel: .default, idempotencyKey: key,
                bodyHash: key == nil ? nil : bodyHash),
            partner: fixture.partner, now: now, emails: [fixture.email(user)],
            wallets: [],
            slots: (1...slots).map { slot in
                IntakePush.Slot(
                    id: UUIDv7.make(at: now), userID: user,
                    apns: Array(#"{"aps":{"alert":"a \"quoted\" \\ one"},"slot":\#(slot)}"#.utf8),
                    fcm: Array(#"{"android":{},"slot":\#(slot)}"#.utf8))
            })
    }

    func count(_ sql: String, _ partner: PartnerProfile, _ more: any PostgresEncodable...) throws -> Int {
        try Self.pool.withConnection { try $0.query(sql, [partner.id] + more).first!.int(0) }
    }

    @Test(
        "a batch that accepts deliveries due now notifies the channel it was given, inside its transaction, listing them; one that accepts nothing due does not"
    )
    func batchNotifiesItsChannel() throws {
        let fixture = try Self.fixture(perMinute: 2)
        // A channel of this test's own: the suites' intakes notify the shared ones.
        let channel = "herald_test_\(UInt32.random(in: 0...UInt32.max))"
        let listener = try PostgresConnection(url: TestEnvironment.databaseURL)
        try listener.execute("LISTEN \(channel)")
        let writer = IntakeWriter(pool: Self.pool, notify: { DeliveryWakeUp(channel: channel) })
        // The payload lists the deliveries made due, which the worker then leases by id.
        let first = Self.push(fixture, to: fixture.ios[0])
        guard case .accepted = try writer.write([first])[0] else {
            Issue.record("the push was not accepted")
            return
        }
        let heard = try listener.waitForNotifications(timeout: .seconds(5))
        #expect(heard.map(\.channel) == [channel])
        #expect(heard.first.flatMap { WakeUpMessage(decoding: $0.payload) } == .listed(first.slots.map(\.id)))
        // Scheduled for later: accepted, nothing due, nobody woken.
        var later = Self.push(fixture, to: fixture.ios[1])
        later.write.sendAt = later.now.addingTimeInterval(3_600)
        guard case .accepted = try writer.write([later])[0] else {
            Issue.record("the scheduled push was not accepted")
            return
        }
        // Refused by the window (2 a minute): nothing written, nobody woken.
        guard case .limited = try writer.write([Self.push(fixture, to: fixture.ios[2])])[0] else {
            Issue.record("the third push was not refused")
            return
        }
        #expect(try listener.waitForNotifications(timeout: .milliseconds(300)).isEmpty)
    }

    @Test(
        "a batch's notification lists the deliveries of its pushes due now, in the batch's order, the scheduled ones left out"
    )
    func batchNotificationListsDuePushesInOrder() throws {
        let fixture = try Self.fixture()
        let channel = "herald_test_\(UInt32.random(in: 0...UInt32.max))"
        let listener = try PostgresConnection(url: TestEnvironment.databaseURL)
        try listener.execute("LISTEN \(channel)")
        let writer = IntakeWriter(pool: Self.pool, notify: { DeliveryWakeUp(channel: channel) })
        let first = Self.push(fixture, to: fixture.ios[0])
        var later = Self.push(fixture, to: fixture.ios[1])
        later.write.sendAt = later.now.addingTimeInterval(3_600)
        // The user with an iPhone and a Pixel: two slots, both listed.
        let both = Self.push(fixture, to: fixture.both[0], slots: 2)
        let outcomes = try writer.write([first, later, both])
        #expect(outcomes.allSatisfy { if case .accepted = $0 { true } else { false } })
        let heard = try listener.waitForNotifications(timeout: .seconds(5))
        #expect(heard.count == 1)
        let listed = (first.slots + both.slots).map(\.id)
        #expect(heard.first.flatMap { WakeUpMessage(decoding: $0.payload) } == .listed(listed))
    }

    @Test("under load the writer's leader waits for a full batch, within its window; a lone push is written at once")
    func batchWindow() throws {
        let fixture = try Self.fixture()
        let writer = IntakeWriter(pool: Self.pool, maxBatch: 4, batchWindow: .seconds(60))
        let started = ContinuousClock.now
        guard case .accepted = try writer.submit(Self.push(fixture, to: fixture.ios[0])) else {
            Issue.record("the lone push was not accepted")
            return
        }
        #expect(ContinuousClock.now - started < .seconds(30), "a lone push waited for the window")
        #expect(writer.counts == (1, 1))

        // The partner's rate lock (functions/rate_reserve.sql's key) holds the next batch inside Postgres while two
        // more pushes queue behind it.
        let blocker = try PostgresConnection(url: TestEnvironment.databaseURL)
        _ = try blocker.query(
            "SELECT pg_advisory_lock(hashtextextended($1, 7301))",
            [fixture.partner.id.uuidString.lowercased()])
        let group = DispatchGroup()
        let accepted = Mutex(0)
        func submit(_ user: String) {
            group.enter()
            DispatchQueue.global().async {
                if case .accepted = try? writer.submit(Self.push(fixture, to: user)) { accepted.withLock { $0 += 1 } }
                group.leave()
            }
        }
        submit(fixture.ios[0])
        try waitFor("the batch held by the rate lock", timeout: .seconds(30)) {
            try Self.pool.withConnection {
                try $0.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").first!.int(0)
            } > 0
        }
        submit(fixture.ios[1])
        submit(fixture.ios[2])
        try waitFor("two pushes queued", timeout: .seconds(30)) { writer.waiting == 2 }
        _ = try blocker.query(
            "SELECT pg_advisory_unlock(hashtextextended($1, 7301))",
            [fixture.partner.id.uuidString.lowercased()])
        // The held push's batch commits alone; the lead goes to a push that was waiting, which holds the two
        // pushes for the window: the two submitted now join them, and the full batch goes at once.
        try waitFor("the held batch committed", timeout: .seconds(30)) { writer.counts.batches == 2 }
        #expect(writer.waiting == 2)
        submit(fixture.ios[0])
        submit(fixture.ios[1])
        #expect(group.wait(timeout: .now() + 30) == .success, "the full batch did not end the window")
        #expect(writer.counts == (3, 6))
        #expect(accepted.withLock { $0 } == 5)
    }

    @Test("one batch counts its pushes against the window exactly, in order, and writes only what it admits")
    func windowInOneBatch() throws {
        let fixture = try Self.fixture(perMinute: 3)
        let writer = IntakeWriter(pool: Self.pool)
        let outcomes = try writer.write((0..<5).map { Self.push(fixture, to: fixture.ios[$0 % 3]) })
        let kinds = outcomes.map { outcome -> String in
            switch outcome {
            case .accepted: "accepted"
            case .replay: "replay"
            case .limited: "limited"
            case .render: "render"
            }
        }
        #expect(kinds == ["accepted", "accepted", "accepted", "limited", "limited"])
        guard case .limited(let reservation) = outcomes[3] else { return }
        // The three counted in this same batch fill the minute: Retry-After has its oldest second.
        #expect(reservation.minuteCount == 3)
        #expect(reservation.minuteOldest == reservation.nowSeconds)
        #expect(
            try count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1 AND granularity = 's'",
                fixture.partner) == 3)
        #expect(
            try count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1 AND granularity = 'm'",
                fixture.partner) == 3)
        #expect(try count("SELECT count(*) FROM push_requests WHERE partner_id = $1", fixture.partner) == 3)
        #expect(try count("SELECT count(*) FROM deliveries WHERE partner_id = $1", fixture.partner) == 3)
        // The payload is stored exactly as rendered (quotes and backslashes survive the array literal).
        #expect(
            try count(
                """
                SELECT count(*) FROM deliveries WHERE partner_id = $1 AND service = 'apns'
                   AND payload = '{"aps":{"alert":"a \\"quoted\\" \\\\ one"},"slot":1}'
                """, fixture.partner) == 3)
        // The next batch sees the committed counts.
        let next = try writer.write([Self.push(fixture, to: fixture.ios[0])])
        guard case .limited(let later) = next[0] else { Issue.record("expected limited, got \(next[0])"); return }
        #expect(later.minuteCount == 3)
    }

    @Test(
        "a request is found by its id's time: to the microsecond, and within the millisecond for ids with random fraction bits"
    )
    func foundByItsIDsTime() throws {
        let fixture = try Self.fixture()
        let store = PushStore(pool: Self.pool)
        let push = Self.push(fixture, to: fixture.ios[0])
        // An id as sql/functions/uuid_v7.sql's herald_uuid_v7 makes them (or this intake made them before): the bits
        // after the version are random, and created_at is the id's whole millisecond.
        var bytes = UUIDv7.make(at: Date()).uuid
        bytes.6 = 0x7F
        bytes.7 = 0xFF
        let older = UUID(uuid: bytes)
        let olderCreated = Date(timeIntervalSince1970: Double(UUIDv7.millisecond(of: older)!) / 1000)
        var legacy = Self.push(fixture, to: fixture.ios[1])
        legacy.write.requestID = older
        legacy.write.createdAt = olderCreated
        let outcomes = try IntakeWriter(pool: Self.pool).write([push, legacy])
        #expect(outcomes.count == 2)

        let found = try #require(
            try store.find(
                requestID: push.write.requestID,
                createdAt: UUIDv7.timestamp(of: push.write.requestID)!))
        #expect(found.createdAt == push.write.createdAt)
        let legacyFound = try #require(try store.find(requestID: older, createdAt: UUIDv7.timestamp(of: older)!))
        #expect(legacyFound.createdAt == olderCreated)
        // An instant of exactly a millisecond (fraction 0) is searched in that millisecond, not the one before.
        #expect(try store.find(requestID: older, createdAt: olderCreated) != nil)
        // The millisecond after is another partition key: not found.
        #expect(try store.find(requestID: older, createdAt: olderCreated.addingTimeInterval(0.001)) == nil)
    }

    @Test("a key repeated in one batch replays the first push's answer and counts once")
    func keyTwiceInOneBatch() throws {
        let fixture = try Self.fixture()
        let writer = IntakeWriter(pool: Self.pool)
        let first = Self.push(fixture, to: fixture.ios[0], key: "twice", bodyHash: "hash-1")
        let retry = Self.push(fixture, to: fixture.ios[0], key: "twice", bodyHash: "hash-1")
        let outcomes = try writer.write([first, retry])
        guard case .accepted(let response, let deliveries) = outcomes[0],
            case .replay(let stored) = outcomes[1]
        else { Issue.record("outcomes: \(outcomes)"); return }
        #expect(deliveries == 1)
        #expect(response.contains(first.write.requestID.uuidString.lowercased()))
        #expect(stored.response == response && stored.bodyHash == "hash-1" && stored.status == 202)
        #expect(try count("SELECT count(*) FROM push_requests WHERE partner_id = $1", fixture.partner) == 1)
        #expect(
            try count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1 AND granularity = 's'",
                fixture.partner) == 1)
        // A later batch replays the stored row, the same bytes.
        let later = try writer.write([Self.push(fixture, to: fixture.ios[1], key: "twice", bodyHash: "hash-2")])
        guard case .replay(let again) = later[0] else { Issue.record("expected a replay, got \(later[0])"); return }
        #expect(again.response == response && again.bodyHash == "hash-1")
    }

    @Test(
        "one batch resolves each push in its own partner's tenant: an address of another push's tenant is missing, each push's missing identifiers are its own, in order"
    )
    func eachPushResolvesInItsTenant() throws {
        let first = try Self.fixture(), second = try Self.fixture()
        let writer = IntakeWriter(pool: Self.pool)
        let wallet = "0x" + String(repeating: "0", count: 39) + "7"
        var a = Self.push(first, to: first.ios[0])
        a.emails = ["nobody-a@example.com", first.email(first.ios[0]), second.email(second.ios[0])]
        var b = Self.push(second, to: second.ios[0])
        b.emails = [first.email(first.ios[1]), second.email(second.ios[0])]
        var c = Self.push(first, to: first.ios[2])
        c.emails = []
        c.wallets = [wallet]
        let outcomes = try writer.write([a, b, c])
        let answers = try outcomes.map { outcome -> JSONValue in
            guard case .accepted(let response, _) = outcome else { throw PostgresError(code: .decodingFailed) }
            return try JSONParser.parse(Array(response.utf8))
        }
        #expect(answers[0]["recipients"] == .number(1) && answers[0]["deliveries"] == .number(1))
        #expect(
            answers[0]["missing"]?["emails"]
                == .array([
                    .string("nobody-a@example.com"),
                    .string(second.email(second.ios[0])),
                ]))
        #expect(answers[1]["recipients"] == .number(1) && answers[1]["deliveries"] == .number(1))
        #expect(answers[1]["missing"]?["emails"] == .array([.string(first.email(first.ios[1]))]))
        #expect(answers[2]["recipients"] == .number(0) && answers[2]["status"] == .string("completed"))
        #expect(answers[2]["missing"]?["wallets"] == .array([.string(wallet)]))
        let users = try Self.pool.withConnection { connection in
            try connection.query(
                "SELECT request_id, user_id FROM deliveries WHERE request_id = ANY($1::uuid[])",
                [[a.write.requestID, b.write.requestID, c.write.requestID]]
            ).rows
                .map { (try $0.uuid(0), try $0.string(1)) }
        }
        #expect(users.count == 2)
        #expect(
            users.contains { $0 == (a.write.requestID, first.ios[0]) }
                && users.contains { $0 == (b.write.requestID, second.ios[0]) })
    }

    @Test("a push to more devices than its slots comes back to be rendered, counting and writing nothing")
    func severalDevices() throws {
        let fixture = try Self.fixture()
        let writer = IntakeWriter(pool: Self.pool)
        let outcomes = try writer.write([
            Self.push(fixture, to: fixture.both[0], key: "many"),
            Self.push(fixture, to: fixture.ios[0]),
        ])
        guard case .render = outcomes[0], case .accepted = outcomes[1] else { Issue.record("\(outcomes)"); return }
        #expect(try count("SELECT count(*) FROM push_requests WHERE partner_id = $1", fixture.partner) == 1)
        #expect(try count("SELECT count(*) FROM idempotency_keys WHERE partner_id = $1", fixture.partner) == 0)
        #expect(
            try count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1 AND granularity = 's'",
                fixture.partner) == 1)
    }

    @Test("a push whose devices fit its slots is written whole: slot k to the k-th device, with its service's payload")
    func devicesInSlots() throws {
        let fixture = try Self.fixture()
        let writer = IntakeWriter(pool: Self.pool)
        let two = Self.push(fixture, to: fixture.both[0], slots: 2)
        let spare = Self.push(fixture, to: fixture.ios[0], slots: 2)
        let outcomes = try writer.write([two, spare])
        guard case .accepted(let response, let deliveries) = outcomes[0], case .accepted(_, let single) = outcomes[1]
        else { Issue.record("\(outcomes)"); return }
        #expect(deliveries == 2 && single == 1)
        #expect(response.contains(#""deliveries":2"#))
        // (user, device) order: "phone" (APNs) takes slot 1, "pixel" (FCM) slot 2; a spare slot writes nothing.
        let rows = try Self.pool.withConnection { connection in
            try connection.query(
                """
                SELECT id, device_id, service, payload FROM deliveries WHERE request_id = $1 ORDER BY device_id
                """, [two.write.requestID]
            ).rows
                .map { (try $0.uuid(0), try $0.string(1), try $0.string(2), try $0.string(3)) }
        }
        #expect(rows.count == 2)
        #expect(rows.first?.0 == two.slots[0].id && rows.first?.1 == "phone" && rows.first?.2 == "apns")
        #expect(rows.first?.3 == String(decoding: two.slots[0].apns, as: UTF8.self))
        #expect(rows.last?.0 == two.slots[1].id && rows.last?.1 == "pixel" && rows.last?.2 == "fcm")
        #expect(rows.last?.3 == String(decoding: two.slots[1].fcm, as: UTF8.self))
        #expect(try count("SELECT count(*) FROM deliveries WHERE partner_id = $1", fixture.partner) == 3)
        #expect(
            try count(
                "SELECT count(*) FROM deliveries WHERE partner_id = $1 AND id = $2", fixture.partner,
                spare.slots[1].id) == 0)
        #expect(
            try count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1 AND granularity = 's'",
                fixture.partner) == 2)
        #expect(
            try count(
                "SELECT deliveries FROM push_requests WHERE partner_id = $1 AND id = $2", fixture.partner,
                two.write.requestID) == 2)
    }

    @Test("a device takes only its own user's slot: slots for another send the push back with its resolution")
    func slotsOfAnotherUser() throws {
        let fixture = try Self.fixture()
        let writer = IntakeWriter(pool: Self.pool)
        let wallet = "0x" + String(repeating: "0", count: 39) + "5"
        // Addressed to ios[0] by e-mail, but its slots were signed for ios[1] (a stale guess); an unknown wallet too.
        var stale = Self.push(fixture, to: fixture.ios[1], slots: 2)
        stale.emails = [fixture.email(fixture.ios[0])]
        stale.wallets = [wallet]
        let outcomes = try writer.write([stale, Self.push(fixture, to: fixture.ios[2])])
        guard case .render(let resolved) = outcomes[0], case .accepted = outcomes[1] else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(
            resolved == [
                ResolvedIdentifier(
                    kind: .email, identifier: fixture.email(fixture.ios[0]),
                    userID: fixture.ios[0])
            ])
        #expect(
            try count(
                "SELECT count(*) FROM push_requests WHERE partner_id = $1 AND id = $2", fixture.partner,
                stale.write.requestID) == 0)
        #expect(
            try count(
                """
                SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1 AND granularity = 's'
                """, fixture.partner) == 1)
    }

    @Test(
        "a localized push's slot goes only to a user whose stored locale is the slot's: else 'render' with the locale"
    )
    func slotsOfAnotherLocale() throws {
        let fixture = try Self.fixture()
        let user = fixture.ios[0]
        try Self.pool.withConnection { _ = try $0.query("UPDATE users SET locale = 'fr' WHERE id = $1", [user]) }
        let writer = IntakeWriter(pool: Self.pool)
        // Rendered for `de` (the cache's guess), while the host has set `fr` since: nothing written, sent back with
        // the stored locale; a plain push in the same batch is written.
        var stale = Self.push(fixture, to: user, slots: 2)
        stale.slots = stale.slots.map {
            var slot = $0; slot.locale = "de"; return slot
        }
        let plain = Self.push(fixture, to: fixture.ios[1])
        let outcomes = try writer.write([stale, plain])
        guard case .render(let resolved) = outcomes[0], case .accepted = outcomes[1] else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(
            resolved == [
                ResolvedIdentifier(kind: .email, identifier: fixture.email(user), userID: user, locale: "fr")
            ])
        #expect(
            try count(
                "SELECT count(*) FROM deliveries WHERE partner_id = $1 AND request_id = $2", fixture.partner,
                stale.write.requestID) == 0)
        // Rendered for the stored locale, and for a user without one (''): written.
        var fresh = Self.push(fixture, to: user, slots: 2)
        fresh.slots = fresh.slots.map {
            var slot = $0; slot.locale = "fr"; return slot
        }
        var none = Self.push(fixture, to: fixture.ios[2])
        none.slots = none.slots.map {
            var slot = $0; slot.locale = ""; return slot
        }
        let written = try writer.write([fresh, none])
        guard case .accepted(_, 1) = written[0], case .accepted(_, 1) = written[1] else {
            Issue.record("\(written)")
            return
        }
    }

    @Test("a push to two users with slots for each: each device takes a slot of its own user")
    func slotsOfTwoUsers() throws {
        let fixture = try Self.fixture()
        let (single, pair) = (fixture.ios[0], fixture.both[0])
        var push = Self.push(fixture, to: single, slots: 1)
        push.emails = [fixture.email(pair), fixture.email(single)]
        // The second user's two slots after the first user's one.
        push.slots += Self.push(fixture, to: pair, slots: 2).slots
        let outcomes = try IntakeWriter(pool: Self.pool).write([push])
        guard case .accepted(_, let deliveries) = outcomes[0] else { Issue.record("\(outcomes)"); return }
        #expect(deliveries == 3)
        let rows = try Self.pool.withConnection { connection in
            try connection.query(
                "SELECT id, user_id, device_id FROM deliveries WHERE request_id = $1",
                [push.write.requestID]
            ).rows
                .map { (try $0.uuid(0), try $0.string(1), try $0.string(2)) }
        }
        #expect(rows.count == 3)
        for (id, user, device) in rows {
            let slot = try #require(push.slots.first { $0.id == id }, "\(device) took no slot")
            #expect(slot.userID == user, "\(device)")
        }
    }

    @Test("a key another transaction stored while the batch ran is a replay of that answer, not counted")
    func keyStoredByAnother() throws {
        let fixture = try Self.fixture()
        let push = Self.push(fixture, to: fixture.ios[0], key: "raced", bodyHash: "mine")
        // Stored after the batch's up-front lookup would have run: simulate by holding the key in an
        // open transaction that commits while the batch waits on the key's unique index.
        let holder = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 1))
        defer { holder.close() }
        let started = DispatchSemaphore(value: 0)
        let committed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? holder.withTransaction { connection in
                _ = try connection.query(
                    """
                    INSERT INTO idempotency_keys (partner_id, key, body_hash, request_id, response, created_at, status)
                    VALUES ($1, 'raced', 'theirs', gen_random_uuid(), '{"theirs":true}', now(), 201)
                    """, [fixture.partner.id])
                started.signal()
                // Until the batch reached the key's insert and waits on this transaction.
                let holderPID = try connection.query("SELECT pg_backend_pid()").first!.int(0)
                let watcher = try PostgresConnection(url: TestEnvironment.databaseURL)
                try waitFor("the batch waiting on the key") {
                    try watcher.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
                        [holderPID]
                    ).first!.int(0) > 0
                }
            }
            committed.signal()
        }
        started.wait()
        let outcomes = try IntakeWriter(pool: Self.pool).write([push])
        committed.wait()
        guard case .replay(let stored) = outcomes[0] else {
            Issue.record("expected a replay, got \(outcomes[0])"); return
        }
        #expect(stored.bodyHash == "theirs" && stored.response == #"{"theirs":true}"# && stored.status == 201)
        #expect(try count("SELECT count(*) FROM push_requests WHERE partner_id = $1", fixture.partner) == 0)
        #expect(
            try count("SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1", fixture.partner) == 0)
    }

    @Test("the writer answers every submitted push, and pushes submitted together share batches")
    func writerThread() throws {
        let fixture = try Self.fixture()
        let writer = IntakeWriter(pool: Self.pool, maxBatch: 4)
        let results = runInParallel(12) { index in
            try? writer.submit(Self.push(fixture, to: fixture.ios[index % 3], key: "w-\(index)"))
        }
        writer.stop()
        #expect(results.allSatisfy { if case .accepted = $0 { true } else { false } })
        let counts = writer.counts
        #expect(counts.pushes == 12)
        #expect(counts.batches >= 3 && counts.batches <= 12)
        #expect(try count("SELECT count(*) FROM push_requests WHERE partner_id = $1", fixture.partner) == 12)
        // After stop, a push is refused rather than left waiting.
        #expect(throws: (any Error).self) { try writer.submit(Self.push(fixture, to: fixture.ios[0])) }
    }
}
