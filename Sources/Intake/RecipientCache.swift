import HeraldCore
import Store
import Synchronization

/// Who a recipient identifier resolved to when the intake last saw it: (tenant, email or wallet) -> userId and that
/// user's locale, or nobody, learnt from the batch statement's 'render' answers (`IntakePushOutcome.render`).
///
/// It lets the intake sign a push's delivery slots up front for the user each delivery's envelope is bound to
/// (`sig2`), so a push to a known recipient is written by the one batch statement (`IntakeWriter`). It is only a
/// guess: herald_intake_push (sql/functions/intake_push.sql) gives a slot only to a device of the slot's user, and a
/// stale entry (an email moved to another user) sends the push back as 'render', whose answer replaces it. So no
/// entry expires and nothing invalidates one. The locale is a guess too: a push with `localized` variants renders each
/// slot in the variant its user's cached locale matches, and the statement gives the slot only to a device whose
/// user's stored locale is still that one (else 'render', whose answer carries the new one). Entries are keyed by
/// tenant: a partner only ever reads its own
/// tenant's, as its pushes resolve only there.
///
/// Bounded by two generations of at most `capacity / 2` entries each: entries go to the young one; when it is full,
/// it becomes the old one and the previous old one is dropped. An entry read from the old generation moves back to
/// the young one, so what is in use stays and the rest ages out, with no per-entry bookkeeping.
final class RecipientCache: Sendable {
    private struct Key: Hashable {
        let tenant: String
        let kind: ResolvedIdentifier.Kind
        let identifier: String
    }

    /// The user an identifier resolved to (nil: nobody in its tenant) and that user's locale.
    private struct Entry {
        let userID: String?
        let locale: String?
    }

    private struct Generations {
        var young: [Key: Entry] = [:]
        var old: [Key: Entry] = [:]
    }

    /// The most entries held (rounded up to an even number); 0 turns the cache off.
    let capacity: Int
    private let generations = Mutex(Generations())

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The users `emails` and `wallets` of `tenant` resolved to, each once, in the order first named (none for an
    /// identifier that resolved to nobody); nil unless every identifier is known.
    func users(tenant: String, emails: [String], wallets: [String]) -> [IntakePush.Recipient]? {
        guard capacity > 0 else { return nil }
        let keys = Self.keys(tenant: tenant, emails: emails, wallets: wallets)
        return generations.withLock { generations in
            var users: [IntakePush.Recipient] = []
            for key in keys {
                guard let entry = generations.young[key] ?? generations.old[key] else { return nil }
                if generations.young[key] == nil { insert(key, entry, into: &generations) }
                if let user = entry.userID, !users.contains(where: { $0.userID == user }) {
                    users.append(IntakePush.Recipient(userID: user, locale: entry.locale))
                }
            }
            return users
        }
    }

    /// Records who a push's `emails` and `wallets` of `tenant` resolved to (`resolved`; an identifier it leaves out
    /// resolved to nobody), replacing what was known.
    func learn(tenant: String, emails: [String], wallets: [String], resolved: [ResolvedIdentifier]) {
        guard capacity > 0 else { return }
        var users: [Key: ResolvedIdentifier] = [:]
        for item in resolved { users[Key(tenant: tenant, kind: item.kind, identifier: item.identifier)] = item }
        generations.withLock { generations in
            for key in Self.keys(tenant: tenant, emails: emails, wallets: wallets) {
                insert(key, Entry(userID: users[key]?.userID, locale: users[key]?.locale), into: &generations)
            }
        }
    }

    /// Forgets `emails` and `wallets` of `tenant` (they resolved to no device: whoever they named, the guess is
    /// no use to the next push).
    func forget(tenant: String, emails: [String], wallets: [String]) {
        guard capacity > 0 else { return }
        let keys = Self.keys(tenant: tenant, emails: emails, wallets: wallets)
        generations.withLock { generations in
            for key in keys {
                generations.young[key] = nil
                generations.old[key] = nil
            }
        }
    }

    /// Entries held now (at most `capacity`).
    var count: Int {
        generations.withLock { $0.young.count + $0.old.count }
    }

    private static func keys(tenant: String, emails: [String], wallets: [String]) -> [Key] {
        emails.map { Key(tenant: tenant, kind: .email, identifier: $0) }
            + wallets.map { Key(tenant: tenant, kind: .wallet, identifier: $0) }
    }

    private func insert(_ key: Key, _ entry: Entry, into generations: inout Generations) {
        if generations.young[key] == nil && generations.young.count >= max(1, capacity / 2) {
            generations.old = generations.young
            generations.young = [:]
        }
        generations.young[key] = entry
        generations.old[key] = nil
    }
}
