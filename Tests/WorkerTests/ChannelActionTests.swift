import Foundation
import Testing

@testable import Store
@testable import Worker

/// ChannelAction as plain values: what a leased broadcast channel needs from APNs next.
@Suite struct ChannelActionTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func channel(
        _ status: ChannelStatus, apnsID: String? = "c2xvdA==", version: Int = 1, sent: Int = 1,
        expiresIn: TimeInterval = 3_600, deleteIn: TimeInterval? = nil
    ) -> LeasedChannel {
        LeasedChannel(
            id: UUID(), status: status, apnsChannelID: apnsID, environment: "production", version: version,
            sentVersion: sent, payload: "{\"aps\":{}}", priority: 10,
            expiresAt: now.addingTimeInterval(expiresIn), deleteAt: deleteIn.map { now.addingTimeInterval($0) },
            attempts: 1)
    }

    @Test func aChannelAPNsHasNotMadeIsCreatedEvenWithChangesWaiting() {
        #expect(ChannelAction.next(for: channel(.opening, apnsID: nil), now: now) == .create)
        #expect(ChannelAction.next(for: channel(.opening, apnsID: nil, version: 3), now: now) == .create)
    }

    @Test func theNewestChangeIsBroadcastStoredUntilTheTTL() {
        let action = ChannelAction.next(for: channel(.open, version: 4, sent: 2), now: now)
        #expect(
            action
                == .broadcast(
                    apnsChannelID: "c2xvdA==", version: 4, payload: "{\"aps\":{}}", priority: 10,
                    expiration: Int(now.timeIntervalSince1970) + 3_600))
    }

    @Test func anEndIsBroadcastStoredUntilItsDismissalThenTheChannelIsDeletedWhenThatComes() {
        let end = ChannelAction.next(for: channel(.ending, version: 5, sent: 4, deleteIn: 600), now: now)
        #expect(
            end
                == .broadcast(
                    apnsChannelID: "c2xvdA==", version: 5, payload: "{\"aps\":{}}", priority: 10,
                    expiration: Int(now.timeIntervalSince1970) + 600))
        #expect(ChannelAction.next(for: channel(.ending, version: 5, sent: 5, deleteIn: 600), now: now) == .release)
        #expect(
            ChannelAction.next(for: channel(.ending, version: 5, sent: 5, deleteIn: 0), now: now)
                == .delete(apnsChannelID: "c2xvdA=="))
        #expect(
            ChannelAction.next(for: channel(.ending, version: 5, sent: 5, deleteIn: -60), now: now)
                == .delete(apnsChannelID: "c2xvdA=="))
    }

    @Test func anEndingChannelAPNsNeverMadeIsClosedWithoutACall() {
        #expect(ChannelAction.next(for: channel(.ending, apnsID: nil, version: 2, sent: 2), now: now) == .close)
    }

    @Test func nothingDueOrFinishedIsReleased() {
        #expect(ChannelAction.next(for: channel(.open), now: now) == .release)
        #expect(ChannelAction.next(for: channel(.ended), now: now) == .release)
        #expect(ChannelAction.next(for: channel(.failed), now: now) == .release)
    }

    @Test func anExpirationAlreadyPastStillLetsAPNsKeepTheMessageASecond() {
        let late = ChannelAction.next(for: channel(.ending, version: 2, sent: 1, deleteIn: -30), now: now)
        #expect(
            late
                == .broadcast(
                    apnsChannelID: "c2xvdA==", version: 2, payload: "{\"aps\":{}}", priority: 10,
                    expiration: Int(now.timeIntervalSince1970) + 1))
    }
}
