import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Worker

/// `UpstreamPauses` as plain values on a test clock: a pause of one APNs environment leaves the upstream open to
/// the claim, defers that environment's rows, lets exactly one probe through at its end, and never strands a
/// probe that decided nothing.
@Suite struct UpstreamPausesTests {
    let clock = TestClock(Date(timeIntervalSince1970: 1_000_000))
    var pauses: UpstreamPauses {
        UpstreamPauses(backoff: ExponentialBackoff(base: .seconds(1), maximum: .seconds(8)), clock: clock)
    }
    let sandbox = PauseScope(.apns, environment: "sandbox")
    let production = PauseScope(.apns, environment: "production")

    @Test func anEnvironmentPauseDefersItsRowsAloneAndLetsOneProbeThroughAtItsEnd() {
        let pauses = pauses
        let until = pauses.fault(sandbox, reason: "BadEnvironmentKeyIdInToken", wasProbe: false)
        #expect(until == clock.now.addingTimeInterval(1))
        // The claim still takes APNs: the whole upstream is open, production too.
        #expect(pauses.mode(PauseScope(.apns)) == .open)
        #expect(pauses.admit(production) == .send)
        #expect(pauses.admit(sandbox) == .wait(until: until, reason: "BadEnvironmentKeyIdInToken"))
        #expect(PauseScope(.apns, environment: "sandbox").name == "apns-sandbox")

        clock.advance(by: 1)
        #expect(pauses.admit(sandbox) == .probe)
        // While the probe is out the others wait one first step, not for a pause that has ended.
        #expect(
            pauses.admit(sandbox) == .wait(until: clock.now.addingTimeInterval(1), reason: "BadEnvironmentKeyIdInToken")
        )
        #expect(pauses.accepted(sandbox))
        #expect(pauses.admit(sandbox) == .send)
        #expect(pauses.current.isEmpty)
    }

    @Test func aProbeRefusedAgainDoublesThePauseAndOneThatDecidedNothingIsNotStranded() {
        let pauses = pauses
        _ = pauses.fault(sandbox, reason: "BadEnvironmentKeyIdInToken", wasProbe: false)
        clock.advance(by: 1)
        #expect(pauses.admit(sandbox) == .probe)
        let again = pauses.fault(sandbox, reason: "BadEnvironmentKeyIdInToken", wasProbe: true)
        #expect(again == clock.now.addingTimeInterval(2))

        clock.advance(by: 2)
        #expect(pauses.admit(sandbox) == .probe)
        // Answered with another scope's fault: this scope waits one more step instead of for a probe not out.
        pauses.probeUndecided(sandbox)
        #expect(pauses.current[sandbox]?.probeInFlight == false)
        #expect(pauses.current[sandbox]?.until == clock.now.addingTimeInterval(4))
        // No probe out: probeUndecided changes nothing, and never makes a pause.
        pauses.probeUndecided(production)
        #expect(pauses.current[production] == nil)
    }

    @Test func aClaimThatFoundNoRowOfAProbingEnvironmentEndsItsPause() {
        let pauses = pauses
        _ = pauses.fault(sandbox, reason: "BadEnvironmentKeyIdInToken", wasProbe: false)
        _ = pauses.fault(PauseScope(.fcm), reason: "THIRD_PARTY_AUTH_ERROR", wasProbe: false)
        pauses.endProbes(of: .apns)
        #expect(pauses.current[sandbox] != nil, "still paused: not probing yet")
        clock.advance(by: 1)
        pauses.endProbes(of: .apns)
        #expect(pauses.current[sandbox] == nil)
        #expect(pauses.current[PauseScope(.fcm)] != nil, "a whole upstream's pause ends by its probe claim alone")
    }
}
