import Foundation
import Testing

@testable import HeraldCore

/// What an Android 16 app needs to promote an activity's notification to a Live Update, derived per template.
@Suite struct AndroidLiveUpdateTests {
    static func progress(_ stages: Int, current: Int, _ progress: Double) -> LiveActivityState {
        .progress(
            .init(
                stages: (1...stages).map { "Stage \($0)" }, currentStage: current, progress: progress,
                statusText: nil))
    }

    static func status(_ label: String) -> LiveActivityState {
        .status(.init(statusLabel: label, statusVariant: .info, footnote: nil))
    }

    static func pairs(_ state: LiveActivityState, _ event: LiveActivityEvent = .update) -> [String] {
        AndroidLiveUpdate(state: state, event: event).dataPairs.map { "\($0.key)=\($0.value)" }
    }

    // MARK: Progress

    @Test func theStageIsCurrentStagePlusOneOverTheStageCount() {
        #expect(AndroidLiveUpdate(state: Self.progress(6, current: 2, 0.4), event: .update).shortCriticalText == "3/6")
        #expect(AndroidLiveUpdate(state: Self.progress(1, current: 0, 0), event: .start).shortCriticalText == "1/1")
        #expect(AndroidLiveUpdate(state: Self.progress(8, current: 7, 1), event: .update).shortCriticalText == "8/8")
    }

    @Test func theSegmentsAreOneEqualSegmentPerStage() {
        #expect(
            Self.pairs(Self.progress(3, current: 1, 0.5)) == [
                "shortCriticalText=2/3",
                #"progressSegments=[{"length":100},{"length":100},{"length":100}]"#,
                "progressValue=150", "progressMax=300",
            ])
        let update = AndroidLiveUpdate(state: Self.progress(8, current: 0, 0), event: .update)
        #expect(update.progress?.segmentLengths == Array(repeating: 100, count: 8))
        #expect(update.progress?.max == 800)
    }

    @Test func theValueIsTheProgressOfTheWholeRoundedToAUnit() {
        #expect(AndroidLiveUpdate(state: Self.progress(4, current: 2, 0.6), event: .update).progress?.value == 240)
        #expect(AndroidLiveUpdate(state: Self.progress(3, current: 0, 0.16), event: .update).progress?.value == 48)
        #expect(AndroidLiveUpdate(state: Self.progress(3, current: 2, 1), event: .update).progress?.value == 300)
        #expect(AndroidLiveUpdate(state: Self.progress(7, current: 0, 0.001), event: .update).progress?.value == 1)
    }

    /// The partner may send a `progress` outside the current stage; the bar then stops at the stage's edge, so
    /// the chip's "2/4" and the bar never disagree.
    @Test func theValueStaysInsideTheCurrentStagesSegment() {
        #expect(AndroidLiveUpdate(state: Self.progress(4, current: 3, 0.1), event: .update).progress?.value == 300)
        #expect(AndroidLiveUpdate(state: Self.progress(4, current: 0, 0.9), event: .update).progress?.value == 100)
        #expect(AndroidLiveUpdate(state: Self.progress(4, current: 1, 0.25), event: .update).progress?.value == 100)
    }

    // MARK: Status

    @Test func aShortStatusLabelIsTheChipTextAsItIs() {
        #expect(Self.pairs(Self.status("Paid")) == ["shortCriticalText=Paid"])
        #expect(AndroidLiveUpdate(state: Self.status("Sending"), event: .start).shortCriticalText == "Sending")
        #expect(AndroidLiveUpdate(state: Self.status("  Sent  "), event: .update).shortCriticalText == "Sent")
    }

    @Test func aLongStatusLabelIsCutToSevenCharactersEndingInAnEllipsis() {
        #expect(AndroidLiveUpdate(state: Self.status("Confirming"), event: .update).shortCriticalText == "Confir…")
        #expect(AndroidLiveUpdate(state: Self.status("Go to gate 4"), event: .update).shortCriticalText == "Go to…")
        #expect(AndroidLiveUpdate(state: Self.status("Shipped!"), event: .update).shortCriticalText == "Shippe…")
    }

    /// A flag is two scalars, a family emoji seven, "é" written as e + U+0301 two: each counts as one character
    /// and is never split.
    @Test func theCutFallsOnAGraphemeBoundary() throws {
        let family = "👨‍👩‍👧‍👦"
        let label = "🇳🇱" + family + "e\u{301}" + "abcdef"
        let text = try #require(AndroidLiveUpdate(state: Self.status(label), event: .update).shortCriticalText)
        #expect(text == "🇳🇱" + family + "e\u{301}" + "abc…")
        #expect(text.count == AndroidLiveUpdate.maxShortCriticalTextCharacters)
        #expect(text.unicodeScalars.count == 2 + 7 + 2 + 3 + 1)
        let accents = String(repeating: "e\u{301}", count: 8)
        let cut = try #require(AndroidLiveUpdate(state: Self.status(accents), event: .update).shortCriticalText)
        #expect(cut == String(repeating: "e\u{301}", count: 6) + "…")
    }

    // MARK: Countdown

    @Test func aCountdownCarriesItsDeadlineInUnixMillisecondsAndNoChipText() throws {
        let deadline = try #require(ISO8601.parse("2026-06-01T00:45:00Z"))
        let update = AndroidLiveUpdate(state: .countdown(.init(deadline: deadline, footnote: nil)), event: .update)
        #expect(update.shortCriticalText == nil)
        #expect(update.whenEpochMillis == 1_780_274_700_000)
        #expect(
            Self.pairs(.countdown(.init(deadline: deadline, footnote: nil)), .start) == [
                "whenEpochMillis=1780274700000", "chronometerCountDown=true",
            ])
    }

    // MARK: Ends

    /// An ended activity's notification is no longer ongoing, so it cannot be promoted: no chip, no chronometer;
    /// the final bar still shows.
    @Test func anEndCarriesTheFinalBarButNoChipOrChronometer() throws {
        #expect(
            Self.pairs(Self.progress(4, current: 3, 1), .end) == [
                #"progressSegments=[{"length":100},{"length":100},{"length":100},{"length":100}]"#,
                "progressValue=400", "progressMax=400",
            ])
        #expect(Self.pairs(Self.status("Deposit received"), .end).isEmpty)
        let deadline = try #require(ISO8601.parse("2026-06-01T00:45:00Z"))
        #expect(Self.pairs(.countdown(.init(deadline: deadline, footnote: nil)), .end).isEmpty)
    }
}
