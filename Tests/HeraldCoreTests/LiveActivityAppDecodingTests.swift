import Foundation
import Testing

@testable import HeraldCore

// ActivityKit is not on Linux: this protocol stands in for its `ActivityAttributes`
// (`Codable` attributes with a `Codable & Hashable` `ContentState`), so the structs below are
// declared exactly as docs/live-activities.md tells the host's Widget Extension to declare them.
protocol ActivityAttributes: Codable {
    associatedtype ContentState: Codable & Hashable
}

// BEGIN widget structs (copied verbatim into docs/live-activities.md; a test checks they agree)
struct MiniAppProgressAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable {
        var stages: [String]
        var currentStage: Int
        var progress: Double
        var statusText: String?
        var displayName: String
        var miniAppId: String
    }

    var title: String
    var subtitle: String?
    var miniAppId: String
    var displayName: String
    var activityId: String
}

struct MiniAppStatusAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable {
        var statusLabel: String
        /// "pending", "success", "failure" or "info". A String, not an enum: a variant added
        /// later must not make the whole update undecodable on an older app.
        var statusVariant: String
        var footnote: String?
        var displayName: String
        var miniAppId: String
    }

    var title: String
    var subtitle: String?
    var miniAppId: String
    var displayName: String
    var activityId: String
}

struct MiniAppCountdownAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable {
        /// Sent as seconds since 2001-01-01T00:00:00Z, what the default JSONDecoder reads a Date from.
        var deadline: Date
        var footnote: String?
        var displayName: String
        var miniAppId: String
    }

    var title: String
    var subtitle: String?
    var miniAppId: String
    var displayName: String
    var activityId: String
}
// END widget structs

/// The payloads decode, with Foundation's `JSONDecoder` and its default strategies (what
/// ActivityKit uses), into the structs the doc tells the host to declare.
@Suite struct LiveActivityAppDecodingTests {
    static let id = LiveActivityFixtures.activityID.uuidString.lowercased()

    /// The `content-state` and `attributes` of a rendered APNs body, as bytes.
    static func parts(_ rendered: RenderedLiveActivity) throws -> (state: Data, attributes: Data?) {
        let aps = try #require(try JSONParser.parse(rendered.apns)["aps"])
        let state = try #require(aps["content-state"])
        return (Data(JSONWriter.bytes(state)), aps["attributes"].map { Data(JSONWriter.bytes($0)) })
    }

    /// Android's `state` data value, which the app decodes with the same structs.
    static func androidState(_ rendered: RenderedLiveActivity) throws -> Data {
        let data = try #require(try JSONParser.parse(rendered.fcm)["data"])
        return Data(try #require(data["state"]?.stringValue).utf8)
    }

    @Test func progressDecodes() throws {
        let start = LiveActivityFixtures.render(.progress, .start)
        let (state, attributes) = try Self.parts(start)
        let decoded = try JSONDecoder().decode(MiniAppProgressAttributes.ContentState.self, from: state)
        #expect(
            decoded
                == .init(
                    stages: ["Ordered", "Packed", "Shipped", "Delivered"], currentStage: 1, progress: 0.25,
                    statusText: "Packed in Rotterdam", displayName: "Gacha", miniAppId: "fun.pull.gacha"))
        let attrs = try JSONDecoder().decode(MiniAppProgressAttributes.self, from: try #require(attributes))
        #expect(attrs.title == "Order #1042" && attrs.subtitle == "2 items")
        #expect(attrs.miniAppId == "fun.pull.gacha" && attrs.displayName == "Gacha" && attrs.activityId == Self.id)
        #expect(
            try JSONDecoder().decode(MiniAppProgressAttributes.ContentState.self, from: try Self.androidState(start))
                == decoded)

        // An omitted optional decodes as nil.
        let update = try Self.parts(LiveActivityFixtures.render(.progress, .update)).state
        #expect(try JSONDecoder().decode(MiniAppProgressAttributes.ContentState.self, from: update).statusText == nil)
    }

    @Test func statusDecodes() throws {
        let start = LiveActivityFixtures.render(.status, .start)
        let (state, attributes) = try Self.parts(start)
        #expect(
            try JSONDecoder().decode(MiniAppStatusAttributes.ContentState.self, from: state)
                == .init(
                    statusLabel: "Waiting for confirmations", statusVariant: "pending", footnote: "0 of 6",
                    displayName: "Gacha", miniAppId: "fun.pull.gacha"))
        let attrs = try JSONDecoder().decode(MiniAppStatusAttributes.self, from: try #require(attributes))
        #expect(attrs.title == "Deposit 0.5 ETH" && attrs.subtitle == nil && attrs.activityId == Self.id)
        let end = try Self.parts(LiveActivityFixtures.render(.status, .end)).state
        let final = try JSONDecoder().decode(MiniAppStatusAttributes.ContentState.self, from: end)
        #expect(final.statusVariant == "success" && final.footnote == nil)
        for variant in LiveActivityState.StatusVariant.allCases {
            let state = LiveActivityState.status(.init(statusLabel: "x", statusVariant: variant))
            let bytes = Data(JSONWriter.bytes(state.contentState(displayName: "G", miniAppID: "m")))
            #expect(
                try JSONDecoder().decode(MiniAppStatusAttributes.ContentState.self, from: bytes).statusVariant
                    == variant.rawValue)
        }
    }

    @Test func countdownDeadlineDecodesAsTheSameInstant() throws {
        let start = LiveActivityFixtures.render(.countdown, .start)
        let (state, attributes) = try Self.parts(start)
        let decoded = try JSONDecoder().decode(MiniAppCountdownAttributes.ContentState.self, from: state)
        #expect(decoded.deadline == LiveActivityFixtures.deadline)
        #expect(decoded.deadline == ISO8601.parse("2026-06-01T00:45:00Z"))
        #expect(
            decoded.footnote == "Ends at 00:45 UTC" && decoded.displayName == "Gacha"
                && decoded.miniAppId == "fun.pull.gacha")
        let attrs = try JSONDecoder().decode(MiniAppCountdownAttributes.self, from: try #require(attributes))
        #expect(attrs.title == "Flash sale" && attrs.subtitle == "Gacha tickets")
        let android = try JSONDecoder().decode(
            MiniAppCountdownAttributes.ContentState.self, from: try Self.androidState(start))
        #expect(android == decoded)
    }

    @Test func everyRenderedStateDecodes() throws {
        for template in LiveActivityTemplate.allCases {
            for event in LiveActivityEvent.allCases {
                let state = try Self.parts(LiveActivityFixtures.render(template, event)).state
                switch template {
                case .progress: _ = try JSONDecoder().decode(MiniAppProgressAttributes.ContentState.self, from: state)
                case .status: _ = try JSONDecoder().decode(MiniAppStatusAttributes.ContentState.self, from: state)
                case .countdown: _ = try JSONDecoder().decode(MiniAppCountdownAttributes.ContentState.self, from: state)
                }
            }
        }
    }

    /// The structs the doc shows are the ones above, character for character.
    @Test func theDocDeclaresTheseStructs() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// BEGIN widget structs"))
        let lineEnd = try #require(source.range(of: "\n", range: begin.upperBound..<source.endIndex))
        let end = try #require(source.range(of: "// END widget structs"))
        let structs = String(source[lineEnd.upperBound..<end.lowerBound])
        #expect(try LiveActivityDocTests.lifecycleDoc().contains("```swift\n" + structs + "```\n"))
    }
}
