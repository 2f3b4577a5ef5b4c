import Foundation
import HeraldCore
import HeraldTestSupport
import ServiceSupport
import Store
import Synchronization
import Testing

@testable import Worker

/// The completer's spacing (`CompleterConfiguration.minimumInterval`, HERALD_COMPLETION_INTERVAL_MS):
/// outcomes that arrive within the interval after a statement are recorded together by the next one. The interval
/// is measured on an injected clock that stands still until the test moves it, so every outcome added meanwhile
/// arrives within it however slowly the test runs.
@Suite("Completer interval", .requiresDatabase)
struct CompleterIntervalTests {
    @Test("outcomes arriving after a statement wait for the interval and go out in one statement")
    func outcomesWithinTheIntervalShareAStatement() throws {
        let db = try QueueDatabase()
        var configuration = CompleterConfiguration()
        configuration.minimumInterval = .milliseconds(200)
        let clock = TestClock()
        let metrics = WorkerMetrics()
        let committed = Mutex<[UUID]>([])
        let completer = Completer(
            configuration: configuration, worker: "interval-test",
            session: DeliveryStore.workerSession(
                url: db.url, role: "completer", listen: false,
                statementTimeout: .seconds(10)),
            metrics: metrics, logger: Logger(component: "test", minimum: .error), clock: clock
        ) { ids, _ in committed.withLock { $0 += ids } }
        completer.start()
        defer { completer.stop() }
        // Ids no row has: the statement records nothing, but it runs and is counted.
        let ids = (0..<6).map { _ in UUID() }
        completer.add(CompletedDelivery(id: ids[0], outcome: .sent, token: nil))
        try waitFor("the first statement") { committed.withLock { $0.count } == 1 }
        for id in ids.dropFirst() {
            completer.add(CompletedDelivery(id: id, outcome: .sent, token: nil))
        }
        #expect(committed.withLock { $0.count } == 1)
        clock.advance(configuration.minimumInterval)
        try waitFor("the rest", timeout: .seconds(10)) { committed.withLock { $0.count } == ids.count }
        #expect(committed.withLock { $0 } == ids)
        let statements = metrics.render().split(separator: "\n").first {
            $0.hasPrefix("herald_worker_completion_batches_total ")
        }
        #expect(statements == "herald_worker_completion_batches_total 2")
    }
}
