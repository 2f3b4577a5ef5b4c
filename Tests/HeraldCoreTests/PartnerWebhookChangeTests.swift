import Foundation
import Testing

@testable import HeraldCore

/// The webhook rules of an admin change: a new URL gets a new secret, the same URL keeps the stored one.
@Suite struct PartnerWebhookChangeTests {
    func partner(webhookURL: String?) -> PartnerRecord {
        PartnerRecord(
            id: UUID(), miniAppID: "app.one", displayName: "One", tenantID: "t1", rateLimitPerMinute: 60,
            rateLimitPerDay: 1_000, iconURL: nil, iconUpdatedAt: nil, webhookURL: webhookURL,
            createdAt: Date(timeIntervalSince1970: 0), revokedAt: nil, sound: .systemDefault, allowTimeSensitive: false,
            previousKeyExpiresAt: nil, suspendedAt: nil, previousWebhookSecretExpiresAt: nil)
    }

    @Test("a new URL gets a new secret, shown once, and ends the previous secret's overlap")
    func newURL() {
        let (change, shown) = PartnerWebhookChange.requested(
            "https://new.example/hook", for: partner(webhookURL: "https://old.example/hook"), newSecret: { "s3cret" })
        #expect(change == .set(url: "https://new.example/hook", secret: "s3cret"))
        #expect(shown == "s3cret")
        #expect(change.url == "https://new.example/hook" && change.secret == "s3cret")
        #expect(change.endsPreviousSecret)
    }

    @Test("a first URL gets a secret too")
    func firstURL() {
        let (change, shown) = PartnerWebhookChange.requested(
            "https://new.example/hook", for: partner(webhookURL: nil), newSecret: { "first" })
        #expect(change == .set(url: "https://new.example/hook", secret: "first") && shown == "first")
    }

    @Test("the same URL again keeps the stored secret: none made, none shown, the overlap left as it is")
    func sameURL() {
        var asked = false
        let (change, shown) = PartnerWebhookChange.requested(
            "https://same.example/hook", for: partner(webhookURL: "https://same.example/hook"),
            newSecret: {
                asked = true
                return "unused"
            })
        #expect(!asked)
        #expect(change == .set(url: "https://same.example/hook", secret: nil) && shown == nil)
        #expect(change.secret == nil && !change.endsPreviousSecret)
    }

    @Test("no URL removes the webhook and ends the previous secret's overlap")
    func remove() {
        let (change, shown) = PartnerWebhookChange.requested(
            nil, for: partner(webhookURL: "https://a.example"),
            newSecret: { "unused" })
        #expect(change == .remove && shown == nil)
        #expect(change.url == nil && change.secret == nil && change.endsPreviousSecret)
    }
}
