import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// LISTEN/NOTIFY as the worker's wake-up uses it, on the real database: a private one, since every intake
/// the other suites run notifies the shared database's channel.
@Suite(.requiresDatabase) struct NotificationTests {
    @Test func aListenerReceivesTheDeliveriesChannel() throws {
        let database = try QueueDatabase()
        let listener = try PostgresConnection(url: database.url)
        try listener.execute("LISTEN \(DeliveryStore.notificationChannel)")
        #expect(try listener.waitForNotifications(timeout: .milliseconds(50)).isEmpty)

        let sender = try PostgresConnection(url: database.url)
        try DeliveryStore().notifyWorkers(on: sender)
        let notifications = try listener.waitForNotifications(timeout: .seconds(5))
        #expect(notifications == [PostgresNotification(channel: DeliveryStore.notificationChannel)])
        #expect(DeliveryStore.wakes(notifications[0], listenerPID: try DeliveryStore().serverPID(on: listener)))
    }

    /// The producers in SQL write `WakeUpMessage`'s forms (herald_intake_push's are read in IntakePushTests and
    /// IntakeLeaseTests); the others send a plain wake-up.
    @Test func theProducersWriteWakeUpMessages() throws {
        let database = try QueueDatabase()
        let listener = try PostgresConnection(url: database.url)
        try listener.execute("LISTEN \(DeliveryStore.notificationChannel)")
        let sender = try PostgresConnection(url: database.url)
        _ = try sender.query("SELECT * FROM herald_partner_revoke($1)", [UUID()])
        try sender.execute("BEGIN")
        try DeliveryStore.notifyDue(on: sender)
        try sender.execute("COMMIT")
        try DeliveryStore().notifyWorkers(on: sender)
        var heard: [PostgresNotification] = []
        let deadline = Date().addingTimeInterval(5)
        while heard.count < 3, Date() < deadline { heard += try listener.waitForNotifications(timeout: .seconds(1)) }
        #expect(heard.map { WakeUpMessage(decoding: $0.payload) } == [.due, .due, .due])
    }

    @Test func aNotificationNamingOneWorkerWakesThatWorkerOnly() throws {
        let database = try QueueDatabase()
        let store = DeliveryStore()
        let sessions = (0..<2).map { _ in
            DeliveryStore.workerSession(
                url: database.url, role: DeliveryStore.listenerRole(serving: PushService.allCases),
                listen: true)
        }
        let listeners = try sessions.map { session in try session.use { try store.listenAsWorker(on: $0) } }
        let pids = listeners.sorted()
        // Other connections to the database are not listeners.
        #expect(try store.listenerPIDs(on: database.connection) == pids)

        // The worker named hears on its own channel; the other hears nothing (its thread is not woken).
        let sender = try PostgresConnection(url: database.url)
        try store.notifyWorkers(on: sender, listener: listeners[1])
        let named = try sessions[1].use { try $0.waitForNotifications(timeout: .seconds(5)) }
        #expect(named == [PostgresNotification(channel: DeliveryStore.workerChannel(listeners[1]))])
        #expect(named.map { DeliveryStore.wakes($0, listenerPID: listeners[1]) } == [true])
        #expect(named.map { DeliveryStore.wakes($0, listenerPID: listeners[0]) } == [false])
        #expect(try sessions[0].use { try $0.waitForNotifications(timeout: .milliseconds(200)) }.isEmpty)

        // One naming no worker wakes both.
        try store.notifyWorkers(on: sender)
        for (session, pid) in zip(sessions, listeners) {
            let notifications = try session.use { try $0.waitForNotifications(timeout: .seconds(5)) }
            #expect(notifications.map { DeliveryStore.wakes($0, listenerPID: pid) } == [true])
        }
        // An intake from before the workers' own channels names a worker in the shared channel's payload.
        let older = PostgresNotification(channel: DeliveryStore.notificationChannel, payload: String(listeners[1]))
        #expect(DeliveryStore.wakes(older, listenerPID: listeners[1]))
        #expect(!DeliveryStore.wakes(older, listenerPID: listeners[0]))
        // A channel sender's notification wakes no claimer.
        #expect(
            !DeliveryStore.wakes(
                PostgresNotification(channel: ChannelSyncStore.notificationChannel),
                listenerPID: pids[0]))

        // A worker that stops leaves the list at once.
        sessions[0].close()
        try waitFor("the stopped worker off the list", timeout: .seconds(5)) {
            try store.listenerPIDs(on: database.connection).count <= 1
        }
        #expect(
            try store.listenerPIDs(on: database.connection) == [try sessions[1].use { try store.serverPID(on: $0) }])
    }

    /// Behind a proxy the process id libpq is given at connect is the proxy's own; the worker asks the server.
    @Test(.enabled(if: PgBouncer.unavailableReason == nil, "\(PgBouncer.unavailableReason ?? "")"))
    func aListenerBehindPgBouncerInSessionModeIsNamedByItsServerProcess() throws {
        let database = try QueueDatabase()
        let bouncer = try PgBouncer(poolMode: "session")
        let store = DeliveryStore()
        let listener = DeliveryStore.workerSession(
            url: bouncer.url(database: database.name),
            role: DeliveryStore.listenerRole(serving: PushService.allCases), listen: true)
        let pid = try listener.use { try store.listenAsWorker(on: $0) }
        #expect(try store.listenerPIDs(on: database.connection) == [pid])

        try store.notifyWorkers(on: try PostgresConnection(url: database.url), listener: pid)
        let notifications = try listener.use { try $0.waitForNotifications(timeout: .seconds(5)) }
        #expect(notifications.map { DeliveryStore.wakes($0, listenerPID: pid) } == [true])
        listener.close()
    }

    /// A worker named must be able to claim whatever is due: with workers for one upstream each beside workers
    /// for both, only the latter are named; with none for both, no one is (every worker is woken).
    @Test func onlyListenersOfWorkersForEveryUpstreamAreNamed() throws {
        let database = try QueueDatabase()
        let store = DeliveryStore()
        func listener(_ role: String) throws -> (DatabaseSession, Int32) {
            let session = DeliveryStore.workerSession(url: database.url, role: role, listen: true)
            return (session, try session.use { try store.serverPID(on: $0) })
        }
        let (apnsOnly, _) = try listener(DeliveryStore.listenerRole(serving: [.apns]))
        let (fcmOnly, _) = try listener(DeliveryStore.listenerRole(serving: [.fcm]))
        #expect(try store.listenerPIDs(on: database.connection) == [])

        let (both, bothPID) = try listener(DeliveryStore.listenerRole(serving: [.fcm, .apns]))
        // A listener named without its upstreams (a worker from before they were named) counts as both.
        let (unnamed, unnamedPID) = try listener("listener")
        #expect(try store.listenerPIDs(on: database.connection) == [bothPID, unnamedPID].sorted())
        for session in [apnsOnly, fcmOnly, both, unnamed] { session.close() }
    }
}
