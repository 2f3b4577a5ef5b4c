import Foundation
import HeraldCore
import Testing

@testable import Worker

/// The claimer's table of held rows keeps its count of bulk-lane rows as rows come and go
/// (the claim's bulk allowance reads the count instead of scanning the table).
struct WorkerHoldTests {
    private func row(bulk: Bool) -> DeliveryWorker.Held {
        DeliveryWorker.Held(
            service: .apns, leaseID: UUID(), leasedAt: Date(timeIntervalSince1970: 0),
            isBulk: bulk)
    }

    @Test func theBulkCountFollowsInsertsReplacementsAndRemovals() {
        var hold = DeliveryWorker.Hold()
        let ids = (0..<4).map { _ in UUID() }
        hold.insert(row(bulk: true), for: ids[0])
        hold.insert(row(bulk: true), for: ids[1])
        hold.insert(row(bulk: false), for: ids[2])
        #expect(hold.bulkCount == 2 && hold.held.count == 3)
        // The same id claimed again (after a rescue) replaces its entry: counted once, as its new lane.
        hold.insert(row(bulk: false), for: ids[1])
        #expect(hold.bulkCount == 1 && hold.held.count == 3)
        hold.insert(row(bulk: true), for: ids[2])
        #expect(hold.bulkCount == 2)
        // Removing an id that is not held (recorded twice) changes nothing.
        hold.remove(ids[3])
        hold.remove(ids[0])
        hold.remove(ids[0])
        #expect(hold.bulkCount == 1 && hold.held.count == 2)
        hold.renew(ids[2], at: Date(timeIntervalSince1970: 60))
        #expect(hold.held[ids[2]]?.leasedAt == Date(timeIntervalSince1970: 60) && hold.bulkCount == 1)
        hold.remove(ids[1])
        hold.remove(ids[2])
        #expect(hold.bulkCount == 0 && hold.held.isEmpty)
    }
}
