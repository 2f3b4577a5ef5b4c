import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Store

/// The host's reminders: `POST`, `GET /api/internal/users/{userId}/reminders` and
/// `DELETE .../reminders/{reminderId}`. The host calls them for a signed-in user on behalf of a
/// mini-app's bundle (`based.notifications.schedule(..., when)`).
///
/// A reminder is a scheduled push from that mini-app to one user, under the push's rules: brand prefix and
/// icon from the partner row, deep link inside the mini-app's namespace, the payload size checked here, the
/// signed envelope, an audit row. Its deliveries are written now, one
/// per device with a valid token, due at `at` (as a push with `sendAt`); the worker's claim applies
/// the send-time checks (an opt-out since, a token gone). A device registered after the schedule does
/// not get it. Reminders do not count against the partner's rate limits: the per-(user, mini-app)
/// cap bounds them (sql/functions/schedule_reminder.sql).
struct ReminderHandler: Sendable {
    let store: ReminderStore
    let rules: PushRules
    let signer: HMACSigner
    /// HERALD_REMINDER_MAX_PENDING.
    let maxPending: Int
    let metrics: IntakeMetrics
    let notifier: DeliveryNotifier
    let clock: @Sendable () -> Date

    static let routes: [IntakeRoute] = [
        .host("POST", "/api/internal/users/{userId}/reminders") { try $0.reminder.schedule($1) },
        .host("GET", "/api/internal/users/{userId}/reminders") { try $0.reminder.list($1) },
        .host("DELETE", "/api/internal/users/{userId}/reminders/{reminderId}") { try $0.reminder.cancel($1) },
    ]

    func schedule(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try HostDirectoryRules.externalID(request.parameter("userId"), field: "userId")
        let idempotencyKey = try PartnerAdmission.idempotencyKey(request)
        let bodyHash = idempotencyKey.map { _ in Digest.hex(Digest.sha256(request.http.body)) }
        // A retried schedule is answered as the first was, before anything checked now (its time, since passed; an
        // opt-out since) could refuse it.
        if let idempotencyKey, let bodyHash, let keyed = try store.keyed(userID: userID, key: idempotencyKey) {
            return try replay(keyed, bodyHash: bodyHash)
        }
        let now = clock()
        let reminder = try ReminderValidator.validate(request.jsonBody(), rules: rules, now: now)
        let lookup = try store.lookup(userID: userID, miniAppID: reminder.miniAppID)
        guard let audience = lookup.audience else { throw DirectoryStore.userNotFound }
        guard let partner = lookup.partner else { throw Self.unknownMiniApp }
        let reminderID = UUIDv7.make(at: now)
        let audit = OutboxWrite.newRequest(at: now)
        // Due at `at`, or at once when it was slightly past: as a push with that sendAt.
        let sendAt = reminder.at > audit.createdAt ? reminder.at : nil
        var push = OutboxWrite(
            requestID: audit.id, createdAt: audit.createdAt, partnerID: partner.id, miniAppID: partner.miniAppID,
            title: "", body: reminder.body, deepLink: reminder.deepLink, sendAt: sendAt,
            ttlSeconds: rules.ttlSeconds(for: reminder.push), interruptionLevel: nil, idempotencyKey: idempotencyKey,
            bodyHash: bodyHash)
        let content = PushContent(request: reminder.push, partner: partner, publicURL: rules.publicURL)
        push.title = content.title
        let template = PushTemplate(content, expiresAt: push.expiresAt, signer: signer)
        try PushPayload.checkSize(template)
        guard audience.tenantID == partner.tenantID else { throw Self.tenantMismatch }
        guard !audience.optedOut else { throw Self.optedOut }
        guard !audience.devices.isEmpty else { throw Self.noDevice }

        push.deliveries = PushPreparation.deliveries(to: audience.devices, now: now) { _ in template }
        let write = ReminderWrite(
            reminderID: reminderID, userID: userID, partner: partner, maxPending: maxPending,
            title: reminder.title, at: reminder.at, push: push)
        switch try store.schedule(write) {
        case .scheduled:
            metrics.recordPushAccepted(deliveries: push.deliveries.count)
            // Due at once (an `at` within the clock-skew tolerance): wake the workers as a push does.
            if reminder.at <= audit.createdAt { notifier.signal() }
            let record = ReminderRecord(
                id: reminderID, miniAppID: reminder.miniAppID, title: reminder.title, body: reminder.body,
                deepLink: reminder.deepLink, at: reminder.at, status: .scheduled, createdAt: audit.createdAt)
            return Reply.json(201, Self.json(record))
        case .limited(let pending):
            // No Retry-After: room comes back when one of them is sent or cancelled, which may be days away.
            throw HeraldError(
                status: 429, code: "too_many_reminders",
                message:
                    "The user has \(pending) pending reminders of this mini-app, the most allowed (\(maxPending)); "
                    + "one must be sent or cancelled first.", field: "miniAppId")
        case .userNotFound: throw DirectoryStore.userNotFound
        case .tenantMismatch: throw Self.tenantMismatch
        case .keyReused: throw PartnerAdmission.keyReused
        case .replay:
            // A schedule with the same key committed between the check above and this one.
            guard let idempotencyKey, let bodyHash, let keyed = try store.keyed(userID: userID, key: idempotencyKey)
            else { throw HeraldError.internalError }
            return try replay(keyed, bodyHash: bodyHash)
        }
    }

    /// The first answer again (201, the reminder as scheduled), or 422 `idempotency_key_reused` for another body.
    private func replay(_ keyed: KeyedReminder, bodyHash: String) throws -> HTTPResponse {
        guard keyed.bodyHash == bodyHash else { throw PartnerAdmission.keyReused }
        metrics.recordIdempotentReplay()
        return Reply.json(201, Self.json(keyed.record), headers: [("Idempotent-Replayed", "true")])
    }

    func list(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try HostDirectoryRules.externalID(request.parameter("userId"), field: "userId")
        guard let reminders = try store.pending(userID: userID) else { throw DirectoryStore.userNotFound }
        return Reply.json(
            200,
            .object([
                ("userId", .string(userID)), ("reminders", .array(reminders.map(Self.json))),
            ]))
    }

    func cancel(_ request: RoutedRequest) throws -> HTTPResponse {
        let userID = try HostDirectoryRules.externalID(request.parameter("userId"), field: "userId")
        let reminderID = try request.uuid("reminderId")
        switch try store.cancel(userID: userID, reminderID: reminderID) {
        case .cancelled: return Reply.noContent()
        case .sent:
            throw HeraldError(
                status: 409, code: "reminder_already_sent",
                message: "The reminder is already being delivered or was delivered; it cannot be cancelled.")
        case .notFound: throw Self.reminderNotFound
        }
    }

    /// A reminder as the API shows it: the title as given (the user sees it with the brand prefix).
    static func json(_ reminder: ReminderRecord) -> JSONValue {
        .object([
            ("reminderId", .string(reminder.id.uuidString.lowercased())), ("miniAppId", .string(reminder.miniAppID)),
            ("title", .string(reminder.title)), ("body", .string(reminder.body)),
            ("deepLink", reminder.deepLink.map { .string($0) } ?? .null), ("at", .string(ISO8601.format(reminder.at))),
            ("status", .string(reminder.status.rawValue)), ("createdAt", .string(ISO8601.format(reminder.createdAt))),
        ])
    }

    static let unknownMiniApp = HeraldError(
        status: 422, code: "unknown_mini_app", message: "No active partner has this miniAppId.", field: "miniAppId")
    static let tenantMismatch = HeraldError(
        status: 403, code: "tenant_mismatch", message: "The user is not in the tenant of this mini-app's partner.",
        field: "miniAppId")
    static let optedOut = HeraldError(
        status: 409, code: "opted_out", message: "The user opted out of this mini-app's notifications.",
        field: "miniAppId")
    static let noDevice = HeraldError(
        status: 409, code: "no_device", message: "The user has no device with a valid push token.")
    static let reminderNotFound = HeraldError(
        status: 404, code: "reminder_not_found", message: "The user has no reminder with this id.")
}
