import Foundation

/// Everything one push writes to the outbox, as every path builds it: the intake (its batch, inside `IntakePush`,
/// and its two-round-trip path), a reminder and `heraldctl backfill`. Its deliveries are written by one SQL function
/// (Sources/Store/Migrations/functions/outbox_write.sql), which is also the one place their expiry is computed:
/// `ttlSeconds` after `dueAt` (functions/push_expiry.sql).
public struct OutboxWrite: Sendable {
    /// One delivery, rendered and signed for its device.
    public struct Delivery: Sendable, Equatable {
        public var id: UUID
        public var service: PushService
        public var userID: String
        public var deviceID: String
        public var environment: String
        /// The bytes the worker sends (the FCM message without its token and TTL), as text.
        public var payload: String

        public init(
            id: UUID, service: PushService, userID: String, deviceID: String, environment: String,
            payload: String
        ) {
            self.id = id
            self.service = service
            self.userID = userID
            self.deviceID = deviceID
            self.environment = environment
            self.payload = payload
        }
    }

    /// What the recipients' resolution found, for the audit row and the stored answer, when it is known before the
    /// write (the intake's batch statement resolves and counts them itself).
    public struct Resolved: Sendable {
        /// The 202 body, also stored for the Idempotency-Key's replays.
        public var response: String
        public var recipients: Int
        /// The users who had opted out of the mini-app.
        public var suppressed: Int
        /// `{"emails":[...],"wallets":[...]}`: the identifiers that matched nobody.
        public var missingJSON: String
        /// The users the push reached, for `user_senders`.
        public var senderUserIDs: [String]

        public init(
            response: String, recipients: Int, suppressed: Int, missingJSON: String,
            senderUserIDs: [String]
        ) {
            self.response = response
            self.recipients = recipients
            self.suppressed = suppressed
            self.missingJSON = missingJSON
            self.senderUserIDs = senderUserIDs
        }
    }

    /// Partner traffic, claimed first.
    public static let realtimeLane = 0
    /// Operator backfills.
    public static let bulkLane = 1

    /// The audit row's id (a `UUIDv7`) and its time, which names the row's partition.
    public var requestID: UUID
    public var createdAt: Date
    public var partnerID: UUID
    public var miniAppID: String
    /// `realtimeLane` or `bulkLane`.
    public var lane: Int
    /// As the user sees it: with the partner's brand prefix.
    public var title: String
    public var body: String
    public var deepLink: String?
    /// The partner's data, a JSON object.
    public var dataJSON: String
    /// When a scheduled push is due; nil: at once.
    public var sendAt: Date?
    /// The partner's TTL, else the default (`PushRules.ttlSeconds(for:)`).
    public var ttlSeconds: Int
    /// Stored on the deliveries for the host's guards (Sources/Store/Migrations/functions/user_guards.sql); nil for
    /// the rows they leave alone (backfills, reminders).
    public var interruptionLevel: InterruptionLevel?
    /// The partner's collapse key: the writer derives the deliveries' collapse id from it and the mini-app
    /// (Sources/Store/Migrations/functions/collapse_id.sql), and they supersede older ones with that id.
    public var collapseKey: String?
    /// The request's Idempotency-Key and its body's SHA-256 (hex); both nil without a key.
    public var idempotencyKey: String?
    public var bodyHash: String?
    public var deliveries: [Delivery]
    public var resolved: Resolved?

    public init(
        requestID: UUID, createdAt: Date, partnerID: UUID, miniAppID: String, lane: Int = realtimeLane,
        title: String, body: String, deepLink: String?, dataJSON: String = "{}", sendAt: Date?,
        ttlSeconds: Int, interruptionLevel: InterruptionLevel?, collapseKey: String? = nil,
        idempotencyKey: String? = nil,
        bodyHash: String? = nil, deliveries: [Delivery] = [], resolved: Resolved? = nil
    ) {
        self.requestID = requestID
        self.createdAt = createdAt
        self.partnerID = partnerID
        self.miniAppID = miniAppID
        self.lane = lane
        self.title = title
        self.body = body
        self.deepLink = deepLink
        self.dataJSON = dataJSON
        self.sendAt = sendAt
        self.ttlSeconds = ttlSeconds
        self.interruptionLevel = interruptionLevel
        self.collapseKey = collapseKey
        self.idempotencyKey = idempotencyKey
        self.bodyHash = bodyHash
        self.deliveries = deliveries
        self.resolved = resolved
    }

    /// A new request's id and time, made at `now`.
    public static func newRequest(at now: Date) -> (id: UUID, createdAt: Date) {
        let id = UUIDv7.make(at: now)
        return (id, UUIDv7.timestamp(of: id)!)
    }

    /// When the deliveries are due: `sendAt`, else the request's creation.
    public var dueAt: Date { sendAt ?? createdAt }

    /// When the deliveries expire, `ttlSeconds` after `dueAt`: the rows' expiry as the writer computes it
    /// (functions/push_expiry.sql), for a payload rendered once the request exists (a reminder's `exp`).
    public var expiresAt: Date { dueAt.addingTimeInterval(Double(ttlSeconds)) }
}
