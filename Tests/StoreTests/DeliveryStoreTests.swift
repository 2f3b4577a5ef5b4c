import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The worker's queries against real Postgres: claim, fairness, verdicts, completion, release,
/// rescue and the queue snapshot.
@Suite(.requiresDatabase) struct DeliveryStoreTests {
    let store = DeliveryStore()
    static let apnsToken = String(repeating: "ab", count: 32)

    @Test func claimLeasesDueRowsOnlyAndCountsTheAttempt() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 2)
        let due = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns,
            availableAt: Date().addingTimeInterval(3600))

        let claimed = try store.claim(
            on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns, .fcm])
        #expect(claimed.map(\.id) == [due])
        #expect(claimed.first?.attempts == 1)
        #expect(claimed.first?.token == Self.apnsToken)
        #expect(claimed.first?.verdict == .send)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE state = 'leased' AND leased_by = 'w1'") == 1)
        #expect(
            try store.claim(on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns]).isEmpty)
    }

    /// The claim's row decoded from libpq's bytes: every column, NULLs, non-ASCII text.
    @Test func theClaimDecodesEveryColumn() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken, bundleID: "com.exämple.app")
        try db.user("u2", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 3)
        let payload = #"{"aps":{"alert":{"title":"Grüße ☃","body":"日本語 🚀 \"q\""}},"k":""}"#
        let expires = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3600).rounded() + 0.123456)
        let withAll = try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns, lane: 1,
            expiresAt: expires, payload: payload)
        let plain = try db.delivery(request: request, partner: partner.id, user: "u2", service: .apns)
        // No Android device: the claim says so, and the token is NULL.
        let noDevice = try db.delivery(request: request, partner: partner.id, user: "u2", service: .fcm)
        var available: [UUID: Date] = [:]
        for row in try db.connection.query("SELECT id, available_at FROM deliveries").rows {
            available[try row.uuid(0)] = try row.date(1)
        }

        let claimed = try store.claim(
            on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30,
            services: [.apns, .fcm])
        let byID = Dictionary(uniqueKeysWithValues: claimed.map { ($0.id, $0) })
        #expect(Set(byID.keys) == [withAll, plain, noDevice])
        let all = try #require(byID[withAll])
        #expect(all.service == .apns && all.environment == "sandbox")
        #expect(all.payload == payload && all.payloadBytes == Array(payload.utf8))
        #expect(all.attempts == 1 && all.lane == 1 && all.partnerID == partner.id)
        #expect(abs(try #require(all.expiresAt).timeIntervalSince(expires)) < 0.000_001)
        #expect(all.token == Self.apnsToken && all.verdict == .send)
        #expect(all.availableAt == available[withAll])
        #expect(all.bundleID == "com.exämple.app")
        #expect(all.activityEvent == nil && all.priority == nil)
        let bare = try #require(byID[plain])
        #expect(bare.expiresAt == nil && bare.bundleID == nil && bare.lane == 0 && bare.verdict == .send)
        #expect(bare.availableAt == available[plain])
        let missing = try #require(byID[noDevice])
        #expect(missing.service == .fcm && missing.token == nil && missing.verdict == .deviceRemoved)
        #expect(missing.environment == "production")
    }

    /// The rows an intake's notification listed, leased by primary key: only those still pending, due and of the
    /// requested services, the earliest first up to the limit; a row leased meanwhile by another worker is left to it.
    @Test func aListedClaimLeasesOnlyTheListedRowsStillDue() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken, fcmToken: "fcm-token-1")
        let request = try db.request(partner: partner.id, deliveries: 7)
        let first = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let second = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let scheduled = try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns,
            availableAt: Date().addingTimeInterval(3600))
        let android = try db.delivery(request: request, partner: partner.id, user: "u1", service: .fcm)
        let taken = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let unlisted = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        #expect(
            try store.claim(
                on: db.connection, worker: "w2", limit: 10, leaseSeconds: 30, services: [.apns],
                listed: [taken]
            ).map(\.id) == [taken])

        let listed = [second, scheduled, android, taken, first]
        let one = try store.claim(
            on: db.connection, worker: "w1", limit: 1, leaseSeconds: 30, services: [.apns],
            listed: listed)
        #expect(one.map(\.id) == [first])
        #expect(one.first?.verdict == .send && one.first?.token == Self.apnsToken && one.first?.attempts == 1)
        let rest = try store.claim(
            on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns],
            listed: listed)
        #expect(rest.map(\.id) == [second])
        let states = try db.connection.query("SELECT id, state, leased_by FROM deliveries").rows.map {
            (try $0.uuid(0), "\(try $0.string(1)) \($0.optionalString(2) ?? "-")")
        }
        #expect(
            Dictionary(uniqueKeysWithValues: states) == [
                first: "leased w1", second: "leased w1", scheduled: "pending -", android: "pending -",
                taken: "leased w2", unlisted: "pending -",
            ])
    }

    /// The listed claim is a statement of its own (Queries.Deliveries.claimListed): for the same rows it returns what the
    /// walk of herald_claim_deliveries returns, every column and every verdict a row without an activity can get.
    @Test func aListedClaimReturnsWhatTheWalkReturns() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken, fcmToken: "fcm-token-1", bundleID: "com.example.app")
        for user in ["dead", "deadfcm", "optedout", "gone"] {
            try db.user(user, apnsToken: Self.apnsToken, fcmToken: "fcm-token-\(user)")
        }
        let request = try db.request(partner: partner.id, deliveries: 10)
        var ids = [
            try db.delivery(
                request: request, partner: partner.id, user: "u1", service: .apns, lane: 1,
                expiresAt: Date().addingTimeInterval(3600)),
            try db.delivery(request: request, partner: partner.id, user: "u1", service: .fcm),
            try db.delivery(request: request, partner: partner.id, user: "nobody", service: .fcm),
            try db.delivery(
                request: request, partner: partner.id, user: "u1", service: .apns,
                expiresAt: Date().addingTimeInterval(-1)),
        ]
        for user in ["dead", "deadfcm", "optedout", "gone"] {
            ids.append(try db.delivery(request: request, partner: partner.id, user: user, service: .apns))
            ids.append(try db.delivery(request: request, partner: partner.id, user: user, service: .fcm))
        }
        try db.connection.query("UPDATE devices SET apns_token_invalidated_at = now() WHERE user_id = 'dead'")
        try db.connection.query("UPDATE devices SET fcm_token_invalidated_at = now() WHERE user_id = 'deadfcm'")
        try db.connection.query("UPDATE devices SET apns_token = NULL WHERE user_id = 'deadfcm'")
        try db.connection.query(
            "INSERT INTO opt_outs (user_id, mini_app_id) VALUES ('optedout', $1)", [partner.miniApp])
        try db.connection.query("DELETE FROM devices WHERE user_id = 'gone'")

        func described(_ claimed: [ClaimedDelivery]) -> [UUID: String] {
            Dictionary(
                uniqueKeysWithValues: claimed.map { row in
                    (
                        row.id,
                        [
                            row.service.rawValue, row.environment, row.payload, "\(row.attempts)",
                            "\(row.expiresAt as Any)",
                            row.token ?? "-", row.verdict.rawValue, "\(row.lane)", row.partnerID.uuidString,
                            "\(row.availableAt)", row.bundleID ?? "-", "\(row.activityEvent as Any)",
                            "\(row.priority as Any)",
                            "\(row.groupID as Any)", "\(row.member as Any)",
                        ].joined(separator: " | ")
                    )
                })
        }
        try db.connection.execute("BEGIN")
        let listed = described(
            try store.claim(
                on: db.connection, worker: "w1", limit: 100, leaseSeconds: 30,
                services: [.apns, .fcm], listed: ids))
        try db.connection.execute("ROLLBACK")
        let walked = described(
            try store.claim(
                on: db.connection, worker: "w1", limit: 100, leaseSeconds: 30,
                services: [.apns, .fcm]))
        #expect(Set(walked.keys) == Set(ids))
        #expect(listed == walked)
        #expect(
            Set(walked.values.map { $0.components(separatedBy: " | ")[6] })
                == ["send", "device_removed", "expired", "token_invalid", "suppressed"])
    }

    @Test func aNotificationListingRowsWakesEveryWorkerOnTheSharedChannel() {
        let ids = [UUID(), UUID()]
        // On the shared channel, a list wakes every worker (no worker was listed when the intake wrote it).
        let listing = PostgresNotification(channel: DeliveryStore.notificationChannel, payload: ids[0].uuidString)
        #expect(DeliveryStore.wakes(listing, listenerPID: 42))
        #expect(
            !DeliveryStore.wakes(
                PostgresNotification(channel: DeliveryStore.notificationChannel, payload: "41"),
                listenerPID: 42))
    }

    @Test func claimTakesOnlyTheRequestedServices() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken, fcmToken: "fcm-token-1")
        let request = try db.request(partner: partner.id, deliveries: 2)
        try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let fcm = try db.delivery(request: request, partner: partner.id, user: "u1", service: .fcm)
        let claimed = try store.claim(on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.fcm])
        #expect(claimed.map(\.id) == [fcm])
        #expect(claimed.first?.token == "fcm-token-1")
    }

    @Test func concurrentClaimsTakeDisjointRows() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 2000)
        try db.deliveries(count: 2000, request: request, partner: partner.id, user: "u1")
        let url = db.url
        let batches = runInParallel(4) { index -> [UUID] in
            let connection = try! PostgresConnection(url: url)
            var ids: [UUID] = []
            while true {
                let claimed = try! DeliveryStore().claim(
                    on: connection, worker: "w\(index)", limit: 50,
                    leaseSeconds: 30, services: [.apns])
                if claimed.isEmpty { return ids }
                ids += claimed.map(\.id)
            }
        }
        let all = batches.flatMap { $0 }
        #expect(all.count == 2000)
        #expect(Set(all).count == 2000)
    }

    @Test func realtimeLaneIsClaimedBeforeBulk() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 60)
        try db.deliveries(count: 50, request: request, partner: partner.id, user: "u1", lane: 1)
        try db.deliveries(count: 10, request: request, partner: partner.id, user: "u1", lane: 0)
        let claimed = try store.claim(on: db.connection, worker: "w1", limit: 20, leaseSeconds: 30, services: [.apns])
        #expect(claimed.count == 20)
        let lanes = try db.connection.query(
            "SELECT lane, count(*) FROM deliveries WHERE state = 'leased' GROUP BY lane ORDER BY lane")
        #expect(try lanes.rows.map { [try $0.int(0), try $0.int(1)] } == [[0, 10], [1, 10]])
    }

    @Test func oneFloodingPartnerDoesNotStarveAnother() throws {
        let db = try QueueDatabase()
        let flooder = try db.partner()
        let quiet = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let flood = try db.request(partner: flooder.id, deliveries: 5000)
        try db.deliveries(count: 5000, request: flood, partner: flooder.id, user: "u1")
        // The quiet partner's rows are newer than the whole flood.
        let small = try db.request(partner: quiet.id, deliveries: 3)
        var quietIDs: Set<UUID> = []
        for _ in 0..<3 {
            quietIDs.insert(try db.delivery(request: small, partner: quiet.id, user: "u1", service: .apns))
        }
        let claimed = try store.claim(on: db.connection, worker: "w1", limit: 100, leaseSeconds: 30, services: [.apns])
        #expect(claimed.count == 100)
        #expect(quietIDs.isSubset(of: Set(claimed.map(\.id))))
    }

    @Test func verdictsExplainRowsThatMustNotBeSent() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("expired", apnsToken: Self.apnsToken)
        try db.user("dead", apnsToken: Self.apnsToken)
        try db.user("optedout", apnsToken: Self.apnsToken)
        try db.user("gone", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 4)
        let expired = try db.delivery(
            request: request, partner: partner.id, user: "expired", service: .apns,
            expiresAt: Date().addingTimeInterval(-1))
        let dead = try db.delivery(request: request, partner: partner.id, user: "dead", service: .apns)
        let optedOut = try db.delivery(request: request, partner: partner.id, user: "optedout", service: .apns)
        let gone = try db.delivery(request: request, partner: partner.id, user: "gone", service: .apns)
        try db.connection.query("UPDATE devices SET apns_token_invalidated_at = now() WHERE user_id = 'dead'")
        try db.connection.query(
            "INSERT INTO opt_outs (user_id, mini_app_id) VALUES ('optedout', $1)", [partner.miniApp])
        try db.connection.query("DELETE FROM devices WHERE user_id = 'gone'")

        let claimed = try store.claim(on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns])
        let verdicts = Dictionary(uniqueKeysWithValues: claimed.map { ($0.id, $0.verdict) })
        #expect(verdicts == [expired: .expired, dead: .tokenInvalid, optedOut: .suppressed, gone: .deviceRemoved])
    }

    @Test func completionMovesRowsToHistoryAndRollsUpTheCounts() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        try db.user("u2", apnsToken: "cd" + String(repeating: "ab", count: 31))
        let request = try db.request(partner: partner.id, deliveries: 4)
        let sent = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let failed = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let dead = try db.delivery(request: request, partner: partner.id, user: "u2", service: .apns)
        let retried = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let claimed = try store.claim(on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns])
        #expect(claimed.count == 4)
        let retryAt = Date().addingTimeInterval(120)
        let u2Token = claimed.first { $0.id == dead }?.token
        let result = try store.complete(
            on: db.connection, worker: "w1",
            [
                CompletedDelivery(id: sent, outcome: .sent, token: Self.apnsToken),
                CompletedDelivery(id: failed, outcome: .failed(reason: "BadTopic"), token: Self.apnsToken),
                CompletedDelivery(id: dead, outcome: .tokenInvalid(reason: "Unregistered"), token: u2Token),
                CompletedDelivery(
                    id: retried, outcome: .retry(at: retryAt, reason: "TooManyRequests"), token: Self.apnsToken),
            ])
        #expect(result.finished == 3)
        #expect(result.retried == 1)
        #expect(try db.outcome(of: sent)?.outcome == "sent")
        #expect(try db.outcome(of: failed)?.error == "BadTopic")
        #expect(try db.outcome(of: dead)?.outcome == "token_invalid")
        #expect(try db.counts(of: request) == (sent: 1, failed: 2))
        // The dead token is invalidated; the other user's is not.
        #expect(try db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 1)
        #expect(
            try db.count("SELECT count(*) FROM devices WHERE user_id = 'u2' AND apns_token_invalidated_at IS NOT NULL")
                == 1)
        let row = try db.connection.query(
            """
            SELECT state, last_error, abs(extract(epoch FROM available_at - $2::timestamptz)) < 0.01
              FROM deliveries WHERE id = $1
            """, [retried, retryAt]
        ).first!
        #expect(try row.string(0) == "pending")
        #expect(row.optionalString(1) == "TooManyRequests")
        #expect(try row.bool(2))
    }

    @Test func anAllSentBatchFinishesEveryRowAsSentWithoutErrorsOrPayloads() throws {
        // herald_complete_deliveries' common case (sql/functions/complete_deliveries.sql) skips the outcome map.
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 3)
        let ids = try (0..<3).map { _ in
            try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        }
        _ = try store.claim(on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns])
        // Not the holder: nothing happens, as in the mixed case.
        #expect(
            try store.complete(
                on: db.connection, worker: "w2",
                ids.map { CompletedDelivery(id: $0, outcome: .sent, token: Self.apnsToken) }
            ).finished == 0)
        let result = try store.complete(
            on: db.connection, worker: "w1",
            ids.map { CompletedDelivery(id: $0, outcome: .sent, token: Self.apnsToken) })
        #expect(result == (finished: 3, retried: 0))
        let history = try db.connection.query(
            """
            SELECT count(*) FILTER (WHERE outcome = 'sent' AND last_error IS NULL AND payload IS NULL AND attempts = 1)
              FROM delivery_history WHERE id = ANY ($1::uuid[])
            """, [ids]
        ).first!
        #expect(try history.int(0) == 3)
        #expect(try db.counts(of: request) == (sent: 3, failed: 0))
        #expect(try db.count("SELECT count(*) FROM deliveries") == 0)
        #expect(try db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 0)
    }

    @Test func sqlMadeDeliveryIDsAreVersion7AndCarryTheTime() throws {
        // herald_uuid_v7 (sql/functions/uuid_v7.sql) makes the Live Activity fan-out's ids, in the layout
        // of HeraldCore's UUIDv7 (whose parser reads them back).
        let db = try QueueDatabase()
        let before = Date().addingTimeInterval(-1)
        let rows = try db.connection.query("SELECT herald_uuid_v7() FROM generate_series(1, 500)").rows
        let ids = try rows.map { try $0.uuid(0) }
        #expect(Set(ids).count == 500)
        for id in ids {
            let time = try #require(UUIDv7.timestamp(of: id))
            #expect(time >= before && time <= Date().addingTimeInterval(1))
            #expect(id.uuid.8 >> 6 == 0b10)
        }
    }

    @Test func aTokenReplacedSinceTheSendIsNotInvalidated() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 1)
        let id = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        _ = try store.claim(on: db.connection, worker: "w1", limit: 1, leaseSeconds: 30, services: [.apns])
        try db.connection.query("UPDATE devices SET apns_token = repeat('cd', 32) WHERE user_id = 'u1'")
        try store.complete(
            on: db.connection, worker: "w1",
            [CompletedDelivery(id: id, outcome: .tokenInvalid(reason: "Unregistered"), token: Self.apnsToken)])
        #expect(try db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 0)
    }

    /// A dead token records the upstream's reason and when it stopped being valid (APNs' 410 timestamp); a host
    /// registration after that time wins over the verdict, one before it does not (sql/functions/put_device.sql).
    @Test(arguments: [false, true])
    func aDeadTokenKeepsItsReasonAndTimeUnlessRegisteredAfter(registeredAfter: Bool) throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let registeredAt = Date(timeIntervalSince1970: 1_790_000_000)
        let verdictAt = registeredAt.addingTimeInterval(registeredAfter ? -60 : 60)
        try db.connection.query("UPDATE devices SET registered_at = $1 WHERE user_id = 'u1'", [registeredAt])
        let request = try db.request(partner: partner.id, deliveries: 1)
        let id = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        _ = try store.claim(on: db.connection, worker: "w1", limit: 1, leaseSeconds: 30, services: [.apns])
        try store.complete(
            on: db.connection, worker: "w1",
            [
                CompletedDelivery(
                    id: id, outcome: .tokenInvalid(reason: "Unregistered", since: verdictAt), token: Self.apnsToken)
            ])
        #expect(try db.outcome(of: id)?.outcome == "token_invalid")
        let row = try #require(
            try db.connection.query(
                "SELECT apns_token_invalidated_at, apns_token_invalid_reason FROM devices WHERE user_id = 'u1'"
            ).first)
        if registeredAfter {
            #expect(row.isNull(0) && row.isNull(1))
        } else {
            #expect(try row.optionalDate(0) == verdictAt)
            #expect(row.optionalString(1) == "Unregistered")
        }
    }

    /// A row the claim did not send because its token is already invalid carries no token: the first verdict's
    /// reason and time stay.
    @Test func aSkippedSendKeepsTheFirstVerdict() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let first = Date(timeIntervalSince1970: 1_790_000_000)
        try db.connection.query(
            """
            UPDATE devices SET apns_token_invalidated_at = $1, apns_token_invalid_reason = 'Unregistered'
             WHERE user_id = 'u1'
            """, [first])
        let request = try db.request(partner: partner.id, deliveries: 1)
        let id = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let claimed = try #require(
            try store.claim(
                on: db.connection, worker: "w1", limit: 1, leaseSeconds: 30,
                services: [.apns]
            ).first)
        #expect(claimed.verdict == .tokenInvalid)
        try store.complete(
            on: db.connection, worker: "w1",
            [CompletedDelivery(id: id, outcome: .tokenInvalid(reason: "token_invalidated"), token: nil)])
        let row = try #require(
            try db.connection.query(
                "SELECT apns_token_invalidated_at, apns_token_invalid_reason FROM devices WHERE user_id = 'u1'"
            ).first)
        #expect(try row.optionalDate(0) == first)
        #expect(row.optionalString(1) == "Unregistered")
    }

    @Test func onlyTheLeaseHolderCompletesARow() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 1)
        let id = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        _ = try store.claim(on: db.connection, worker: "w1", limit: 1, leaseSeconds: 30, services: [.apns])
        let result = try store.complete(
            on: db.connection, worker: "w2",
            [CompletedDelivery(id: id, outcome: .sent, token: Self.apnsToken)])
        #expect(result.finished == 0)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE state = 'leased'") == 1)
    }

    @Test func releaseAndRescueReturnRowsToPending() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 2)
        let kept = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        let crashed = try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        _ = try store.claim(on: db.connection, worker: "w1", limit: 2, leaseSeconds: 30, services: [.apns])

        #expect(try store.release(on: db.connection, worker: "w1", ids: [kept]) == 1)
        #expect(try db.count("SELECT attempts FROM deliveries WHERE id = $1", [kept]) == 0)
        #expect(try store.rescue(on: db.connection) == 0)
        try db.connection.query(
            "UPDATE deliveries SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [crashed])
        #expect(try store.rescue(on: db.connection) == 1)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE state = 'pending'") == 2)
        // The rescued row keeps its attempt count: it may have been sent.
        #expect(try db.count("SELECT attempts FROM deliveries WHERE id = $1", [crashed]) == 1)
    }

    @Test func theNextDueRowIsTheEarliestPendingOne() throws {
        let db = try QueueDatabase()
        #expect(try store.nextAvailableAt(on: db.connection) == nil)
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 3)
        try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns,
            availableAt: Date().addingTimeInterval(-10))
        try db.delivery(request: request, partner: partner.id, user: "u1", service: .apns)
        try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns,
            availableAt: Date().addingTimeInterval(600))
        let next = try #require(try store.nextAvailableAt(on: db.connection))
        #expect(next < Date().addingTimeInterval(-9) && next > Date().addingTimeInterval(-30))
    }

    @Test func theClaimAndRescueUseTheirPartialIndexes() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 20000)
        try db.deliveries(count: 20000, request: request, partner: partner.id, user: "u1")
        try db.connection.execute("ANALYZE deliveries")
        let claimPlan = try db.connection.query(
            """
            EXPLAIN SELECT d.id FROM deliveries d
             WHERE d.state = 'pending' AND d.lane = 0 AND d.partner_id = $1 AND d.available_at <= now()
               AND d.service = ANY ('{apns}') ORDER BY d.available_at LIMIT 100 FOR UPDATE SKIP LOCKED
            """, [partner.id]
        ).rows.map { try $0.string(0) }.joined(separator: "\n")
        #expect(claimPlan.contains("deliveries_due_partner"), "\(claimPlan)")
        #expect(!claimPlan.contains("Sort"), "\(claimPlan)")
        let rescuePlan = try db.connection.plan(Queries.Deliveries.rescue, [1000])
        #expect(rescuePlan.contains("deliveries_lease"), "\(rescuePlan)")
    }

    @Test func aCursorSkipsRowsWellBeforeIt() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.user("u1", apnsToken: Self.apnsToken)
        let request = try db.request(partner: partner.id, deliveries: 2)
        let old = try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns,
            availableAt: Date().addingTimeInterval(-60))
        let recent = try db.delivery(
            request: request, partner: partner.id, user: "u1", service: .apns,
            availableAt: Date().addingTimeInterval(-5))
        // The cursor says this worker claimed up to now: the row 5 s back is within the margin left
        // for late commits, the one a minute back is not.
        let cursors = [QueueCursor(lane: 0, partnerID: partner.id): Date()]
        let first = try store.claim(
            on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns],
            cursors: cursors)
        #expect(first.map(\.id) == [recent])
        #expect(first.first?.partnerID == partner.id)
        #expect(first.first?.lane == 0)
        // Without cursors every due row is considered.
        let second = try store.claim(on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns])
        #expect(second.map(\.id) == [old])
    }

    /// The claim walks the partners in id order: those with a cursor (probed from it) and, between them, those
    /// with pending rows. Partners registered without rows are passed over.
    @Test func partnersWithAndWithoutCursorsAreClaimedAlike() throws {
        let db = try QueueDatabase()
        let partners = try (0..<6).map { _ in try db.partner() }.sorted { $0.id.uuidString < $1.id.uuidString }
        try db.user("u1", apnsToken: Self.apnsToken)
        // Rows for every other partner; cursors for the first and the last of those with rows, and for one without.
        var expected: Set<UUID> = []
        for partner in partners.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
            let request = try db.request(partner: partner.id, deliveries: 2)
            for _ in 0..<2 {
                expected.insert(
                    try db.delivery(
                        request: request, partner: partner.id, user: "u1", service: .apns,
                        availableAt: Date().addingTimeInterval(-2)))
            }
        }
        let cursors = [
            QueueCursor(lane: 0, partnerID: partners[0].id): Date().addingTimeInterval(-3),
            QueueCursor(lane: 0, partnerID: partners[4].id): Date().addingTimeInterval(-3),
            QueueCursor(lane: 0, partnerID: partners[1].id): Date(),
        ]
        let claimed = try store.claim(
            on: db.connection, worker: "w1", limit: 100, leaseSeconds: 30, services: [.apns],
            cursors: cursors)
        #expect(Set(claimed.map(\.id)) == expected)
        #expect(Set(claimed.map(\.partnerID)) == Set([partners[0].id, partners[2].id, partners[4].id]))
    }
}
