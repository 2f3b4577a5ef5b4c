import Foundation

/// A push that passed every check that needs no database, with its payloads rendered once for all its deliveries.
public struct CheckedPush: Sendable {
    public let request: PushRequest
    public let content: PushContent
    public let template: PushTemplate
}

/// The rules and rendering between a push body and the rows it writes (`OutboxWrite`), shared by the intake's push
/// endpoint, its reminders and `heraldctl backfill sends`, so all of them write exactly the same rows.
public enum PushPreparation {
    /// Fields, what the partner row allows, and payload size of a push body for `partner`.
    /// Renders once: the size check reads the template every delivery is written from. A push naming a `mediaId`
    /// gets its `attachmentUrl` from `attachment` (the media's id and the push's expiry, which the media must
    /// outlive), called after every other check; without one, such a push is refused.
    public static func check(
        _ json: JSONValue, partner: PartnerProfile, rules: PushRules, signer: any PayloadSigner,
        now: Date, attachment: ((UUID, Date) throws(HeraldError) -> String)? = nil
    ) throws(HeraldError) -> CheckedPush {
        let push = try PushRequestValidator.validate(json, miniAppID: partner.miniAppID, rules: rules, now: now)
        try push.interruptionLevel.authorize(for: partner)
        let expiresAt = rules.expiresAt(for: push, acceptedAt: now)
        var attachmentURL: String?
        if let mediaID = push.mediaID {
            guard let attachment else {
                throw .invalidField("mediaId", "mediaId is accepted by POST /api/partners/notifications/push only.")
            }
            // Sized first with a URL of the very length the media's has, so a push too large touches no media row.
            let sameLength = (rules.publicURL ?? "") + PushMedia.path(id: mediaID, contentType: "", signer: signer)
            try PushPayload.checkSize(
                PushTemplate(
                    PushContent(request: push, partner: partner, publicURL: rules.publicURL, attachmentURL: sameLength),
                    expiresAt: expiresAt, signer: signer))
            attachmentURL = try attachment(mediaID, expiresAt)
        }
        let content = PushContent(
            request: push, partner: partner, publicURL: rules.publicURL, attachmentURL: attachmentURL)
        let template = PushTemplate(content, expiresAt: expiresAt, signer: signer)
        try PushPayload.checkSize(template)
        return CheckedPush(request: push, content: content, template: template)
    }

    /// Slots the intake renders for each user it expects a push to resolve to: a phone and a tablet (or a second
    /// phone). Each slot costs the push a copy of its template's two payloads and their signatures; a push whose
    /// devices all fit is written by the batch statement, sharing its batch's commit and leased to a worker.
    public static let intakeSlotsPerUser = 2
    /// The most users a push's slots are rendered for; a push to more takes the two-round-trip path.
    public static let intakeSlotUsers = 2

    /// The audit row's fields of a checked push, without deliveries: what `intakePush` and `prepare` both write.
    public static func write(
        _ checked: CheckedPush, partner: PartnerProfile, rules: PushRules, now: Date,
        idempotencyKey: String?, bodyHash: String?,
        lane: Int = OutboxWrite.realtimeLane
    ) -> OutboxWrite {
        let (push, content) = (checked.request, checked.content)
        let request = OutboxWrite.newRequest(at: now)
        return OutboxWrite(
            requestID: request.id, createdAt: request.createdAt, partnerID: partner.id, miniAppID: partner.miniAppID,
            lane: lane, title: content.title, body: content.body, deepLink: push.deepLink,
            dataJSON: JSONWriter.string(.object(push.data.map { ($0.key, .string($0.value)) })), sendAt: push.sendAt,
            // Every delivery carries an expiry (the worker's apns-expiration and android.ttl), counted from when the
            // push is due; without ttlSeconds, HERALD_DEFAULT_TTL_SECONDS.
            ttlSeconds: rules.ttlSeconds(for: push),
            // Partner traffic only: the bulk lane's backfills are the operator's, outside the user's guards.
            interruptionLevel: lane == OutboxWrite.realtimeLane ? push.interruptionLevel : nil,
            collapseKey: push.collapseKey, idempotencyKey: idempotencyKey, bodyHash: bodyHash)
    }

    /// A checked push as the intake's one-statement write takes it (`IntakePush`): the same fields `prepare`
    /// writes, and `intakeSlotsPerUser` deliveries rendered for each of `users`. Each delivery's envelope is bound
    /// to its recipient's userId (`sig2`, and `sig` over it), so a slot is signed for the user the intake expects
    /// (Sources/Intake/RecipientCache.swift), and the batch statement (sql/functions/intake_push.sql) gives it only
    /// to a device of that user; a push with a device no slot fits comes back as 'render'. A replay, a rate-limited
    /// push and one that resolves to no device are answered by the one statement whatever its slots.
    public static func intakePush(
        _ checked: CheckedPush, for users: [String], partner: PartnerProfile,
        rules: PushRules, now: Date, idempotencyKey: String?,
        bodyHash: String?
    ) -> IntakePush {
        IntakePush(
            write: write(
                checked, partner: partner, rules: rules, now: now, idempotencyKey: idempotencyKey,
                bodyHash: bodyHash),
            partner: partner, now: now, emails: checked.request.emails, wallets: checked.request.wallets,
            slots: intakeSlots(checked, for: users, now: now))
    }

    /// `intakeSlotsPerUser` deliveries for each of `users`, in that order, each with its own id and signed for its
    /// user, rendered for both services (which one a device needs is known only once Postgres has resolved it).
    public static func intakeSlots(_ checked: CheckedPush, for users: [String], now: Date) -> [IntakePush.Slot] {
        users.flatMap { user in
            (0..<intakeSlotsPerUser).map { _ in
                let id = UUIDv7.make(at: now)
                let rendering = checked.template.render(deliveryID: id, recipient: user)
                return IntakePush.Slot(id: id, userID: user, apns: rendering.apns, fcm: rendering.fcm)
            }
        }
    }

    /// One delivery for each of `devices`, each with its own id, rendered from `template` for its device's service
    /// and signed for its user.
    public static func deliveries(
        _ template: PushTemplate, to devices: [RecipientResolution.Device],
        now: Date
    ) -> [OutboxWrite.Delivery] {
        devices.map { device in
            let id = UUIDv7.make(at: now)
            let payload = template.render(deliveryID: id, recipient: device.userID, for: device.service)
            return OutboxWrite.Delivery(
                id: id, service: device.service, userID: device.userID,
                deviceID: device.deviceID, environment: device.environment,
                payload: String(decoding: payload, as: UTF8.self))
        }
    }

    /// Renders every delivery of a checked push to the devices its recipients resolved to;
    /// returns the 202 body and the rows to write. `lane`: `OutboxWrite.realtimeLane` or `bulkLane`.
    public static func prepare(
        _ checked: CheckedPush, partner: PartnerProfile, rules: PushRules,
        now: Date, resolution: RecipientResolution, idempotencyKey: String?, bodyHash: String?,
        lane: Int = OutboxWrite.realtimeLane
    ) -> ([UInt8], OutboxWrite) {
        let push = checked.request
        var write = write(
            checked, partner: partner, rules: rules, now: now, idempotencyKey: idempotencyKey,
            bodyHash: bodyHash, lane: lane)
        write.deliveries = deliveries(checked.template, to: resolution.devices, now: now)
        let suppressed = resolution.users.filter(\.optedOut).count
        let missingEmails = push.emails.filter { !resolution.matchedEmails.contains($0) }
        let missingWallets = push.wallets.filter { !resolution.matchedWallets.contains($0) }
        let missing: JSONValue = .object([
            ("emails", .array(missingEmails.map { .string($0) })),
            ("wallets", .array(missingWallets.map { .string($0) })),
        ])
        let status: PushStatus = write.deliveries.isEmpty ? .completed : (push.sendAt != nil ? .scheduled : .queued)
        let response = JSONWriter.bytes(
            .object([
                ("requestId", .string(write.requestID.uuidString.lowercased())), ("status", .string(status.rawValue)),
                ("recipients", .number(Double(resolution.users.count))),
                ("deliveries", .number(Double(write.deliveries.count))),
                ("suppressed", .number(Double(suppressed))), ("sent", .number(0)), ("failed", .number(0)),
                ("missing", missing),
            ]))
        write.resolved = OutboxWrite.Resolved(
            response: String(decoding: response, as: UTF8.self), recipients: resolution.users.count,
            suppressed: suppressed, missingJSON: JSONWriter.string(missing),
            senderUserIDs: resolution.users.map(\.id))
        return (response, write)
    }
}
