import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

/// The intake lease (sql/042_intake_lease.sql, sql/functions/intake_push.sql steps 5 and 6): a worker's listener
/// registers its lease name, an intake's batch writes its due rows leased to the worker it notifies, and its
/// notification carries them whole (`WakeUpMessage.carried`, `DeliveryStore.leasedRows`), or names them for the worker
/// to read (`DeliveryStore.readLeased`) when they do not fit: the worker claims none of them.
@Suite("Intake lease", .serialized, .requiresDatabase)
struct IntakeLeaseTests {
    static var pool: PostgresPool { IntakePushTests.pool }
    let store = DeliveryStore()

    /// A listener session as a worker opens one (named for pg_stat_activity), registered under `worker`.
    func listener(_ worker: String?, seconds: Int = 30) throws -> (DatabaseSession, Int32) {
        try StoreDatabase.migrate(Self.pool)
        let session = DeliveryStore.workerSession(
            url: TestEnvironment.databaseURL,
            role: DeliveryStore.listenerRole(serving: [.apns, .fcm]), listen: true)
        let pid = try session.use { try store.listenAsWorker(on: $0, leasingTo: worker, leaseSeconds: seconds) }
        return (session, pid)
    }

    /// The rows a notification's payload carries whole, read as the worker reads them; nil for any other payload.
    static func carried(_ payload: String, now: Date = Date()) -> [ClaimedDelivery]? {
        guard case .carried(let rows)? = WakeUpMessage(decoding: payload) else { return nil }
        return DeliveryStore.leasedRows(rows, now: now)
    }

    func rows(_ ids: [UUID]) throws -> [UUID: (state: String, worker: String?, attempts: Int, leaseLeft: Double?)] {
        try Self.pool.withConnection { connection in
            var rows: [UUID: (String, String?, Int, Double?)] = [:]
            for row in try connection.query(
                """
                SELECT id, state::text, leased_by, attempts, extract(epoch FROM lease_expires_at - now())::float8
                  FROM deliveries WHERE id = ANY ($1::uuid[])
                """, [ids]
            ).rows {
                rows[try row.uuid(0)] = (
                    try row.string(1), row.optionalString(2), try row.int(3), row.optionalString(4).flatMap(Double.init)
                )
            }
            return rows
        }
    }

    @Test(
        "a batch under a registered listener's lease writes its due rows leased to that worker, attempted once, and says so; a scheduled push stays pending"
    )
    func dueRowsAreWrittenLeased() throws {
        let fixture = try IntakePushTests.fixture()
        let worker = TestEnvironment.unique("worker")
        let (session, pid) = try listener(worker, seconds: 30)
        defer { session.close() }
        // The intake sees the listener with its lease.
        let lease = DeliveryLease(worker: worker, seconds: 30, listener: pid)
        #expect(
            try Self.pool.withConnection { try store.listeners(on: $0) }.contains(
                WorkerListener(pid: pid, lease: lease)))

        let writer = IntakeWriter(
            pool: Self.pool,
            notify: {
                DeliveryWakeUp(channel: DeliveryStore.workerChannel(pid), lease: lease)
            })
        let first = IntakePushTests.push(fixture, to: fixture.ios[0])
        var later = IntakePushTests.push(fixture, to: fixture.ios[1])
        later.write.sendAt = later.now.addingTimeInterval(3_600)
        let both = IntakePushTests.push(fixture, to: fixture.both[0], slots: 2)
        let outcomes = try writer.write([first, later, both])
        #expect(outcomes.allSatisfy { if case .accepted = $0 { true } else { false } })

        let due = (first.slots + both.slots).map(\.id)
        let heard = try session.use { try $0.waitForNotifications(timeout: .seconds(5)) }
        #expect(heard.map(\.channel) == [DeliveryStore.workerChannel(pid)])
        let carried = heard.first.flatMap { Self.carried($0.payload) } ?? []
        #expect(carried.map(\.id) == due)

        let written = try rows(due + [later.slots[0].id])
        for id in due {
            #expect(written[id]?.state == "leased")
            #expect(written[id]?.worker == worker)
            #expect(written[id]?.attempts == 1)
            #expect((written[id]?.leaseLeft).map { $0 > 25 && $0 <= 30 } == true, "\(String(describing: written[id]))")
        }
        #expect(written[later.slots[0].id]?.state == "pending")
        #expect(written[later.slots[0].id]?.worker == nil)
        #expect(written[later.slots[0].id]?.attempts == 0)

        // The worker reads them with the claim's verdicts and tokens; another worker reads none of them.
        let read = try Self.pool.withConnection { try store.readLeased(on: $0, worker: worker, ids: due) }
        #expect(Set(read.map(\.id)) == Set(due))
        #expect(read.allSatisfy { $0.verdict == .send && $0.token != nil && $0.attempts == 1 })
        #expect(Set(read.map(\.service)) == [.apns, .fcm])
        #expect(try Self.pool.withConnection { try store.readLeased(on: $0, worker: "someone-else", ids: due) }.isEmpty)
        // What the notification carried is what the read returns.
        let byID = Dictionary(uniqueKeysWithValues: read.map { ($0.id, $0) })
        for row in carried {
            let read = try #require(byID[row.id])
            #expect(row.service == read.service && row.environment == read.environment)
            #expect(row.payloadBytes == read.payloadBytes)
            #expect(row.token == read.token && row.bundleID == read.bundleID)
            #expect(row.expiresAt == read.expiresAt && row.availableAt == read.availableAt)
            #expect(row.verdict == read.verdict && row.attempts == read.attempts && row.lane == read.lane)
            #expect(row.partnerID == read.partnerID && row.priority == read.priority && row.groupID == nil)
        }
        #expect(carried.first { $0.service == .apns }?.payloadBytes == first.slots[0].apns)

        // Releasing what the worker does not keep: pending again, the attempt unspent.
        let released = try Self.pool.withConnection {
            try store.releaseLeased(on: $0, worker: worker, keeping: [first.slots[0].id])
        }
        #expect(released == 2)
        let after = try rows(due)
        #expect(after[first.slots[0].id]?.state == "leased")
        for id in both.slots.map(\.id) {
            #expect(after[id]?.state == "pending")
            #expect(after[id]?.worker == nil)
            #expect(after[id]?.attempts == 0)
        }
        #expect(
            try Self.pool.withConnection { try store.readLeased(on: $0, worker: worker, ids: due) }.map(\.id)
                == [first.slots[0].id])
    }

    @Test(
        "a batch's leased rows go in as many notifications as they need; a push whose rows alone do not fit one is named by id, for the worker to read"
    )
    func rowsBeyondOneNotification() throws {
        let fixture = try IntakePushTests.fixture()
        let worker = TestEnvironment.unique("worker")
        let (session, pid) = try listener(worker)
        defer { session.close() }
        let writer = IntakeWriter(
            pool: Self.pool,
            notify: {
                DeliveryWakeUp(
                    channel: DeliveryStore.workerChannel(pid),
                    lease: DeliveryLease(worker: worker, seconds: 30, listener: pid))
            })
        // Bodies near APNs' 4 KB limit: two pushes' rows are more than one notification carries (8,000 bytes), and
        // so are the two rows of a push to an iPhone and an Android phone.
        let large = { (service: String) in
            Array(#"{"\#(service)":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 4_000) + Array(#""}"#.utf8)
        }
        var pushes = fixture.ios[0...1].map { user in
            var push = IntakePushTests.push(fixture, to: user)
            push.slots[0].apns = large("aps")
            return push
        }
        var both = IntakePushTests.push(fixture, to: fixture.both[0], slots: 2)
        both.slots[0].apns = large("aps")
        both.slots[1].fcm = large("android")
        pushes.append(both)
        _ = try writer.write(pushes)
        var heard: [String] = []
        let deadline = Date().addingTimeInterval(5)
        while heard.count < 3, Date() < deadline {
            heard += try session.use { try $0.waitForNotifications(timeout: .seconds(1)) }.map(\.payload)
        }
        #expect(heard.count == 3)
        let carried = heard.compactMap { Self.carried($0) }
        #expect(carried.map { $0.map(\.id) } == [[pushes[0].slots[0].id], [pushes[1].slots[0].id]])
        #expect(carried.flatMap { $0 }.map(\.payloadBytes) == [pushes[0].slots[0].apns, pushes[1].slots[0].apns])
        let named = heard.compactMap { payload -> [UUID]? in
            if case .leased(let ids)? = WakeUpMessage(decoding: payload) { ids } else { nil }
        }
        #expect(named == [both.slots.map(\.id)])
        let read = try Self.pool.withConnection {
            try store.readLeased(on: $0, worker: worker, ids: both.slots.map(\.id))
        }
        #expect(Set(read.map(\.payloadBytes)) == [both.slots[0].apns, both.slots[1].fcm])
    }

    @Test("a carried row past its expiry is read as expired; a payload that does not parse carries nothing")
    func carriedRowsParse() throws {
        let id = UUID(), partner = UUID()
        let fields = [
            id.uuidString.lowercased(), "apns", "production", "2026-01-02 03:04:05.5+00", "ab12", "",
            partner.uuidString.lowercased(), "2026-01-02 03:03:05+00", "", #"{"aps":{}}"#,
        ]
        let payload = "rows:" + fields.joined(separator: "\u{1F}")
        let before = try #require(Self.carried(payload, now: Date(timeIntervalSince1970: 1_767_323_000)))
        #expect(before.map(\.id) == [id])
        #expect(before.first?.verdict == .send)
        #expect(before.first?.bundleID == nil && before.first?.token == "ab12" && before.first?.partnerID == partner)
        #expect(before.first?.expiresAt == Date(timeIntervalSince1970: 1_767_323_045.5))
        #expect(before.first?.payload == #"{"aps":{}}"#)
        #expect(before.first?.collapseID == nil)
        let after = try #require(Self.carried(payload, now: Date(timeIntervalSince1970: 1_767_323_046)))
        #expect(after.first?.verdict == .expired)
        // A second row with a field missing, and a row whose id is not one.
        #expect(WakeUpMessage(decoding: payload + "\u{1E}" + fields.dropLast().joined(separator: "\u{1F}")) == nil)
        #expect(Self.carried("rows:" + (["x"] + fields.dropFirst()).joined(separator: "\u{1F}")) == nil)
    }

    @Test(
        "a lease whose registration is gone (withdrawn by a draining worker, or another listener of the worker's since) is not used: the rows are written pending and listed"
    )
    func withdrawnRegistrationsLeaseNothing() throws {
        let fixture = try IntakePushTests.fixture()
        let worker = TestEnvironment.unique("worker")
        let (first, firstPID) = try listener(worker)
        defer { first.close() }
        // The worker's second listener (its first connection was lost) replaces the first's registration.
        let (second, secondPID) = try listener(worker)
        defer { second.close() }
        let registered = try Self.pool.withConnection { connection in
            try connection.query("SELECT pid FROM worker_listeners WHERE worker_id = $1", [worker]).rows.map {
                try $0.int(0)
            }
        }
        #expect(registered == [Int(secondPID)])

        // An intake that read the first listener before: no lease under it.
        try expectWrittenPendingAndListed(
            IntakePushTests.push(fixture, to: fixture.ios[0]), worker: worker,
            listener: firstPID, listening: first)

        // Withdrawn (the worker drains): no lease under the second either.
        try Self.pool.withConnection { try store.unregisterListeners(on: $0, worker: worker) }
        try expectWrittenPendingAndListed(
            IntakePushTests.push(fixture, to: fixture.ios[1]), worker: worker,
            listener: secondPID, listening: second)
        #expect(
            try Self.pool.withConnection { try store.listeners(on: $0) }.first { $0.pid == secondPID }?.lease == nil)
    }

    /// Writes `push` under `worker`'s lease as an intake that read `listener` with it, and expects its row pending and
    /// the notification `listening` hears to list it.
    func expectWrittenPendingAndListed(
        _ push: IntakePush, worker: String, listener: Int32, listening: DatabaseSession,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let writer = IntakeWriter(
            pool: Self.pool,
            notify: {
                DeliveryWakeUp(
                    channel: DeliveryStore.workerChannel(listener),
                    lease: DeliveryLease(worker: worker, seconds: 30, listener: listener))
            })
        _ = try writer.write([push])
        let heard = try listening.use { try $0.waitForNotifications(timeout: .seconds(5)) }
        #expect(
            heard.first.flatMap { WakeUpMessage(decoding: $0.payload) } == .listed(push.slots.map(\.id)),
            sourceLocation: sourceLocation)
        #expect(try rows(push.slots.map(\.id))[push.slots[0].id]?.state == "pending", sourceLocation: sourceLocation)
    }
}
