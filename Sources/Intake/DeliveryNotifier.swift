import Foundation
import Postgres
import ServiceSupport
import Store

/// Tells the workers that new deliveries are due (NOTIFY herald_deliveries), from its own thread
/// and connection, outside the enqueue transaction, and at most once per `minimumInterval`.
///
/// A NOTIFY inside the enqueue would serialize every commit on Postgres' notification queue lock
/// (docs/queue-notes: inserts capped near 500-2,000/s in other queues); one coalesced NOTIFY per
/// few milliseconds costs little and still wakes a worker within milliseconds. If a
/// NOTIFY is lost (connection failure), the workers' poll fallback finds the rows.
final class DeliveryNotifier: @unchecked Sendable {
    private let databaseURL: String
    private let minimumInterval: TimeInterval
    private let logger: Logger
    private let condition = NSCondition()
    private var requested = false
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    init(databaseURL: String, minimumInterval: Duration = .milliseconds(5), logger: Logger) {
        self.databaseURL = databaseURL
        self.minimumInterval = minimumInterval / .seconds(1)
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "herald-notifier"
        self.thread = thread
        thread.start()
    }

    /// Asks for a NOTIFY soon (cheap: sets a flag).
    func signal() {
        condition.lock()
        requested = true
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        if thread != nil { finished.wait() }
    }

    private func run() {
        var connection: PostgresConnection?
        let store = DeliveryStore()
        while true {
            condition.lock()
            while !requested && !stopping { condition.wait() }
            if stopping {
                condition.unlock()
                break
            }
            requested = false
            condition.unlock()
            do {
                if connection == nil || connection?.isHealthy == false {
                    connection = try PostgresConnection(url: databaseURL, applicationName: "herald-intake notifier")
                }
                try store.notifyWorkers(on: connection!)
            } catch {
                connection = nil
                logger.warning("notifying workers failed; they will find the rows by polling",
                               [("error", .string(String(describing: error)))])
            }
            Thread.sleep(forTimeInterval: minimumInterval)
        }
        finished.signal()
    }
}
