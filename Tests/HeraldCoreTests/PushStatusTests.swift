import Foundation
import HeraldCore
import Testing

@Suite struct PushStatusTests {
    static let now = Fixtures.now
    static let later = now.addingTimeInterval(3600)
    static let earlier = now.addingTimeInterval(-3600)

    @Test func rawValuesAreTheAPIStrings() {
        #expect(PushStatus.queued.rawValue == "queued")
        #expect(PushStatus.scheduled.rawValue == "scheduled")
        #expect(PushStatus.sending.rawValue == "sending")
        #expect(PushStatus.completed.rawValue == "completed")
        #expect(PushStatus(rawValue: "done") == nil)
    }

    @Test func nothingPendingIsCompleted() {
        #expect(PushStatus.of(deliveries: 3, finished: 3, sendAt: nil, now: Self.now) == .completed)
        #expect(PushStatus.of(deliveries: 3, finished: 3, sendAt: Self.later, now: Self.now) == .completed)
        // A request that resolved to no deliveries (all missing or suppressed) is already complete.
        #expect(PushStatus.of(deliveries: 0, finished: 0, sendAt: nil, now: Self.now) == .completed)
        #expect(PushStatus.of(deliveries: 0, finished: 0, sendAt: Self.later, now: Self.now) == .completed)
    }

    @Test func someOutcomesButSomePendingIsSending() {
        #expect(PushStatus.of(deliveries: 3, finished: 1, sendAt: nil, now: Self.now) == .sending)
        #expect(PushStatus.of(deliveries: 3, finished: 2, sendAt: Self.later, now: Self.now) == .sending)
    }

    @Test func nothingSentYet() {
        #expect(PushStatus.of(deliveries: 3, finished: 0, sendAt: Self.later, now: Self.now) == .scheduled)
        #expect(PushStatus.of(deliveries: 3, finished: 0, sendAt: nil, now: Self.now) == .queued)
        #expect(PushStatus.of(deliveries: 3, finished: 0, sendAt: Self.earlier, now: Self.now) == .queued)
        #expect(PushStatus.of(deliveries: 3, finished: 0, sendAt: Self.now, now: Self.now) == .queued)
        // The same request becomes queued once its time has come.
        #expect(
            PushStatus.of(deliveries: 3, finished: 0, sendAt: Self.later, now: Self.later.addingTimeInterval(1))
                == .queued)
    }
}
