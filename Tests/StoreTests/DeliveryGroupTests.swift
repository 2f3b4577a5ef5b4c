import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// Group rows (sql/016_delivery_groups.sql): a large request's deliveries written as rows of up to 50
/// members, claimed as their members, finished member by member, retried as single rows, released and
/// rescued whole, and counted as deliveries by the gauges.
@Suite(.requiresDatabase) struct DeliveryGroupTests {
    let store = DeliveryStore()

    /// A request of `apns` APNs deliveries (users a1...) and `fcm` FCM ones (users f1...) written by the
    /// intake's own statement; returns the request and the delivery ids in order.
    private func enqueue(_ db: QueueDatabase, partner: (id: UUID, miniApp: String), apns: Int, fcm: Int = 0)
        throws -> (request: (id: UUID, createdAt: Date), ids: [UUID])
    {
        var deliveries: [(user: String, service: PushService)] = []
        for index in 1...max(apns, 1) where apns > 0 {
            try db.user("a\(index)", apnsToken: Self.token(index))
            deliveries.append(("a\(index)", .apns))
        }
        for index in 1...max(fcm, 1) where fcm > 0 {
            try db.user("f\(index)", fcmToken: Self.token(1000 + index))
            deliveries.append(("f\(index)", .fcm))
        }
        return try db.enqueueRequest(partner: partner, deliveries: deliveries)
    }

    static func token(_ index: Int) -> String { String(format: "%064x", index) }

    private func claimAll(_ db: QueueDatabase, worker: String = "w1", limit: Int = 1000) throws -> [ClaimedDelivery] {
        try store.claim(on: db.connection, worker: worker, limit: limit, leaseSeconds: 30, services: [.apns, .fcm])
    }

    @Test func aLargeRequestIsWrittenAsEvenGroupsAndASmallPartAsSingleRows() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let (_, ids) = try enqueue(db, partner: partner, apns: 120, fcm: 5)

        let rows = try db.connection.query(
            """
            SELECT service, member_count, members, user_id, payload FROM deliveries ORDER BY service, member_count
            """
        ).rows
        // 120 APNs deliveries in three groups of 40; 5 FCM ones, under the threshold, one row each.
        #expect(try rows.map { try $0.string(0) } == ["apns", "apns", "apns", "fcm", "fcm", "fcm", "fcm", "fcm"])
        #expect(try rows.map { try $0.int(1) } == [40, 40, 40, 1, 1, 1, 1, 1])
        #expect(try rows.prefix(3).allSatisfy { try $0.string(3) == "" && $0.string(4) == "" })
        #expect(rows.suffix(5).allSatisfy { $0.isNull(2) })
        // Every delivery id is a member or a row's own id, once.
        let written = try db.connection.query(
            """
            SELECT unnest(members) FROM deliveries WHERE members IS NOT NULL
            UNION ALL SELECT id FROM deliveries WHERE members IS NULL
            """
        ).rows.map { try $0.uuid(0) }
        #expect(written.count == 125 && Set(written) == Set(ids))
        // Members keep the request's order, with their own user, device and payload.
        let first = try #require(
            try db.connection.query(
                """
                SELECT members[2], member_users[1], member_devices[1], member_payloads[1], member_users[40] FROM deliveries
                 WHERE members[1] = $1
                """, [ids[0]]
            ).first)
        #expect(try first.uuid(0) == ids[1] && first.string(1) == "a1" && first.string(2) == "iphone")
        #expect(try first.string(3).contains(ids[0].uuidString.lowercased()) && first.string(4) == "a40")

        let gauges = try QueueGaugeStore().gauges(on: db.connection)
        #expect(gauges.first { $0.lane == "realtime" }?.due == 125)
        let queue = try db.connection.query(Queries.Stats.queue.text).rows.map { try $0.int("deliveries") }
        #expect(queue == [125])
    }

    @Test func aClaimCountsMembersAgainstItsLimitAndReturnsEachAsARow() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let (_, ids) = try enqueue(db, partner: partner, apns: 120)

        // 50 asked: two groups of 40 (the second takes the claim past its limit by less than a group).
        let claimed = try claimAll(db, limit: 50)
        #expect(claimed.count == 80)
        #expect(Set(claimed.compactMap(\.groupID)).count == 2)
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE state = 'leased' AND leased_by = 'w1'") == 2)
        for delivery in claimed {
            let index = try #require(ids.firstIndex(of: delivery.id))
            #expect(delivery.verdict == .send && delivery.attempts == 1)
            #expect(delivery.token == Self.token(index + 1))
            #expect(delivery.payload.contains(delivery.id.uuidString.lowercased()))
            #expect(delivery.member != nil && delivery.leaseID == delivery.groupID)
        }
        // The rest: the third group.
        let rest = try claimAll(db, worker: "w2")
        #expect(rest.count == 40 && Set(rest.map(\.id)).isDisjoint(with: claimed.map(\.id)))
        #expect(try claimAll(db, worker: "w3").isEmpty)
    }

    @Test func membersFinishOneByOneAndTheGroupLeavesWithItsLast() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let (request, _) = try enqueue(db, partner: partner, apns: 20)
        let claimed = try claimAll(db)
        #expect(claimed.count == 20)
        let group = try #require(claimed.first?.groupID)

        let first = Array(claimed.prefix(12))
        let done = try store.complete(
            on: db.connection, worker: "w1", first.map { CompletedDelivery($0, outcome: .sent) })
        #expect(done == (12, 0))
        #expect(try db.count("SELECT cardinality(members_done) FROM deliveries WHERE id = $1", [group]) == 12)
        #expect(try db.counts(of: request) == (12, 0))
        // The 12 sent members are one history row of the group, without payloads.
        #expect(try db.count("SELECT count(*) FROM delivery_history") == 1)
        #expect(
            try db.count(
                """
                SELECT count(*) FROM delivery_history
                 WHERE id = $1 AND outcome = 'sent' AND cardinality(members) = 12 AND payload IS NULL AND user_id = ''
                """, [group]) == 1)
        #expect(try db.count("SELECT count(*) FROM delivery_history_deliveries WHERE outcome = 'sent'") == 12)
        // The stats count what is left of the group.
        #expect(try db.connection.query(Queries.Stats.queue.text).rows.map { try $0.int("deliveries") } == [8])

        let rest = try store.complete(
            on: db.connection, worker: "w1",
            claimed.dropFirst(12).map { CompletedDelivery($0, outcome: .sent) })
        #expect(rest == (8, 0))
        #expect(try db.count("SELECT count(*) FROM deliveries") == 0)
        #expect(try db.counts(of: request) == (20, 0))
        #expect(try db.count("SELECT count(*) FROM delivery_history") == 2)
        let history = try db.connection.query("SELECT id, user_id, device_id FROM delivery_history_deliveries").rows
        #expect(Set(try history.map { try $0.uuid(0) }) == Set(claimed.map(\.id)))
        #expect(try history.allSatisfy { try $0.string(1).hasPrefix("a") && $0.string(2) == "iphone" })
    }

    /// sql/functions/complete_deliveries.sql: a group all of whose members one completion records as sent is
    /// deleted at once with its own arrays as its history row; a group in pieces, one with another
    /// outcome and single rows in the same statement take their own paths, and the counts add up.
    @Test func aGroupSentWholeIsDeletedWithItsArraysAsItsHistoryRow() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let (request, ids) = try enqueue(db, partner: partner, apns: 120, fcm: 5)
        let arrays = try db.connection.query(
            """
            SELECT id, members::text, member_users::text, member_devices::text FROM deliveries
             WHERE members IS NOT NULL ORDER BY members[1]
            """
        ).rows.map { (try $0.uuid(0), try $0.string(1), try $0.string(2), try $0.string(3)) }
        #expect(arrays.count == 3)
        let claimed = try claimAll(db)
        #expect(claimed.count == 125)
        let members = { (group: UUID) in claimed.filter { $0.groupID == group } }
        let (whole, split, mixed) = (members(arrays[0].0), members(arrays[1].0), members(arrays[2].0))
        let singles = claimed.filter { $0.groupID == nil }
        var outcomes = whole.map { CompletedDelivery($0, outcome: .sent) }
        outcomes += split.prefix(10).map { CompletedDelivery($0, outcome: .sent) }
        outcomes += mixed.dropFirst().map { CompletedDelivery($0, outcome: .sent) }
        outcomes.append(CompletedDelivery(mixed[0], outcome: .failed(reason: "status_400")))
        outcomes += singles.map { CompletedDelivery($0, outcome: .sent) }
        #expect(try store.complete(on: db.connection, worker: "w1", outcomes) == (95, 0))

        // The whole group and the mixed one are gone; the split one waits for its 30 other members.
        let left = try db.connection.query("SELECT id, cardinality(members_done) FROM deliveries").rows
        #expect(left.count == 1)
        #expect(try left[0].uuid(0) == arrays[1].0 && left[0].int(1) == 10)
        #expect(try db.counts(of: request) == (94, 1))
        // The whole group's history row is the group's arrays as they were written.
        let history = try #require(
            try db.connection.query(
                """
                SELECT members::text, member_users::text, member_devices::text, outcome, user_id, payload IS NULL, attempts
                  FROM delivery_history WHERE id = $1
                """, [arrays[0].0]
            ).first)
        #expect(try history.string(0) == arrays[0].1 && history.string(1) == arrays[0].2)
        #expect(try history.string(2) == arrays[0].3 && history.string(3) == "sent" && history.string(4) == "")
        #expect(try history.bool(5) && history.int(6) == 1)
        #expect(try db.count("SELECT cardinality(members) FROM delivery_history WHERE id = $1", [arrays[1].0]) == 10)
        #expect(try db.count("SELECT cardinality(members) FROM delivery_history WHERE id = $1", [arrays[2].0]) == 39)
        #expect(try db.outcome(of: mixed[0].id)?.outcome == "failed")
        let recorded = try db.connection.query("SELECT id FROM delivery_history_deliveries").rows.map { try $0.uuid(0) }
        #expect(recorded.count == 95 && Set(recorded) == Set(outcomes.map(\.id)))
        #expect(Set(recorded).isSubset(of: Set(ids)))

        // Once a group has members done, the rest of it takes the pieces' path and the group leaves with it.
        #expect(
            try store.complete(
                on: db.connection, worker: "w1",
                split.dropFirst(10).map { CompletedDelivery($0, outcome: .sent) }) == (30, 0))
        #expect(try db.count("SELECT count(*) FROM deliveries") == 0)
        #expect(try db.counts(of: request) == (124, 1))
        // A completion by a worker that no longer holds a group records nothing of it.
        let again = try db.enqueueRequest(partner: partner, deliveries: (1...20).map { ("a\($0)", PushService.apns) })
        let other = try claimAll(db, worker: "w2")
        #expect(other.count == 20)
        #expect(
            try store.complete(on: db.connection, worker: "w1", other.map { CompletedDelivery($0, outcome: .sent) })
                == (0, 0))
        #expect(try db.counts(of: again.request) == (0, 0))
        #expect(try db.count("SELECT count(*) FROM deliveries WHERE leased_by = 'w2'") == 1)
    }

    @Test func aRetriedMemberLeavesItsGroupAsASingleRowAndOtherOutcomesAreRecorded() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let (request, ids) = try enqueue(db, partner: partner, apns: 16)
        let claimed = try claimAll(db)
        #expect(claimed.count == 16)
        let retryAt = Date().addingTimeInterval(600)
        let (retried, failed, dead, deferred) = (claimed[0], claimed[1], claimed[2], claimed[3])
        var outcomes = [
            CompletedDelivery(retried, outcome: .retry(at: retryAt, reason: "status_503")),
            CompletedDelivery(failed, outcome: .failed(reason: "status_400")),
            CompletedDelivery(dead, outcome: .tokenInvalid(reason: "BadDeviceToken")),
            CompletedDelivery(deferred, outcome: .deferred(at: retryAt, reason: "InvalidProviderToken")),
        ]
        outcomes += claimed.dropFirst(4).map { CompletedDelivery($0, outcome: .sent) }
        #expect(try store.complete(on: db.connection, worker: "w1", outcomes) == (14, 2))

        // The group is gone; the two to retry are rows of their own, with the group's attempt (given back
        // for the deferred one) and the member's payload.
        let rows = try db.connection.query(
            """
            SELECT id, state, members IS NULL, attempts, available_at, last_error, user_id, payload FROM deliveries
            ORDER BY attempts DESC
            """
        ).rows
        #expect(rows.count == 2)
        #expect(try rows[0].uuid(0) == retried.id && rows[0].string(1) == "pending" && rows[0].bool(2))
        #expect(try rows[0].int(3) == 1 && abs(try rows[0].date(4).timeIntervalSince(retryAt)) < 0.001)
        #expect(try rows[0].optionalString(5) == "status_503" && rows[0].string(7) == retried.payload)
        #expect(try rows[1].uuid(0) == deferred.id && rows[1].int(3) == 0)
        #expect(try db.counts(of: request) == (12, 2))
        #expect(try db.outcome(of: failed.id)?.outcome == "failed")
        #expect(
            try db.count(
                "SELECT count(*) FROM delivery_history WHERE id = $1 AND payload = $2",
                [failed.id, failed.payload]) == 1)
        #expect(try db.outcome(of: dead.id)?.outcome == "token_invalid")
        let user = "a\(try #require(ids.firstIndex(of: dead.id)) + 1)"
        #expect(
            try db.count(
                """
                SELECT count(*) FROM devices WHERE user_id = $1 AND apns_token_invalidated_at IS NOT NULL
                """, [user]) == 1)
        #expect(try db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 1)

        // The split row is claimed and finished as any single row.
        try db.connection.execute("UPDATE deliveries SET available_at = now()")
        let again = try claimAll(db)
        #expect(Set(again.map(\.id)) == [retried.id, deferred.id] && again.allSatisfy { $0.groupID == nil })
        #expect(
            try store.complete(on: db.connection, worker: "w1", again.map { CompletedDelivery($0, outcome: .sent) })
                == (2, 0))
        #expect(try db.counts(of: request) == (14, 2))
    }

    @Test func releaseAndRescueReturnAGroupWithoutItsDoneMembers() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        _ = try enqueue(db, partner: partner, apns: 30)
        let claimed = try claimAll(db)
        let group = try #require(claimed.first?.groupID)
        try store.complete(
            on: db.connection, worker: "w1", claimed.prefix(10).map { CompletedDelivery($0, outcome: .sent) })

        // A draining worker gives the group back: its attempt is not counted, its done members stay done.
        #expect(try store.release(on: db.connection, worker: "w1", ids: [group]) == 1)
        let second = try claimAll(db, worker: "w2")
        #expect(Set(second.map(\.id)) == Set(claimed.dropFirst(10).map(\.id)))
        #expect(second.allSatisfy { $0.attempts == 1 && $0.groupID == group })
        // The lease extender renews the group's row.
        #expect(try store.extendLeases(on: db.connection, worker: "w2", ids: [group], leaseSeconds: 60) == 1)

        // w2 crashes: its lease expires, the rescuer returns the group, the next claim skips done members.
        try db.connection.execute("UPDATE deliveries SET lease_expires_at = now() - interval '1 second'")
        #expect(try store.rescue(on: db.connection) == 1)
        // w2's late answers no longer count: the group is no longer leased by it.
        #expect(
            try store.complete(
                on: db.connection, worker: "w2", second.prefix(5).map { CompletedDelivery($0, outcome: .sent) })
                == (0, 0))
        let third = try claimAll(db, worker: "w3")
        #expect(third.count == 20 && third.allSatisfy { $0.attempts == 2 })
        #expect(
            try store.complete(on: db.connection, worker: "w3", third.map { CompletedDelivery($0, outcome: .sent) })
                == (20, 0))
        #expect(try db.count("SELECT count(*) FROM deliveries") == 0)
        #expect(try db.count("SELECT count(*) FROM delivery_history_deliveries") == 30)
        #expect(try db.count("SELECT count(DISTINCT id) FROM delivery_history_deliveries") == 30)
        // Stats count deliveries, not history rows.
        let stats = try db.connection.query(Queries.Stats.outcomes.text, [300, 3600]).rows
        #expect(
            try stats.map {
                [
                    try $0.string("outcome"), String(try $0.int("short_window")),
                    String(try $0.int("long_window")),
                ]
            } == [["sent", "30", "30"]])
    }

    /// The completion finds its groups by the primary key; the gauge counts members from the due index alone.
    @Test func groupStatementsUseTheirIndexes() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        _ = try enqueue(db, partner: partner, apns: 20)
        let users = (1...20).map { (user: "a\($0)", service: PushService.apns) }
        for _ in 0..<200 { _ = try db.enqueueRequest(partner: partner, deliveries: users) }
        try db.connection.execute("VACUUM ANALYZE deliveries")
        let explain = { (sql: String) in
            try db.connection.query("EXPLAIN " + sql).rows.map { try $0.string(0) }.joined(separator: "\n")
        }
        let marked = try explain(
            """
            UPDATE deliveries g SET members_done = coalesce(g.members_done, '{}') || '{1}'
             WHERE g.id = ANY ('{00000000-0000-4000-8000-000000000001}'::uuid[]) AND g.leased_by = 'w1'
            """)
        #expect(marked.contains("deliveries_pkey"), "\(marked)")
        // sql/functions/complete_deliveries.sql's delete of a group sent whole.
        let whole = try explain(
            """
            DELETE FROM deliveries g
             WHERE g.id = ANY ('{00000000-0000-4000-8000-000000000001}'::uuid[]) AND g.leased_by = 'w1'
               AND coalesce(cardinality(g.members_done), 0) = 0
               AND g.member_count = ('{20}'::integer[])[array_position('{00000000-0000-4000-8000-000000000001}'::uuid[], g.id)]
            """)
        #expect(whole.contains("deliveries_pkey"), "\(whole)")
        try db.connection.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        let gauge = try db.connection.plan(Queries.QueueGauges.dueByLane, [100_000])
        #expect(gauge.contains("Index Only Scan using deliveries_due_partner"), "\(gauge)")
    }

    /// A group member that failed is a history row of its own with its payload: `heraldctl replay` queues it
    /// again as a single row, under its id, and a second replay skips it.
    @Test func aFailedMemberIsReplayedAsASingleRow() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let (request, _) = try enqueue(db, partner: partner, apns: 20)
        let claimed = try claimAll(db)
        let failed = claimed[3]
        try store.complete(
            on: db.connection, worker: "w1",
            claimed.map {
                CompletedDelivery($0, outcome: $0.id == failed.id ? .failed(reason: "status_400") : .sent)
            })
        #expect(try db.counts(of: request) == (19, 1))

        let replay = ReplayStore(pool: PostgresPool(configuration: .init(url: db.url, maxConnections: 1)))
        var selection = ReplaySelection()
        selection.requestIDs = [request.id]
        let counts = try replay.replay(selection, lane: 1, dryRun: false, fallbackTTLSeconds: 3600)
        #expect(counts.matched == 1 && counts.replayed == 1)
        let row = try #require(
            try db.connection.query(
                "SELECT id, members IS NULL, payload, user_id, lane FROM deliveries"
            ).first)
        #expect(try row.uuid(0) == failed.id && row.bool(1) && row.string(2) == failed.payload)
        #expect(try row.string(3).hasPrefix("a") && row.int(4) == 1)
        #expect(try db.counts(of: request) == (19, 0))
        #expect(try replay.replay(selection, lane: 1, dryRun: false, fallbackTTLSeconds: 3600).replayed == 0)
    }

    @Test func verdictsAreTheMembersOwn() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let (_, ids) = try enqueue(db, partner: partner, apns: 20)
        // a2 opted out, a3's token is invalidated, a4's device is gone.
        try db.connection.query("INSERT INTO opt_outs (user_id, mini_app_id) VALUES ('a2', $1)", [partner.miniApp])
        try db.connection.execute("UPDATE devices SET apns_token_invalidated_at = now() WHERE user_id = 'a3'")
        try db.connection.execute("DELETE FROM devices WHERE user_id = 'a4'")
        let claimed = Dictionary(uniqueKeysWithValues: try claimAll(db).map { ($0.id, $0) })
        #expect(claimed[ids[0]]?.verdict == .send)
        #expect(claimed[ids[1]]?.verdict == .suppressed)
        #expect(claimed[ids[2]]?.verdict == .tokenInvalid)
        #expect(claimed[ids[3]]?.verdict == .deviceRemoved)
        #expect(claimed.values.count { $0.verdict == .send } == 17)
    }
}
