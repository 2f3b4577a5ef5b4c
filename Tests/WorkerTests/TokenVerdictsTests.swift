import Foundation
import HeraldCore
import Testing

@testable import Store
@testable import Worker

/// TokenVerdicts as plain values: when a suspect verdict stands, waits, or makes a storm.
@Suite struct TokenVerdictsTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func delivery(_ token: String, _ service: PushService = .apns, environment: String = "production")
        -> ClaimedDelivery
    {
        ClaimedDelivery(
            id: UUID(), service: service, environment: environment, payloadBytes: [], attempts: 1, expiresAt: nil,
            token: token, verdict: .send, lane: 0, partnerID: UUID(), availableAt: start, bundleID: nil,
            activityEvent: nil, priority: nil, groupID: nil, member: nil, heldUntil: nil, collapseID: nil)
    }

    static func verdicts(stormTokens: Int = 3, window: Duration = .seconds(60)) -> TokenVerdicts {
        var configuration = TokenVerdictConfiguration()
        configuration.stormTokens = stormTokens
        configuration.stormWindow = window
        configuration.wait = .seconds(10)
        configuration.recheck = .seconds(60)
        configuration.maximumRecheck = .seconds(240)
        return TokenVerdicts(configuration: configuration)
    }

    @Test func aVerdictStandsOnlyWhenTheSameUpstreamAcceptsAnotherTokenAfterIt() {
        let verdicts = Self.verdicts()
        let suspect = Self.delivery("aa")
        // A success before the verdict proves nothing about it.
        #expect(verdicts.accepted(Self.delivery("bb")).isEmpty)
        guard case .held = verdicts.suspect(suspect, reason: "BadDeviceToken", now: Self.start) else {
            Issue.record("expected held")
            return
        }
        // Another environment is another upstream (APNs' sandbox host), and the same token proves nothing.
        #expect(verdicts.accepted(Self.delivery("cc", environment: "sandbox")).isEmpty)
        #expect(verdicts.accepted(Self.delivery("dd", .fcm)).isEmpty)
        #expect(verdicts.accepted(Self.delivery("aa")).isEmpty)
        let standing = verdicts.accepted(Self.delivery("bb"))
        #expect(standing.map(\.delivery.id) == [suspect.id])
        #expect(standing.first?.reason == "BadDeviceToken")
        #expect(standing.first?.at == Self.start)
        #expect(verdicts.heldCount == 0)
    }

    @Test func anUnconfirmedVerdictIsRecheckedLaterEachTimeLonger() {
        let verdicts = Self.verdicts()
        let suspect = Self.delivery("aa")
        _ = verdicts.suspect(suspect, reason: "BadDeviceToken", now: Self.start)
        #expect(verdicts.nextDeadline == Self.start.addingTimeInterval(10))
        #expect(verdicts.expired(now: Self.start.addingTimeInterval(9)).isEmpty)
        let expired = verdicts.expired(now: Self.start.addingTimeInterval(10))
        #expect(expired.map(\.delivery.id) == [suspect.id])
        #expect(verdicts.nextDeadline == nil)
        let now = Self.start.addingTimeInterval(10)
        let delays = (0..<4).map { _ in verdicts.recheckAt(expired[0], now: now).timeIntervalSince(now) }
        #expect(delays == [60, 120, 240, 240])
    }

    @Test func manyDistinctTokensWithNoSuccessMakeAStormThatReleasesTheWholeService() {
        let verdicts = Self.verdicts(stormTokens: 3)
        let sandbox = Self.delivery("s1", environment: "sandbox")
        let fcm = Self.delivery("f1", .fcm)
        _ = verdicts.suspect(sandbox, reason: "BadDeviceToken", now: Self.start)
        _ = verdicts.suspect(fcm, reason: "INVALID_ARGUMENT", now: Self.start)
        _ = verdicts.suspect(Self.delivery("aa"), reason: "BadDeviceToken", now: Self.start)
        _ = verdicts.suspect(Self.delivery("bb"), reason: "BadDeviceToken", now: Self.start)
        // The same token again is not another token; nor is one of another environment (another upstream).
        guard case .held = verdicts.suspect(Self.delivery("aa"), reason: "BadDeviceToken", now: Self.start) else {
            Issue.record("one token twice is not a storm")
            return
        }
        guard
            case .storm(let reason, let storms, let released) = verdicts.suspect(
                Self.delivery("cc"), reason: "BadDeviceToken", now: Self.start.addingTimeInterval(1))
        else {
            Issue.record("expected a storm")
            return
        }
        #expect(reason == "token_storm_BadDeviceToken")
        #expect(storms == 1)
        // Every APNs row held, sandbox included; the FCM one stays.
        #expect(released.count == 5)
        #expect(released.contains { $0.delivery.id == sandbox.id })
        #expect(!released.contains { $0.delivery.id == fcm.id })
        #expect(verdicts.heldCount == 1)
        // A second storm with no success between is counted on; a success starts again.
        for token in ["c1", "c2"] {
            _ = verdicts.suspect(Self.delivery(token), reason: "BadDeviceToken", now: Self.start)
        }
        if case .storm(_, let again, _) = verdicts.suspect(
            Self.delivery("c3"), reason: "BadDeviceToken", now: Self.start)
        {
            #expect(again == 2)
        } else {
            Issue.record("expected a second storm")
        }
        _ = verdicts.accepted(Self.delivery("ok"))
        for token in ["d1", "d2"] {
            _ = verdicts.suspect(Self.delivery(token), reason: "BadDeviceToken", now: Self.start)
        }
        if case .storm(_, let fresh, _) = verdicts.suspect(
            Self.delivery("d3"), reason: "BadDeviceToken", now: Self.start)
        {
            #expect(fresh == 1)
        } else {
            Issue.record("expected a storm after the success")
        }
    }

    @Test func aVerdictAfterAStormIsNotConfirmedByTheNextSuccessButTriedAgain() {
        let verdicts = Self.verdicts(stormTokens: 2)
        _ = verdicts.suspect(Self.delivery("a1"), reason: "BadDeviceToken", now: Self.start)
        guard case .storm = verdicts.suspect(Self.delivery("a2"), reason: "BadDeviceToken", now: Self.start) else {
            Issue.record("expected a storm")
            return
        }
        // The paused upstream's probe is refused while the setup is still wrong; then it is fixed, and a send works.
        let probe = Self.delivery("p1")
        guard case .held = verdicts.suspect(probe, reason: "BadDeviceToken", now: Self.start.addingTimeInterval(1))
        else {
            Issue.record("expected held")
            return
        }
        #expect(verdicts.accepted(Self.delivery("ok")).isEmpty)
        // Its wait has ended: the next claim step defers it for a recheck, attempts unspent.
        #expect(verdicts.expired(now: Self.start.addingTimeInterval(1)).map(\.delivery.id) == [probe.id])
        #expect(verdicts.heldCount == 0)
        // Refused again with the upstream working, the verdict is held and the next success confirms it.
        _ = verdicts.suspect(probe, reason: "BadDeviceToken", now: Self.start.addingTimeInterval(70))
        #expect(verdicts.accepted(Self.delivery("ok")).map(\.delivery.id) == [probe.id])
    }

    @Test func verdictsOutsideTheWindowDoNotCount() {
        let verdicts = Self.verdicts(stormTokens: 3, window: .seconds(60))
        _ = verdicts.suspect(Self.delivery("a1"), reason: "BadDeviceToken", now: Self.start)
        _ = verdicts.suspect(Self.delivery("a2"), reason: "BadDeviceToken", now: Self.start.addingTimeInterval(30))
        guard
            case .held = verdicts.suspect(
                Self.delivery("a3"), reason: "BadDeviceToken",
                now: Self.start.addingTimeInterval(61))
        else {
            Issue.record("the first verdict left the window")
            return
        }
        guard
            case .storm = verdicts.suspect(
                Self.delivery("a4"), reason: "BadDeviceToken",
                now: Self.start.addingTimeInterval(62))
        else {
            Issue.record("three within the window")
            return
        }
    }

    @Test func aSuccessClearsTheStormCount() {
        let verdicts = Self.verdicts(stormTokens: 3)
        _ = verdicts.suspect(Self.delivery("a1"), reason: "BadDeviceToken", now: Self.start)
        _ = verdicts.suspect(Self.delivery("a2"), reason: "BadDeviceToken", now: Self.start)
        #expect(verdicts.accepted(Self.delivery("ok")).count == 2)
        guard case .held = verdicts.suspect(Self.delivery("a3"), reason: "BadDeviceToken", now: Self.start) else {
            Issue.record("a success in between: no storm")
            return
        }
        #expect(verdicts.releaseAll(.fcm).isEmpty)
        #expect(verdicts.releaseAll().count == 1)
    }
}
