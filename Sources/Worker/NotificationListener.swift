import Foundation
import Postgres
import ServiceSupport
import Store
import Synchronization

/// LISTENs on the deliveries channel on a dedicated connection and wakes the claim loop on every
/// notification. When the connection fails it reconnects; meanwhile the claim loop's poll
/// fallback keeps work moving.
final class NotificationListener: @unchecked Sendable {
    private let databaseURL: String
    private let logger: Logger
    private let onNotification: @Sendable () -> Void
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    init(databaseURL: String, logger: Logger, onNotification: @escaping @Sendable () -> Void) {
        self.databaseURL = databaseURL
        self.logger = logger
        self.onNotification = onNotification
    }

    func start() {
        started = true
        let thread = Thread { [self] in run() }
        thread.name = "herald-listener"
        thread.start()
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        if started { finished.wait() }
    }

    private func run() {
        var connection: PostgresConnection?
        while !stopping.load(ordering: .relaxed) {
            do {
                if connection == nil {
                    let fresh = try PostgresConnection(url: databaseURL, applicationName: "herald-worker listener")
                    try fresh.execute("LISTEN \(DeliveryStore.notificationChannel)")
                    connection = fresh
                    // Work may have arrived while not listening.
                    onNotification()
                }
                // A short wait so that stop() is noticed promptly.
                if try !connection!.waitForNotifications(timeout: .milliseconds(250)).isEmpty {
                    onNotification()
                }
            } catch {
                if connection != nil {
                    logger.warning("notification listener lost its connection; reconnecting",
                                   [("error", .string(String(describing: error)))])
                }
                connection = nil
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        finished.signal()
    }
}
