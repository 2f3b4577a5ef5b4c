import Foundation
import HeraldCore
import Testing

@Suite struct RevocationEndsTests {
    struct CountingSigner: PayloadSigner {
        let keyID = "k2026"
        func signature(for message: [UInt8]) -> String { String(repeating: "s", count: 43) }
    }

    static func activity(_ template: LiveActivityTemplate, lastTimestamp: Int) -> StoredLiveActivity {
        StoredLiveActivity(
            id: UUID(), template: template.rawValue,
            attributesJSON: JSONWriter.string(LiveActivityFixtures.attributes(template).json),
            stateJSON: JSONWriter.string(LiveActivityFixtures.state(template, .update).json),
            lastTimestamp: lastTimestamp, createdAt: LiveActivityFixtures.start,
            expiresAt: LiveActivityFixtures.expiresAt)
    }

    @Test func eachActivityEndsNowAfterItsLastEventAndOneFollowingAChannelEndsWithIt() throws {
        let now = LiveActivityFixtures.start.addingTimeInterval(600)
        let stamp = Int(now.timeIntervalSince1970)
        let ended = Self.activity(.progress, lastTimestamp: stamp - 60)
        let ahead = Self.activity(.status, lastTimestamp: stamp + 5)
        let following = Self.activity(.countdown, lastTimestamp: stamp - 30)
        var asked = 0
        let ends = try RevocationEnds(
            [(ended, false), (ahead, false), (following, true)], miniAppID: "fun.pull.gacha",
            displayName: "Gacha", now: now,
            signer: {
                asked += 1
                return CountingSigner()
            })
        #expect(ends.ids == [ended.id, ahead.id, following.id])
        // After every earlier event: now, or one past a newer last event.
        #expect(ends.timestamps == [stamp, stamp + 6, stamp - 30])
        let rendered = try ended.immediateEnd(
            miniAppID: "fun.pull.gacha", displayName: "Gacha", now: now,
            signer: CountingSigner())
        #expect(ends.apns[0] == String(decoding: rendered.rendered.apns, as: UTF8.self))
        #expect(ends.fcm[0] == String(decoding: rendered.rendered.fcm, as: UTF8.self))
        #expect(ends.apns[0].contains(#""event":"end""#) && ends.apns[0].contains("dismissal-date"))
        #expect(ends.apns[2].isEmpty && ends.fcm[2].isEmpty)
        #expect(asked == 2)
    }

    @Test func nothingToRenderAsksForNoSigner() throws {
        let ends = try RevocationEnds(
            [(Self.activity(.status, lastTimestamp: 1), true)], miniAppID: "fun.pull.gacha",
            displayName: "Gacha", now: Date(),
            signer: {
                Issue.record("the signer was asked for")
                return CountingSigner()
            })
        #expect(ends.ids.count == 1 && !ends.isEmpty)
        #expect(
            try RevocationEnds([], miniAppID: "a", displayName: "A", now: Date(), signer: { CountingSigner() })
                .isEmpty)
    }

    @Test func aStoredFormThatNoLongerDecodesIsAnInternalError() {
        let broken = StoredLiveActivity(
            id: UUID(), template: "progress", attributesJSON: "{", stateJSON: "{}",
            lastTimestamp: 0, createdAt: Date(), expiresAt: Date())
        #expect(throws: HeraldError.internalError) {
            try RevocationEnds(
                [(broken, false)], miniAppID: "a", displayName: "A", now: Date(),
                signer: { CountingSigner() })
        }
    }
}
