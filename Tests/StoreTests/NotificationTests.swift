import Foundation
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
        let channels = try listener.waitForNotifications(timeout: .seconds(5))
        #expect(channels == [DeliveryStore.notificationChannel])
    }
}
