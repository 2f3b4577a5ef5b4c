/// What an admin change does to a partner's webhook.
public enum PartnerWebhookChange: Sendable, Equatable {
    /// A URL; `secret` replaces the stored one when given (a new URL gets a new secret).
    case set(url: String, secret: String?)
    /// No webhook any more (pending events of it are not sent).
    case remove

    /// The change a requested `webhookUrl` (nil: remove) makes to `existing`, and the secret to show the admin
    /// once: every new URL gets a new secret from `newSecret`, at once and without overlap (a new endpoint has no
    /// use for the old secret, and whoever ran the old endpoint should not be able to sign for the new one); the
    /// same URL again keeps the stored one. The admin API and `heraldctl partners update` both decide here.
    public static func requested(_ url: String?, for existing: PartnerRecord, newSecret: () throws -> String) rethrows
        -> (change: PartnerWebhookChange, shownSecret: String?)
    {
        guard let url else { return (.remove, nil) }
        let secret = existing.webhookURL == url ? nil : try newSecret()
        return (.set(url: url, secret: secret), secret)
    }

    /// The webhook's URL afterwards; nil when removed.
    public var url: String? {
        if case .set(let url, _) = self { return url }
        return nil
    }

    /// The new secret; nil when the stored one stays or the webhook is removed.
    public var secret: String? {
        if case .set(_, let secret) = self { return secret }
        return nil
    }

    /// A new secret (a new URL) or no webhook ends the overlap of the last rotation at once: the old secret was for
    /// the old endpoint.
    public var endsPreviousSecret: Bool {
        switch self {
        case .set(_, let secret): secret != nil
        case .remove: true
        }
    }
}
