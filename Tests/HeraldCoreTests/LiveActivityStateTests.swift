import Foundation
import Testing

@testable import HeraldCore

@Suite struct LiveActivityStateTests {
    static func decode(_ template: LiveActivityTemplate, _ document: String) throws(HeraldError) -> LiveActivityState {
        let value: JSONValue
        do { value = try JSONParser.parse(document) } catch { fatalError("bad test JSON: \(document)") }
        return try LiveActivityState.decode(template: template, json: value)
    }

    static let progress = #"{"stages":["Ordered","Packed","Shipped"],"currentStage":1,"progress":0.5"#

    /// A progress state with `extra` members after the three required ones (or replacing them).
    static func progressState(_ extra: String = "") throws(HeraldError) -> LiveActivityState {
        try decode(.progress, progress + extra + "}")
    }

    static func status(_ members: String) throws(HeraldError) -> LiveActivityState {
        try decode(.status, "{\(members)}")
    }
    static func countdown(_ members: String) throws(HeraldError) -> LiveActivityState {
        try decode(.countdown, "{\(members)}")
    }

    // MARK: Templates

    @Test func attributesTypesAreTheWidgetStructNames() {
        #expect(LiveActivityTemplate.progress.attributesType == "MiniAppProgressAttributes")
        #expect(LiveActivityTemplate.status.attributesType == "MiniAppStatusAttributes")
        #expect(LiveActivityTemplate.countdown.attributesType == "MiniAppCountdownAttributes")
        #expect(LiveActivityTemplate.allCases.map(\.rawValue) == ["progress", "status", "countdown"])
    }

    @Test func stateTemplateMatchesItsCase() throws {
        #expect(try Self.progressState().template == .progress)
        #expect(try Self.status(#""statusLabel":"a","statusVariant":"info""#).template == .status)
        #expect(try Self.countdown(#""deadline":"2026-06-01T00:00:00Z""#).template == .countdown)
    }

    // MARK: Progress

    @Test func progressDecodes() throws {
        let state = try Self.progressState(#","statusText":"On its way""#)
        #expect(
            state
                == .progress(
                    .init(
                        stages: ["Ordered", "Packed", "Shipped"], currentStage: 1, progress: 0.5,
                        statusText: "On its way")))
    }

    @Test func progressBoundsAreInclusive() throws {
        #expect(
            try Self.decode(.progress, #"{"stages":["a"],"currentStage":0,"progress":0}"#)
                == .progress(.init(stages: ["a"], currentStage: 0, progress: 0)))
        _ = try Self.decode(.progress, #"{"stages":["a","b","c","d","e","f","g","h"],"currentStage":7,"progress":1}"#)
        _ = try Self.progressState(#","statusText":"\#(String(repeating: "😀", count: 200))""#)
        _ = try Self.decode(
            .progress, #"{"stages":["\#(String(repeating: "😀", count: 40))"],"currentStage":0,"progress":1}"#)
    }

    @Test func stagesRules() {
        expectHeraldError(status: 400, code: "missing_field", field: "state.stages") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":"Ordered","currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 422, code: "invalid_state", field: "state.stages") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":[],"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 422, code: "invalid_state", field: "state.stages") { () throws(HeraldError) in
            _ = try Self.decode(
                .progress, #"{"stages":["a","b","c","d","e","f","g","h","i"],"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[2]") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a","b",3],"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[1]") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a",""],"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[0]") { () throws(HeraldError) in
            _ = try Self.decode(
                .progress, #"{"stages":["\#(String(repeating: "a", count: 41))"],"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[0]") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["   "],"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[1]") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a","b\u202Ec"],"currentStage":0,"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[0]") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a\nb"],"currentStage":0,"progress":0}"#)
        }
    }

    @Test func currentStageRules() {
        expectHeraldError(status: 400, code: "missing_field", field: "state.currentStage") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a"],"progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.currentStage") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a"],"currentStage":"0","progress":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.currentStage") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a","b"],"currentStage":0.5,"progress":0}"#)
        }
        for stage in ["-1", "3", "1e300"] {
            let error = expectHeraldError(status: 422, code: "invalid_state", field: "state.currentStage") {
                () throws(HeraldError) in
                _ = try Self.decode(.progress, #"{"stages":["a","b","c"],"currentStage":\#(stage),"progress":0}"#)
            }
            #expect(error?.message.contains("0 to 2") == true)
        }
    }

    @Test func progressRules() {
        expectHeraldError(status: 400, code: "missing_field", field: "state.progress") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a"],"currentStage":0}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.progress") { () throws(HeraldError) in
            _ = try Self.decode(.progress, #"{"stages":["a"],"currentStage":0,"progress":"50%"}"#)
        }
        for value in ["1.01", "-0.01", "100"] {
            expectHeraldError(status: 422, code: "invalid_state", field: "state.progress") { () throws(HeraldError) in
                _ = try Self.decode(.progress, #"{"stages":["a"],"currentStage":0,"progress":\#(value)}"#)
            }
        }
    }

    @Test func statusTextRules() throws {
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusText") { () throws(HeraldError) in
            _ = try Self.progressState(#","statusText":"\#(String(repeating: "a", count: 201))""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusText") { () throws(HeraldError) in
            _ = try Self.progressState(#","statusText":7"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusText") { () throws(HeraldError) in
            _ = try Self.progressState(#","statusText":"a\u0000b""#)
        }
        guard case .progress(let state) = try Self.progressState(#","statusText":null"#) else {
            Issue.record("template"); return
        }
        #expect(state.statusText == nil)
    }

    @Test func unknownKeysAreRefusedWithTheirPath() {
        expectHeraldError(status: 400, code: "unknown_field", field: "state.footnote") { () throws(HeraldError) in
            _ = try Self.progressState(#","footnote":"not a progress key""#)
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "state.displayName") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":"a","statusVariant":"info","displayName":"Bank""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state") { () throws(HeraldError) in
            _ = try LiveActivityState.decode(template: .status, json: .array([]))
        }
    }

    // MARK: Status

    @Test func statusDecodesEveryVariant() throws {
        for variant in LiveActivityState.StatusVariant.allCases {
            #expect(
                try Self.status(#""statusLabel":"Deposit","statusVariant":"\#(variant.rawValue)","footnote":"f""#)
                    == .status(.init(statusLabel: "Deposit", statusVariant: variant, footnote: "f")))
        }
        #expect(LiveActivityState.StatusVariant.allCases.map(\.rawValue) == ["pending", "success", "failure", "info"])
    }

    @Test func statusRules() {
        expectHeraldError(status: 400, code: "missing_field", field: "state.statusLabel") { () throws(HeraldError) in
            _ = try Self.status(#""statusVariant":"info""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusLabel") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":"\#(String(repeating: "a", count: 61))","statusVariant":"info""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusLabel") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":"","statusVariant":"info""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusLabel") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":" ","statusVariant":"info""#)
        }
        expectHeraldError(status: 400, code: "missing_field", field: "state.statusVariant") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":"a""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusVariant") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":"a","statusVariant":1"#)
        }
        for variant in ["warning", "Pending", ""] {
            let error = expectHeraldError(status: 422, code: "invalid_state", field: "state.statusVariant") {
                () throws(HeraldError) in
                _ = try Self.status(#""statusLabel":"a","statusVariant":"\#(variant)""#)
            }
            #expect(error?.message.contains("pending, success, failure, info") == true)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.footnote") { () throws(HeraldError) in
            _ = try Self.status(
                #""statusLabel":"a","statusVariant":"info","footnote":"\#(String(repeating: "a", count: 201))""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.footnote") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":"a","statusVariant":"info","footnote":"a\nb""#)
        }
    }

    // MARK: Countdown

    @Test func countdownReadsISO8601InAnyOffsetAndKeepsWholeSeconds() throws {
        let utc = try #require(ISO8601.parse("2026-06-01T00:45:00Z"))
        #expect(try Self.countdown(#""deadline":"2026-06-01T02:45:00+02:00""#) == .countdown(.init(deadline: utc)))
        #expect(try Self.countdown(#""deadline":"2026-06-01T00:45:00.4Z""#) == .countdown(.init(deadline: utc)))
        #expect(
            try Self.countdown(#""deadline":"2026-06-01T00:44:59.6Z","footnote":"x""#)
                == .countdown(.init(deadline: utc, footnote: "x")))
    }

    @Test func countdownRules() {
        expectHeraldError(status: 400, code: "missing_field", field: "state.deadline") { () throws(HeraldError) in
            _ = try Self.countdown(#""footnote":"x""#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.deadline") { () throws(HeraldError) in
            _ = try Self.countdown(#""deadline":1780274700"#)
        }
        for bad in ["tomorrow", "2026-02-30T00:00:00Z", "2026-06-01T00:45:00", "2026-06-01"] {
            expectHeraldError(status: 422, code: "invalid_state", field: "state.deadline") { () throws(HeraldError) in
                _ = try Self.countdown(#""deadline":"\#(bad)""#)
            }
        }
    }

    // MARK: Stored form

    @Test func storedFormUsesPartnerNamesAndOmitsNil() throws {
        #expect(
            JSONWriter.string(try Self.progressState(#","statusText":"s""#).json)
                == #"{"stages":["Ordered","Packed","Shipped"],"currentStage":1,"progress":0.5,"statusText":"s"}"#)
        #expect(
            JSONWriter.string(try Self.progressState().json)
                == #"{"stages":["Ordered","Packed","Shipped"],"currentStage":1,"progress":0.5}"#)
        #expect(
            JSONWriter.string(try Self.status(#""statusVariant":"failure","statusLabel":"x""#).json)
                == #"{"statusLabel":"x","statusVariant":"failure"}"#)
        #expect(
            JSONWriter.string(try Self.countdown(#""footnote":"f","deadline":"2026-06-01T02:45:00+02:00""#).json)
                == #"{"deadline":"2026-06-01T00:45:00.000Z","footnote":"f"}"#)
    }

    @Test func storedFormDecodesBackToTheSameState() throws {
        for template in LiveActivityTemplate.allCases {
            for event in LiveActivityEvent.allCases {
                let state = LiveActivityFixtures.state(template, event)
                // Through the bytes, as the database keeps them.
                let stored = try JSONParser.parse(JSONWriter.bytes(state.json))
                #expect(try LiveActivityState.decode(template: template, json: stored) == state)
            }
        }
    }

    @Test func decodingUnderAnotherTemplateFails() {
        expectHeraldError(status: 400, code: "unknown_field", field: "state.stages") { () throws(HeraldError) in
            _ = try LiveActivityState.decode(
                template: .status, json: LiveActivityFixtures.state(.progress, .start).json)
        }
    }

    // MARK: Merge

    static func patch(_ document: String) -> JSONValue { (try? JSONParser.parse(document)) ?? .null }

    @Test func aPartialPatchKeepsTheRest() throws {
        let state = try Self.progressState(#","statusText":"Packed""#)
        #expect(
            try state.merged(with: Self.patch(#"{"progress":0.9}"#))
                == .progress(
                    .init(
                        stages: ["Ordered", "Packed", "Shipped"], currentStage: 1, progress: 0.9, statusText: "Packed"))
        )
        #expect(
            try state.merged(with: Self.patch(#"{"currentStage":2,"statusText":"Shipped"}"#))
                == .progress(
                    .init(
                        stages: ["Ordered", "Packed", "Shipped"], currentStage: 2, progress: 0.5, statusText: "Shipped")
                ))
        #expect(try state.merged(with: Self.patch("{}")) == state)
    }

    @Test func aPatchAddsAnOptionalFieldThatWasAbsent() throws {
        let state = try Self.status(#""statusLabel":"a","statusVariant":"info""#)
        #expect(
            try state.merged(with: Self.patch(#"{"footnote":"now set"}"#))
                == .status(.init(statusLabel: "a", statusVariant: .info, footnote: "now set")))
    }

    @Test func nullClearsAnOptionalField() throws {
        let progress = try Self.progressState(#","statusText":"Packed""#)
        #expect(
            try progress.merged(with: Self.patch(#"{"statusText":null}"#))
                == .progress(.init(stages: ["Ordered", "Packed", "Shipped"], currentStage: 1, progress: 0.5)))
        let countdown = try Self.countdown(#""deadline":"2026-06-01T00:45:00Z","footnote":"x""#)
        guard case .countdown(let merged) = try countdown.merged(with: Self.patch(#"{"footnote":null}"#)) else {
            Issue.record("template"); return
        }
        #expect(merged.footnote == nil)
        // Clearing what is already absent is harmless.
        #expect(
            try Self.progressState().merged(with: Self.patch(#"{"statusText":null}"#)) == (try Self.progressState()))
    }

    @Test func nullCannotClearARequiredField() throws {
        let state = try Self.progressState()
        for key in ["stages", "currentStage", "progress"] {
            expectHeraldError(status: 400, code: "invalid_field", field: "state.\(key)") { () throws(HeraldError) in
                _ = try state.merged(with: Self.patch(#"{"\#(key)":null}"#))
            }
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.statusVariant") { () throws(HeraldError) in
            _ = try Self.status(#""statusLabel":"a","statusVariant":"info""#).merged(
                with: Self.patch(#"{"statusVariant":null}"#))
        }
    }

    @Test func theMergedResultIsValidatedAsAWhole() throws {
        let state = try Self.decode(.progress, #"{"stages":["a","b","c"],"currentStage":2,"progress":0.5}"#)
        expectHeraldError(status: 422, code: "invalid_state", field: "state.currentStage") { () throws(HeraldError) in
            _ = try state.merged(with: Self.patch(#"{"stages":["a","b"]}"#))
        }
        // Shrinking the stages and moving back together is fine.
        #expect(
            try state.merged(with: Self.patch(#"{"stages":["a","b"],"currentStage":1}"#))
                == .progress(.init(stages: ["a", "b"], currentStage: 1, progress: 0.5)))
        expectHeraldError(status: 422, code: "invalid_state", field: "state.progress") { () throws(HeraldError) in
            _ = try state.merged(with: Self.patch(#"{"progress":2}"#))
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[0]") { () throws(HeraldError) in
            _ = try state.merged(with: Self.patch(#"{"stages":[""],"currentStage":0}"#))
        }
    }

    @Test func aPatchIsCheckedAgainstTheActivitysTemplate() throws {
        let status = try Self.status(#""statusLabel":"a","statusVariant":"info""#)
        // A key of another template breaks a rule of this activity (the schema allows every template's
        // keys in a patch); a key of no template is malformed.
        expectHeraldError(status: 422, code: "invalid_state", field: "state.progress") { () throws(HeraldError) in
            _ = try status.merged(with: Self.patch(#"{"progress":0.5}"#))
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "state.colour") { () throws(HeraldError) in
            _ = try status.merged(with: Self.patch(#"{"colour":"red"}"#))
        }
        expectHeraldError(status: 422, code: "invalid_state", field: "state.statusVariant") { () throws(HeraldError) in
            _ = try status.merged(with: Self.patch(#"{"statusVariant":"warning"}"#))
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state") { () throws(HeraldError) in
            _ = try status.merged(with: .string("success"))
        }
    }

    @Test func aMergedDeadlineIsReadAsISO8601() throws {
        let state = try Self.countdown(#""deadline":"2026-06-01T00:45:00Z","footnote":"f""#)
        let later = try #require(ISO8601.parse("2026-06-01T01:00:00Z"))
        #expect(
            try state.merged(with: Self.patch(#"{"deadline":"2026-06-01T01:00:00Z"}"#))
                == .countdown(.init(deadline: later, footnote: "f")))
        expectHeraldError(status: 422, code: "invalid_state", field: "state.deadline") { () throws(HeraldError) in
            _ = try state.merged(with: Self.patch(#"{"deadline":"soon"}"#))
        }
    }

    @Test func theMergedStoredFormKeepsTheCanonicalOrder() throws {
        let state = try Self.status(#""statusLabel":"a","statusVariant":"info""#)
        let merged = try state.merged(with: Self.patch(#"{"footnote":"f","statusVariant":"success"}"#))
        #expect(JSONWriter.string(merged.json) == #"{"statusLabel":"a","statusVariant":"success","footnote":"f"}"#)
    }

    // MARK: Content-state

    @Test func contentStateAppendsTheBrandAndWritesTheDeadlineAsAReferenceDateNumber() throws {
        let countdown = try Self.countdown(#""deadline":"2001-01-01T00:01:40Z""#)
        #expect(
            JSONWriter.string(countdown.contentState(displayName: "Gacha", miniAppID: "fun.pull.gacha"))
                == #"{"deadline":100,"displayName":"Gacha","miniAppId":"fun.pull.gacha"}"#)
        let before = try Self.countdown(#""deadline":"2000-12-31T23:59:00Z""#)
        #expect(before.contentState(displayName: "G", miniAppID: "m")["deadline"] == .number(-60))
    }
}
