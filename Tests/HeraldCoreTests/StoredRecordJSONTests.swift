import Foundation
import Testing

@testable import HeraldCore

/// What the APIs show of stored records: the audit trail's entries, devices' token health, a user's senders.
@Suite struct StoredRecordJSONTests {
    let at = Date(timeIntervalSince1970: 1_795_959_651)

    @Test("an audit entry shows every field, nil ones as null, the partner id in lower case")
    func auditEntry() {
        let partner = UUID(uuidString: "0190F0A0-0000-7000-8000-00000000ABCD")!
        let entry = AdminAuditEntry(
            id: 42, at: at, actor: "console", actorDetail: "abcdef012345", client: nil, action: "partner.updated",
            partnerID: partner, miniAppID: "app.one", detail: .object([("displayName", .string("One"))]))
        #expect(
            JSONWriter.string(entry.json)
                == JSONWriter.string(
                    .object([
                        ("id", .number(42)), ("at", .string(ISO8601.format(at))), ("actor", .string("console")),
                        ("actorDetail", .string("abcdef012345")), ("client", .null),
                        ("action", .string("partner.updated")),
                        ("partnerId", .string("0190f0a0-0000-7000-8000-00000000abcd")),
                        ("miniAppId", .string("app.one")), ("detail", .object([("displayName", .string("One"))])),
                    ])))
    }

    @Test("a token is absent, valid, or invalid with its reason and time; only an invalid one shows them")
    func tokenHealth() {
        #expect(TokenHealth(hasToken: false, invalidatedAt: at, reason: "Unregistered").state == .absent)
        let valid = TokenHealth(hasToken: true, invalidatedAt: nil, reason: "Unregistered")
        #expect(valid.state == .valid && valid.reason == nil && valid.since == nil)
        let invalid = TokenHealth(hasToken: true, invalidatedAt: at, reason: "BadDeviceToken")
        #expect(
            JSONWriter.string(invalid.json)
                == JSONWriter.string(
                    .object([
                        ("state", .string("invalid")), ("reason", .string("BadDeviceToken")),
                        ("since", .string(ISO8601.format(at))),
                    ])))
    }

    @Test("a device's token states show each token's health and the push-to-start tokens by template")
    func deviceTokenStates() {
        let none = TokenHealth(hasToken: false, invalidatedAt: nil, reason: nil)
        let valid = TokenHealth(hasToken: true, invalidatedAt: nil, reason: nil)
        let states = DeviceTokenStates(
            deviceID: "d1", platform: "ios", environment: "production", bundleID: nil, apns: valid,
            apnsPushToStart: none, fcm: none, apnsPushToStartTemplates: [(template: "score", health: valid)],
            registeredAt: nil, updatedAt: at)
        guard case .object(let fields) = states.json else {
            Issue.record("not an object")
            return
        }
        #expect(
            fields.map(\.0) == [
                "deviceId", "platform", "environment", "bundleId", "apns", "apnsPushToStart",
                "apnsPushToStartTemplates", "fcm", "registeredAt", "updatedAt",
            ])
        #expect(JSONWriter.string(fields[6].1) == JSONWriter.string(.object([("score", valid.json)])))
        #expect(fields[3].1 == .null && fields[8].1 == .null)
        #expect(fields[9].1 == .string(ISO8601.format(at)))
    }

    @Test("a sender with an icon points at the icon's payload size; one without has none")
    func senderIconPath() {
        let with = SenderEntry(
            miniAppID: "app.one", displayName: "One", hasIcon: true, firstSentAt: at, optedOut: false)
        #expect(with.iconPath == PartnerIcon.path(miniAppID: "app.one", size: PartnerIcon.payloadSize))
        let without = SenderEntry(
            miniAppID: "app.two", displayName: nil, hasIcon: false, firstSentAt: nil, optedOut: true)
        #expect(without.iconPath == nil)
    }
}
