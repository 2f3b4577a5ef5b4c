import Foundation
import HeraldCrypto
import Testing

@testable import HeraldCore

/// The activities the payload tests, the app-decoding tests and docs/live-activity-payloads.md share:
/// one content per template and event.
enum LiveActivityFixtures {
    static let activityID = UUID(uuidString: "01933B5E-8A4F-7C2D-9E10-5F6A7B8C9D0E")!
    static let miniAppID = Fixtures.miniAppID
    static let displayName = "Gacha"
    /// 2026-06-01T00:00:00Z.
    static let start = Fixtures.now
    static let expiresAt = start.addingTimeInterval(1_800)
    static let deadline = ISO8601.parse("2026-06-01T00:45:00Z")!

    static func attributes(_ template: LiveActivityTemplate) -> LiveActivityAttributes {
        switch template {
        case .progress: return LiveActivityAttributes(title: "Order #1042", subtitle: "2 items")
        case .status: return LiveActivityAttributes(title: "Deposit 0.5 ETH")
        case .countdown: return LiveActivityAttributes(title: "Flash sale", subtitle: "Gacha tickets")
        }
    }

    static func state(_ template: LiveActivityTemplate, _ event: LiveActivityEvent) -> LiveActivityState {
        let stages = ["Ordered", "Packed", "Shipped", "Delivered"]
        switch (template, event) {
        case (.progress, .start):
            return .progress(.init(stages: stages, currentStage: 1, progress: 0.25, statusText: "Packed in Rotterdam"))
        case (.progress, .update):
            return .progress(.init(stages: stages, currentStage: 2, progress: 0.6))
        case (.progress, .end):
            return .progress(.init(stages: stages, currentStage: 3, progress: 1, statusText: "Left at the door"))
        case (.status, .start):
            return .status(.init(statusLabel: "Waiting for confirmations", statusVariant: .pending, footnote: "0 of 6"))
        case (.status, .update):
            return .status(.init(statusLabel: "Confirming", statusVariant: .info, footnote: "3 of 6"))
        case (.status, .end):
            return .status(.init(statusLabel: "Deposit received", statusVariant: .success))
        case (.countdown, .start):
            return .countdown(.init(deadline: deadline, footnote: "Ends at 00:45 UTC"))
        case (.countdown, .update):
            return .countdown(.init(deadline: deadline.addingTimeInterval(600), footnote: "Extended by 10 minutes"))
        case (.countdown, .end):
            return .countdown(.init(deadline: deadline.addingTimeInterval(600)))
        }
    }

    /// Starts carry the partner's alert for progress and none for the others (the attributes'
    /// then); the status and countdown updates are silent, the progress one alerts; every end alerts
    /// except countdown's.
    static func alert(_ template: LiveActivityTemplate, _ event: LiveActivityEvent) -> LiveActivityAlert? {
        switch (template, event) {
        case (.progress, .start):
            return LiveActivityAlert(title: "Your order is on its way", body: "Packed in Rotterdam")
        case (.progress, .update): return LiveActivityAlert(title: "Shipped", body: "Arrives tomorrow")
        case (.progress, .end): return LiveActivityAlert(title: "Delivered", body: "Enjoy!")
        case (.status, .end): return LiveActivityAlert(title: "Deposit received", body: "0.5 ETH is in your wallet")
        default: return nil
        }
    }

    static func timestamp(_ event: LiveActivityEvent) -> Int {
        let base = Int(start.timeIntervalSince1970)
        switch event {
        case .start: return base
        case .update: return base + 300
        case .end: return base + 1_200
        }
    }

    static func content(_ template: LiveActivityTemplate, _ event: LiveActivityEvent) -> LiveActivityContent {
        let alert = alert(template, event)
        return LiveActivityContent(
            activityID: activityID, miniAppID: miniAppID, displayName: displayName, template: template,
            attributes: attributes(template), state: state(template, event), event: event,
            timestamp: timestamp(event), expiresAt: expiresAt,
            dismissalDate: event == .end ? start.addingTimeInterval(1_200 + 3_600) : nil,
            alert: event == .start ? LiveActivityPayload.startAlert(alert, attributes: attributes(template)) : alert,
            relevanceScore: relevanceScore)
    }

    /// The default score, which the end leaves out (it orders running activities only).
    static let relevanceScore = 50

    static func render(_ template: LiveActivityTemplate, _ event: LiveActivityEvent) -> RenderedLiveActivity {
        LiveActivityPayload.render(content(template, event), signer: Fixtures.signer)
    }
}

@Suite struct LiveActivityPayloadTests {
    static let id = "01933b5e-8a4f-7c2d-9e10-5f6a7b8c9d0e"
    static let brand = #""displayName":"Gacha","miniAppId":"fun.pull.gacha""#
    static let progressAttributes =
        #"{"title":"Order #1042","subtitle":"2 items","miniAppId":"fun.pull.gacha","displayName":"Gacha","activityId":"\#(id)"}"#

    /// The APNs bodies, byte for byte, for each template and event of `LiveActivityFixtures`.
    static let apns: [String: String] = [
        "progress start":
            #"{"aps":{"timestamp":1780272000,"event":"start","content-state":{"stages":["Ordered","Packed","Shipped","Delivered"],"currentStage":1,"progress":0.25,"statusText":"Packed in Rotterdam",\#(brand)},"attributes-type":"MiniAppProgressAttributes","attributes":\#(progressAttributes),"input-push-token":1,"stale-date":1780273800,"relevance-score":50,"alert":{"title":"[Gacha] Your order is on its way","body":"Packed in Rotterdam"}},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "progress update":
            #"{"aps":{"timestamp":1780272300,"event":"update","content-state":{"stages":["Ordered","Packed","Shipped","Delivered"],"currentStage":2,"progress":0.6,\#(brand)},"stale-date":1780273800,"relevance-score":50,"alert":{"title":"[Gacha] Shipped","body":"Arrives tomorrow"}},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "progress end":
            #"{"aps":{"timestamp":1780273200,"event":"end","content-state":{"stages":["Ordered","Packed","Shipped","Delivered"],"currentStage":3,"progress":1,"statusText":"Left at the door",\#(brand)},"dismissal-date":1780276800,"alert":{"title":"[Gacha] Delivered","body":"Enjoy!"}},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "status start":
            #"{"aps":{"timestamp":1780272000,"event":"start","content-state":{"statusLabel":"Waiting for confirmations","statusVariant":"pending","footnote":"0 of 6",\#(brand)},"attributes-type":"MiniAppStatusAttributes","attributes":{"title":"Deposit 0.5 ETH","miniAppId":"fun.pull.gacha","displayName":"Gacha","activityId":"\#(id)"},"input-push-token":1,"stale-date":1780273800,"relevance-score":50,"alert":{"title":"[Gacha] Deposit 0.5 ETH","body":""}},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "status update":
            #"{"aps":{"timestamp":1780272300,"event":"update","content-state":{"statusLabel":"Confirming","statusVariant":"info","footnote":"3 of 6",\#(brand)},"stale-date":1780273800,"relevance-score":50},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "status end":
            #"{"aps":{"timestamp":1780273200,"event":"end","content-state":{"statusLabel":"Deposit received","statusVariant":"success",\#(brand)},"dismissal-date":1780276800,"alert":{"title":"[Gacha] Deposit received","body":"0.5 ETH is in your wallet"}},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "countdown start":
            #"{"aps":{"timestamp":1780272000,"event":"start","content-state":{"deadline":801967500,"footnote":"Ends at 00:45 UTC",\#(brand)},"attributes-type":"MiniAppCountdownAttributes","attributes":{"title":"Flash sale","subtitle":"Gacha tickets","miniAppId":"fun.pull.gacha","displayName":"Gacha","activityId":"\#(id)"},"input-push-token":1,"stale-date":1780273800,"relevance-score":50,"alert":{"title":"[Gacha] Flash sale","body":"Gacha tickets"}},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "countdown update":
            #"{"aps":{"timestamp":1780272300,"event":"update","content-state":{"deadline":801968100,"footnote":"Extended by 10 minutes",\#(brand)},"stale-date":1780273800,"relevance-score":50},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
        "countdown end":
            #"{"aps":{"timestamp":1780273200,"event":"end","content-state":{"deadline":801968100,\#(brand)},"dismissal-date":1780276800},"activityId":"\#(id)","miniAppId":"fun.pull.gacha"}"#,
    ]

    static func escaped(_ json: String) -> String {
        json.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// The FCM messages, byte for byte: the data values in order, then kid and sig (the HMAC
    /// is checked apart, in `androidSignatureCoversEveryOtherDataPairInOrder`).
    static func fcm(
        _ template: LiveActivityTemplate, _ event: LiveActivityEvent, priority: String, state: String,
        attributes: String, extra: String, sig: String
    ) -> String {
        let timestamp = LiveActivityFixtures.timestamp(event)
        return
            #"{"android":{"priority":"\#(priority)","collapse_key":"\#(id)"},"data":{"channel":"mini-app-live","miniAppId":"fun.pull.gacha","activityId":"\#(id)","template":"\#(template)","event":"\#(event)","state":"\#(escaped(state))","attributes":"\#(escaped(attributes))","displayName":"Gacha","expiresAt":"2026-06-01T00:30:00.000Z","timestamp":"\#(timestamp)"\#(event == .end ? "" : #","relevanceScore":"50""#)\#(extra),"kid":"k2026","sig":"\#(sig)"}}"#
    }

    static let fcmCases: [String: String] = {
        let statusAttributes =
            #"{"title":"Deposit 0.5 ETH","miniAppId":"fun.pull.gacha","displayName":"Gacha","activityId":"\#(id)"}"#
        let countdownAttributes =
            #"{"title":"Flash sale","subtitle":"Gacha tickets","miniAppId":"fun.pull.gacha","displayName":"Gacha","activityId":"\#(id)"}"#
        let dismiss = #","dismissAt":"2026-06-01T01:20:00.000Z""#
        // What Android 16 needs to promote the notification (AndroidLiveUpdate): 4 stages of 100 units each.
        let fourStages = Array(repeating: #"{"length":100}"#, count: 4).joined(separator: ",")
        let segments = #","progressSegments":"\#(escaped("[\(fourStages)]"))""#
        func progress(_ chip: String?, _ value: Int) -> String {
            (chip.map { #","shortCriticalText":"\#($0)""# } ?? "") + segments
                + #","progressValue":"\#(value)","progressMax":"400""#
        }
        func chronometer(_ millis: String) -> String {
            #","whenEpochMillis":"\#(millis)","chronometerCountDown":"true""#
        }
        return [
            "progress start": fcm(
                .progress, .start, priority: "HIGH",
                state:
                    #"{"stages":["Ordered","Packed","Shipped","Delivered"],"currentStage":1,"progress":0.25,"statusText":"Packed in Rotterdam",\#(brand)}"#,
                attributes: progressAttributes,
                extra: progress("2/4", 100)
                    + #","alertTitle":"[Gacha] Your order is on its way","alertBody":"Packed in Rotterdam""#,
                sig: "WBFgKsBzLWgXZl3ITLXJ9T8W_cA3HIrsNCOnLW6bPHc"),
            "progress update": fcm(
                .progress, .update, priority: "HIGH",
                state:
                    #"{"stages":["Ordered","Packed","Shipped","Delivered"],"currentStage":2,"progress":0.6,\#(brand)}"#,
                attributes: progressAttributes,
                extra: progress("3/4", 240) + #","alertTitle":"[Gacha] Shipped","alertBody":"Arrives tomorrow""#,
                sig: "BX8NDfW4-2I1fNXUwC4IzAIq9hGNM1KWjFdt-F-y8c0"),
            "progress end": fcm(
                .progress, .end, priority: "HIGH",
                state:
                    #"{"stages":["Ordered","Packed","Shipped","Delivered"],"currentStage":3,"progress":1,"statusText":"Left at the door",\#(brand)}"#,
                attributes: progressAttributes,
                extra: dismiss + progress(nil, 400) + #","alertTitle":"[Gacha] Delivered","alertBody":"Enjoy!""#,
                sig: "zFfLmuoCeT4LT_BSTiVYpIAWjve6H1TrAA5LaXFy9w8"),
            "status start": fcm(
                .status, .start, priority: "HIGH",
                state:
                    #"{"statusLabel":"Waiting for confirmations","statusVariant":"pending","footnote":"0 of 6",\#(brand)}"#,
                attributes: statusAttributes,
                extra: #","shortCriticalText":"Waitin…","alertTitle":"[Gacha] Deposit 0.5 ETH","alertBody":"""#,
                sig: "IxW-i60QxZkuHhaTfHFE4oIlrYU_-ZLMeXrekq6U_eA"),
            "status update": fcm(
                .status, .update, priority: "NORMAL",
                state: #"{"statusLabel":"Confirming","statusVariant":"info","footnote":"3 of 6",\#(brand)}"#,
                attributes: statusAttributes, extra: #","shortCriticalText":"Confir…""#,
                sig: "X8lp-xckSz8lW5vK4vqwi_fb9gP0cRf9MIE2V8a7edQ"),
            "status end": fcm(
                .status, .end, priority: "HIGH",
                state: #"{"statusLabel":"Deposit received","statusVariant":"success",\#(brand)}"#,
                attributes: statusAttributes,
                extra: dismiss + #","alertTitle":"[Gacha] Deposit received","alertBody":"0.5 ETH is in your wallet""#,
                sig: "Diy07yK_mclrCnNnvhJDKS-2TkNB1q2CithefXq_w7g"),
            "countdown start": fcm(
                .countdown, .start, priority: "HIGH",
                state: #"{"deadline":801967500,"footnote":"Ends at 00:45 UTC",\#(brand)}"#,
                attributes: countdownAttributes,
                extra: chronometer("1780274700000")
                    + #","alertTitle":"[Gacha] Flash sale","alertBody":"Gacha tickets""#,
                sig: "K3Xp3Zd84Lsh6BR9rnKtH-wHYXyvNCAQu7C65vL5CKI"),
            "countdown update": fcm(
                .countdown, .update, priority: "NORMAL",
                state: #"{"deadline":801968100,"footnote":"Extended by 10 minutes",\#(brand)}"#,
                attributes: countdownAttributes, extra: chronometer("1780275300000"),
                sig: "3-6Te9CuaSNDKro8mFdjrGu6WVAX2VZH5-vplfYXBT0"),
            "countdown end": fcm(
                .countdown, .end, priority: "NORMAL", state: #"{"deadline":801968100,\#(brand)}"#,
                attributes: countdownAttributes, extra: dismiss, sig: "r_CC7c7wgkxdTwOAXGl0yTx9DOhryN_36h8BdG-1FxE"),
        ]
    }()

    static let cases: [(LiveActivityTemplate, LiveActivityEvent)] = LiveActivityTemplate.allCases.flatMap { template in
        LiveActivityEvent.allCases.map { (template, $0) }
    }

    static func content(
        _ template: LiveActivityTemplate = .status, _ event: LiveActivityEvent = .update,
        change: (inout LiveActivityContent) -> Void = { _ in }
    ) -> LiveActivityContent {
        var content = LiveActivityFixtures.content(template, event)
        change(&content)
        return content
    }

    static func render(_ content: LiveActivityContent) -> RenderedLiveActivity {
        LiveActivityPayload.render(content, signer: Fixtures.signer)
    }

    static func apnsBody(_ rendered: RenderedLiveActivity) throws -> (
        top: [String: JSONValue], aps: [String: JSONValue]
    ) {
        let top = try membersByKey(try JSONParser.parse(rendered.apns))
        return (top, try membersByKey(top["aps"]))
    }

    static func fcmData(_ rendered: RenderedLiveActivity) throws -> [(key: String, value: JSONValue)] {
        try #require(try JSONParser.parse(rendered.fcm)["data"]?.objectMembers)
    }

    // MARK: Byte for byte

    @Test(arguments: cases) func apnsBodyIsExactlyTheDocumentedBytes(
        template: LiveActivityTemplate, event: LiveActivityEvent
    ) {
        #expect(text(LiveActivityFixtures.render(template, event).apns) == Self.apns["\(template) \(event)"])
    }

    @Test(arguments: cases) func fcmMessageIsExactlyTheDocumentedBytes(
        template: LiveActivityTemplate, event: LiveActivityEvent
    ) {
        #expect(text(LiveActivityFixtures.render(template, event).fcm) == Self.fcmCases["\(template) \(event)"])
    }

    // MARK: iOS

    @Test func startCarriesAttributesTypeAttributesInputPushTokenAndStaleDate() throws {
        for template in LiveActivityTemplate.allCases {
            let (top, aps) = try Self.apnsBody(LiveActivityFixtures.render(template, .start))
            #expect(Set(top.keys) == ["aps", "activityId", "miniAppId"])
            #expect(
                Set(aps.keys) == [
                    "timestamp", "event", "content-state", "attributes-type", "attributes", "input-push-token",
                    "stale-date",
                    "relevance-score", "alert",
                ])
            #expect(aps["attributes-type"] == .string(template.attributesType))
            #expect(aps["input-push-token"] == .number(1))
            let attributes = try membersByKey(aps["attributes"])
            #expect(attributes["activityId"] == .string(Self.id))
            #expect(attributes["miniAppId"] == .string("fun.pull.gacha"))
            #expect(attributes["displayName"] == .string("Gacha"))
        }
    }

    @Test func updateAndEndCarryNoAttributes() throws {
        for template in LiveActivityTemplate.allCases {
            for event in [LiveActivityEvent.update, .end] {
                let (_, aps) = try Self.apnsBody(LiveActivityFixtures.render(template, event))
                #expect(aps["attributes"] == nil && aps["attributes-type"] == nil && aps["input-push-token"] == nil)
                #expect(aps["content-state"] != nil, "the end carries the final state too")
                #expect(aps["event"] == .string(event.rawValue))
            }
        }
    }

    @Test func staleDateOnStartAndUpdateDismissalDateOnlyOnEnd() throws {
        let dismissal = Fixtures.now.addingTimeInterval(99)
        for event in LiveActivityEvent.allCases {
            let (_, aps) = try Self.apnsBody(Self.render(Self.content(.status, event) { $0.dismissalDate = dismissal }))
            if event == .end {
                #expect(aps["stale-date"] == nil)
                #expect(aps["dismissal-date"] == .number(dismissal.timeIntervalSince1970))
            } else {
                #expect(aps["stale-date"] == .number(LiveActivityFixtures.expiresAt.timeIntervalSince1970))
                #expect(aps["dismissal-date"] == nil, "a dismissal date only ends an activity")
            }
        }
    }

    @Test func anEndWithoutADismissalDateCarriesNeither() throws {
        let rendered = Self.render(Self.content(.status, .end) { $0.dismissalDate = nil })
        let (_, aps) = try Self.apnsBody(rendered)
        #expect(aps["dismissal-date"] == nil && aps["stale-date"] == nil)
        #expect(try Self.fcmData(rendered).contains { $0.key == "dismissAt" } == false)
    }

    @Test func datesAreWholeUnixSecondsRoundedDown() throws {
        let rendered = Self.render(
            Self.content(.status, .update) { $0.expiresAt = Date(timeIntervalSince1970: 1_780_273_800.9) })
        #expect(try Self.apnsBody(rendered).aps["stale-date"] == .number(1_780_273_800))
        #expect(text(rendered.apns).contains(#""stale-date":1780273800,"#))
    }

    @Test func iosBodyIsUnsigned() throws {
        for (template, event) in Self.cases {
            let (top, _) = try Self.apnsBody(LiveActivityFixtures.render(template, event))
            #expect(top["sig"] == nil && top["kid"] == nil)
        }
    }

    @Test func countdownDeadlineIsSecondsSinceTheReferenceDate() throws {
        let deadline = try #require(ISO8601.parse("2026-06-01T00:45:00Z"))
        let (_, aps) = try Self.apnsBody(LiveActivityFixtures.render(.countdown, .start))
        let state = try membersByKey(aps["content-state"])
        // 2026-06-01T00:45:00Z is 1,780,274,700 UNIX seconds; 2001-01-01T00:00:00Z is 978,307,200.
        #expect(state["deadline"] == .number(1_780_274_700 - 978_307_200))
        #expect(state["deadline"] == .number(deadline.timeIntervalSinceReferenceDate))
        // The stored form keeps ISO-8601 for partners and GET.
        #expect(LiveActivityFixtures.state(.countdown, .start).json["deadline"] == .string("2026-06-01T00:45:00.000Z"))
    }

    @Test func everyContentStateCarriesTheBrand() throws {
        for (template, event) in Self.cases {
            let rendered = LiveActivityFixtures.render(template, event)
            let state = try membersByKey(try Self.apnsBody(rendered).aps["content-state"])
            #expect(state["displayName"] == .string("Gacha"))
            #expect(state["miniAppId"] == .string("fun.pull.gacha"))
            let data = try Self.fcmData(rendered)
            let androidState = try JSONParser.parse(try #require(data.first { $0.key == "state" }?.value.stringValue))
            #expect(
                androidState == (try JSONParser.parse(rendered.apns))["aps"]?["content-state"],
                "Android's state is the iOS content-state")
        }
    }

    // MARK: Relevance

    @Test func startsAndUpdatesCarryTheRelevanceScoreEndsDoNot() throws {
        for (template, event) in Self.cases {
            let rendered = Self.render(Self.content(template, event) { $0.relevanceScore = 73 })
            let (_, aps) = try Self.apnsBody(rendered)
            let android = try Self.fcmData(rendered).first { $0.key == "relevanceScore" }?.value
            if event == .end {
                #expect(aps["relevance-score"] == nil && android == nil, "\(template): an end orders nothing")
            } else {
                #expect(aps["relevance-score"] == .number(73), "\(template) \(event)")
                #expect(android == .string("73"), "\(template) \(event)")
            }
        }
        let unset = Self.render(Self.content(.status, .update) { $0.relevanceScore = nil })
        #expect(try Self.apnsBody(unset).aps["relevance-score"] == nil)
    }

    // MARK: Priorities and alerts

    @Test func anImmediateSilentEndGoesAtOnceOnBothPlatforms() throws {
        let rendered = Self.render(
            Self.content(.countdown, .end) {
                $0.alert = nil; $0.immediate = true
            })
        #expect(rendered.apnsPriority == 10)
        #expect(try Self.apnsBody(rendered).aps["alert"] == nil, "immediate is no alert")
        #expect(try JSONParser.parse(rendered.fcm)["android"]?["priority"] == .string("HIGH"))
    }

    @Test func apnsPriorityIs10WithAnAlertAndOnStart5Silent() {
        for (template, event) in Self.cases {
            let alerted = Self.render(
                Self.content(template, event) { $0.alert = LiveActivityAlert(title: "Hi", body: "") })
            #expect(alerted.apnsPriority == 10)
            let silent = Self.render(Self.content(template, event) { $0.alert = nil })
            #expect(silent.apnsPriority == (event == .start ? 10 : 5), "\(template) \(event)")
        }
    }

    @Test func androidPriorityIsHighOnStartAndWithAnAlertNormalWhenSilent() throws {
        for (template, event) in Self.cases {
            for alert in [nil, LiveActivityAlert(title: "Hi")] {
                let rendered = Self.render(Self.content(template, event) { $0.alert = alert })
                let android = try membersByKey(try JSONParser.parse(rendered.fcm)["android"])
                #expect(Set(android.keys) == ["priority", "collapse_key"], "no token or ttl: the worker adds them")
                #expect(android["priority"] == .string(alert != nil || event == .start ? "HIGH" : "NORMAL"))
                #expect(android["collapse_key"] == .string(Self.id))
            }
        }
    }

    @Test func aStartWithoutAnAlertShowsTheAttributes() throws {
        let rendered = Self.render(Self.content(.progress, .start) { $0.alert = nil })
        let (_, aps) = try Self.apnsBody(rendered)
        #expect(aps["alert"] == .object([("title", .string("[Gacha] Order #1042")), ("body", .string("2 items"))]))
        let data = try Self.fcmData(rendered)
        #expect(data.first { $0.key == "alertTitle" }?.value == .string("[Gacha] Order #1042"))
    }

    @Test func startAlertIsThePartnersElseTheAttributes() {
        let partner = LiveActivityAlert(title: "Yours", body: "b")
        #expect(LiveActivityPayload.startAlert(partner, attributes: .init(title: "T", subtitle: "S")) == partner)
        #expect(
            LiveActivityPayload.startAlert(nil, attributes: .init(title: "T", subtitle: "S"))
                == .init(title: "T", body: "S"))
        #expect(LiveActivityPayload.startAlert(nil, attributes: .init(title: "T")) == .init(title: "T", body: ""))
    }

    @Test func theBrandPrefixCannotBeOverridden() throws {
        let rendered = Self.render(
            Self.content(.status, .update) { $0.alert = LiveActivityAlert(title: "[Bank] Pay now", body: "") })
        #expect(try Self.apnsBody(rendered).aps["alert"]?["title"] == .string("[Gacha] [Bank] Pay now"))
        #expect(try Self.fcmData(rendered).first { $0.key == "alertTitle" }?.value == .string("[Gacha] [Bank] Pay now"))
    }

    @Test func silentEventsCarryNoAlertKeys() throws {
        let rendered = Self.render(Self.content(.status, .update) { $0.alert = nil })
        #expect(try Self.apnsBody(rendered).aps["alert"] == nil)
        #expect(try Self.fcmData(rendered).contains { $0.key.hasPrefix("alert") } == false)
    }

    // MARK: Android data and signature

    @Test func androidDataKeysAreTheDocumentedOnesInOrderAllStrings() throws {
        let start = try Self.fcmData(LiveActivityFixtures.render(.progress, .start)).map(\.key)
        #expect(
            start == [
                "channel", "miniAppId", "activityId", "template", "event", "state", "attributes", "displayName",
                "expiresAt",
                "timestamp", "relevanceScore", "shortCriticalText", "progressSegments", "progressValue",
                "progressMax", "alertTitle", "alertBody", "kid", "sig",
            ])
        let end = try Self.fcmData(LiveActivityFixtures.render(.countdown, .end)).map(\.key)
        #expect(
            end == [
                "channel", "miniAppId", "activityId", "template", "event", "state", "attributes", "displayName",
                "expiresAt",
                "timestamp", "dismissAt", "kid", "sig",
            ])
        for (template, event) in Self.cases {
            for member in try Self.fcmData(LiveActivityFixtures.render(template, event)) {
                #expect(member.value.stringValue != nil, "FCM data values are strings: \(member.key)")
            }
        }
    }

    /// Android 16's Live Update keys (`AndroidLiveUpdate`), after the keys apps already read and before the
    /// alert, signed with the rest.
    @Test(arguments: cases) func androidDataCarriesWhatALiveUpdateNeeds(
        template: LiveActivityTemplate, event: LiveActivityEvent
    ) throws {
        let content = LiveActivityFixtures.content(template, event)
        let data = try Self.fcmData(LiveActivityFixtures.render(template, event))
        let expected = AndroidLiveUpdate(state: content.state, event: event).dataPairs
        let start = try #require(data.firstIndex { $0.key == (event == .end ? "dismissAt" : "relevanceScore") }) + 1
        let carried = data[start..<(start + expected.count)].map { ($0.key, $0.value.stringValue) }
        #expect(carried.map(\.0) == expected.map(\.key))
        #expect(carried.map(\.1) == expected.map(\.value))
        switch (template, event) {
        case (.progress, .update):
            #expect(carried.map(\.0) == ["shortCriticalText", "progressSegments", "progressValue", "progressMax"])
            #expect(carried.first?.1 == "3/4")
        case (.status, .update): #expect(carried.map(\.0) == ["shortCriticalText"])
        case (.countdown, .update): #expect(carried.map(\.0) == ["whenEpochMillis", "chronometerCountDown"])
        case (.progress, .end): #expect(carried.map(\.0) == ["progressSegments", "progressValue", "progressMax"])
        case (_, .end): #expect(carried.isEmpty)
        default: #expect(!carried.isEmpty)
        }
    }

    @Test(arguments: cases) func androidSignatureCoversEveryOtherDataPairInOrder(
        template: LiveActivityTemplate, event: LiveActivityEvent
    ) throws {
        let data = try Self.fcmData(LiveActivityFixtures.render(template, event))
        #expect(data.suffix(2).map(\.key) == ["kid", "sig"])
        #expect(data[data.count - 2].value == .string("k2026"))
        let signed = data.dropLast(2).map { ($0.key, $0.value.stringValue ?? "") }
        let mac = Digest.hmacSHA256(key: Fixtures.signingKey, message: SignedEnvelope.canonicalBytes(signed))
        #expect(data[data.count - 1].value == .string(Base64URL.encode(mac)))
    }

    @Test func theSignatureChangesWithTheState() throws {
        func sig(_ content: LiveActivityContent) throws -> JSONValue? {
            try Self.fcmData(Self.render(content)).last?.value
        }
        let base = try sig(Self.content())
        let other = try sig(
            Self.content { $0.state = .status(.init(statusLabel: "Confirming", statusVariant: .failure)) })
        #expect(base != other)
    }

    @Test func fcmDataBytesCountEveryKeyAndValueAsSent() throws {
        for (template, event) in Self.cases {
            let rendered = LiveActivityFixtures.render(template, event)
            let counted = try Self.fcmData(rendered).reduce(0) {
                $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0)
            }
            #expect(rendered.fcmDataBytes == counted)
        }
    }

    @Test func textIsEscapedByTheWriter() throws {
        let title = "Say \"hi\" \\ 👋"
        let rendered = Self.render(
            Self.content(.status, .update) {
                $0.state = .status(.init(statusLabel: title, statusVariant: .info))
                $0.alert = LiveActivityAlert(title: title, body: "line one\nline two")
            })
        let (_, aps) = try Self.apnsBody(rendered)
        #expect(aps["content-state"]?["statusLabel"] == .string(title))
        #expect(aps["alert"]?["body"] == .string("line one\nline two"))
        #expect(text(rendered.apns).contains(#""statusLabel":"Say \"hi\" \\ 👋""#))
        let state = try #require(try Self.fcmData(rendered).first { $0.key == "state" }?.value.stringValue)
        #expect(try JSONParser.parse(state)["statusLabel"] == .string(title))
    }

    // MARK: Sizes

    @Test func theFixturesFit() throws {
        for (template, event) in Self.cases {
            try LiveActivityPayload.checkSize(LiveActivityFixtures.render(template, event), event: event)
        }
    }

    static let wide = "😀"  // 4 bytes in UTF-8, one scalar

    @Test func aTooLongAlertIsNamed() {
        let rendered = Self.render(
            Self.content(.status, .update) {
                $0.alert = LiveActivityAlert(title: "Hi", body: String(repeating: Self.wide, count: 1_000))
            })
        let error = expectHeraldError(status: 422, code: "payload_too_large", field: "alert") {
            () throws(HeraldError) in
            try LiveActivityPayload.checkSize(rendered, event: .update)
        }
        #expect(error?.message.contains("\(rendered.apns.count) bytes, \(rendered.apns.count - 4096) over") == true)
    }

    static let maxState = LiveActivityState.progress(
        .init(
            stages: Array(repeating: String(repeating: wide, count: 40), count: 8), currentStage: 0, progress: 0.5,
            statusText: String(repeating: wide, count: 200)))

    @Test func aLargeStateIsNamedOnUpdate() {
        let rendered = Self.render(
            Self.content(.progress, .update) {
                $0.state = Self.maxState
                $0.alert = LiveActivityAlert(title: "Hi", body: String(repeating: "a", count: 1_900))
            })
        expectHeraldError(status: 422, code: "payload_too_large", field: "state") { () throws(HeraldError) in
            try LiveActivityPayload.checkSize(rendered, event: .update)
        }
    }

    /// Within the limits attributes are never the largest part of an overflow; rendered content
    /// is not validated, so larger ones show how the field is chosen.
    static let hugeAttributes = LiveActivityAttributes(title: String(repeating: wide, count: 1_000))

    @Test func largeAttributesAreNamedOnStart() {
        let rendered = Self.render(Self.content(.status, .start) { $0.attributes = Self.hugeAttributes })
        #expect(rendered.attributesBytes > rendered.stateBytes && rendered.attributesBytes > rendered.alertBytes)
        expectHeraldError(status: 422, code: "payload_too_large", field: "attributes") { () throws(HeraldError) in
            try LiveActivityPayload.checkSize(rendered, event: .start)
        }
    }

    @Test func attributesAreNotBlamedOutsideStart() {
        let rendered = Self.render(
            Self.content(.status, .update) {
                $0.attributes = Self.hugeAttributes
                $0.alert = LiveActivityAlert(title: "Hi", body: String(repeating: "a", count: 300))
            })
        // Attributes travel in every Android message, but a partner can change them only at start.
        #expect(rendered.attributesBytes == 0)
        expectHeraldError(status: 422, code: "payload_too_large", field: "alert") { () throws(HeraldError) in
            try LiveActivityPayload.checkSize(rendered, event: .update)
        }
    }

    /// The Live Update keys count, and with every field at its limit a silent update and a silent end (the TTL's,
    /// a replacement's, a revocation's: rendered without a partner to refuse) still fit, with 8 stages of bar.
    @Test func theLiveUpdateKeysCountAndSilentEventsAtEveryLimitFit() throws {
        let rules = LiveActivityRules()
        let attributes = LiveActivityAttributes(
            title: String(repeating: Self.wide, count: rules.titleLength.upperBound),
            subtitle: String(repeating: Self.wide, count: rules.maxSubtitleCharacters))
        for event in [LiveActivityEvent.update, .end] {
            let rendered = Self.render(
                Self.content(.progress, event) {
                    $0.attributes = attributes
                    $0.state = Self.maxState
                    $0.alert = nil
                })
            let data = try Self.fcmData(rendered)
            let liveUpdate = AndroidLiveUpdate(state: Self.maxState, event: event).dataPairs
            #expect(liveUpdate.map(\.key).contains("progressSegments"))
            let liveUpdateBytes = liveUpdate.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
            let others = data.filter { member in !liveUpdate.contains { $0.key == member.key } }
            let otherBytes = others.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0) }
            #expect(rendered.fcmDataBytes == otherBytes + liveUpdateBytes, "\(event)")
            try LiveActivityPayload.checkSize(rendered, event: event)
        }
    }

    @Test func fieldsAtTheirLimitsFitASilentUpdateButNotAStartWithALongAlert() throws {
        let rules = LiveActivityRules()
        let attributes = LiveActivityAttributes(
            title: String(repeating: Self.wide, count: rules.titleLength.upperBound),
            subtitle: String(repeating: Self.wide, count: rules.maxSubtitleCharacters))
        let silent = Self.render(
            Self.content(.progress, .update) {
                $0.attributes = attributes
                $0.state = Self.maxState
                $0.alert = nil
            })
        try LiveActivityPayload.checkSize(silent, event: .update)
        let start = Self.render(
            Self.content(.progress, .start) {
                $0.attributes = attributes
                $0.state = Self.maxState
                $0.alert = LiveActivityAlert(
                    title: "Hi", body: String(repeating: Self.wide, count: rules.maxAlertBodyCharacters))
            })
        expectHeraldError(status: 422, code: "payload_too_large", field: "alert") { () throws(HeraldError) in
            try LiveActivityPayload.checkSize(start, event: .start)
        }
        // Without the partner's alert a start repeats the attributes as its alert: that too is over.
        let defaultAlert = Self.render(
            Self.content(.progress, .start) {
                $0.attributes = attributes
                $0.state = Self.maxState
                $0.alert = nil
            })
        #expect(defaultAlert.alertBytes == "[Gacha] ".utf8.count + 2 * 120 * 4)
        expectHeraldError(status: 422, code: "payload_too_large", field: "state") { () throws(HeraldError) in
            try LiveActivityPayload.checkSize(defaultAlert, event: .start)
        }
    }

    /// The limits are inclusive and on the bytes sent: grow the alert body a byte at a time; the
    /// first refused rendering is 4,097 bytes on the platform that overflowed, the one before fits.
    @Test func theLimitIs4096BytesOfWhatIsSent() throws {
        var previous: RenderedLiveActivity?
        for length in 3_000...4_096 {
            let rendered = Self.render(
                Self.content(.status, .update) {
                    $0.alert = LiveActivityAlert(title: "Hi", body: String(repeating: "a", count: length))
                })
            if heraldError({ () throws(HeraldError) in try LiveActivityPayload.checkSize(rendered, event: .update) })
                != nil
            {
                #expect(rendered.apns.count == 4_097 || rendered.fcmDataBytes == 4_097)
                let fitting = try #require(previous)
                #expect(max(fitting.apns.count, fitting.fcmDataBytes) == 4_096)
                return
            }
            previous = rendered
        }
        Issue.record("no body length overflowed")
    }
}
