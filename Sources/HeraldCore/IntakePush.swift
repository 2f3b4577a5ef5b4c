import Foundation

/// One validated push as the intake's batch statement takes it (Sources/Store/IntakeWriter.swift,
/// sql/functions/intake_push.sql): the audit row's fields (`write`, without deliveries: the statement resolves the
/// recipients), the partner's limits, the identifiers, and deliveries rendered up front for both services, each
/// signed for the user it expects (the statement gives a user's k-th device the k-th slot of that user, with the
/// payload its service needs).
public struct IntakePush: Sendable {
    /// One delivery rendered before its device is known: its id, the user its envelope is bound to (`sig2`), and
    /// both services' payloads. Only a device of that user takes it.
    public struct Slot: Sendable {
        public var id: UUID
        public var userID: String
        /// For a push with `localized` variants, the locale its user had when the slot was rendered in the variant
        /// it matches (`""`: none); the statement gives the slot only to a device whose user's locale is still that.
        /// Nil for a push without variants: every user gets the same text.
        public var locale: String?
        public var apns: [UInt8]
        public var fcm: [UInt8]
    }

    /// A user the intake expects a push to resolve to, and that user's locale (`PUT /api/internal/users/{id}`) as
    /// last seen.
    public struct Recipient: Sendable, Hashable {
        public var userID: String
        public var locale: String?

        public init(userID: String, locale: String?) {
            self.userID = userID
            self.locale = locale
        }
    }

    public var write: OutboxWrite
    public var partner: PartnerProfile
    /// The intake's clock when the push arrived (the Idempotency-Key's window, whether it is due now).
    public var now: Date
    public var emails: [String]
    public var wallets: [String]
    /// A push resolving to a device no slot fits (another user's, or more devices than its user's slots) comes back
    /// as `render`.
    public var slots: [Slot]
}
