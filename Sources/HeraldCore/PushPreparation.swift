import Foundation

/// A push that passed every check that needs no database, with its payloads rendered once for all its deliveries:
/// the default text's, and one template per `localized` variant.
public struct CheckedPush: Sendable {
    public let request: PushRequest
    public let content: PushContent
    public let template: PushTemplate
    /// The variants' templates, by canonical tag.
    public let variants: [String: PushTemplate]

    /// Whether the push carries `localized` variants: its deliveries then depend on their users' locales.
    public var isLocalized: Bool { !variants.isEmpty }

    /// The template a user with `locale` gets: the variant it matches (`LocaleTag.lookup`), else the default.
    public func template(for locale: String?) -> PushTemplate {
        guard isLocalized, let variant = request.variant(for: locale) else { return template }
        return variants[variant.tag] ?? template
    }
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
        // The default text and every `localized` variant, rendered and checked here, so whichever a user gets fits.
        func templates(attachmentURL: String?) throws(HeraldError) -> (PushTemplate, [String: PushTemplate]) {
            let template = PushTemplate(
                PushContent(request: push, partner: partner, publicURL: rules.publicURL, attachmentURL: attachmentURL),
                expiresAt: expiresAt, signer: signer)
            try PushPayload.checkSize(template)
            var variants: [String: PushTemplate] = [:]
            for variant in push.localized {
                let localized = PushTemplate(
                    PushContent(
                        request: push, partner: partner, publicURL: rules.publicURL, attachmentURL: attachmentURL,
                        variant: variant),
                    expiresAt: expiresAt, signer: signer)
                try PushPayload.checkSize(localized, variant: variant.tag)
                variants[variant.tag] = localized
            }
            return (template, variants)
        }
        guard let mediaID = push.mediaID else {
            let (template, variants) = try templates(attachmentURL: nil)
            return CheckedPush(request: push, content: template.content, template: template, variants: variants)
        }
        guard let attachment else {
            throw .invalidField("mediaId", "mediaId is accepted by POST /api/partners/notifications/push only.")
        }
        // Sized first with a URL of the very length the media's has, so a push too large touches no media row.
        let sameLength = (rules.publicURL ?? "") + PushMedia.path(id: mediaID, contentType: "", signer: signer)
        _ = try templates(attachmentURL: sameLength)
        let (template, variants) = try templates(attachmentURL: try attachment(mediaID, expiresAt))
        return CheckedPush(request: push, content: template.content, template: template, variants: variants)
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
        _ checked: CheckedPush, for users: [IntakePush.Recipient], partner: PartnerProfile,
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
    /// user, rendered for both services (which one a device needs is known only once Postgres has resolved it) in the
    /// text the user's locale matches.
    public static func intakeSlots(
        _ checked: CheckedPush, for users: [IntakePush.Recipient], now: Date
    ) -> [IntakePush.Slot] {
        users.flatMap { user in
            let template = checked.template(for: user.locale)
            return (0..<intakeSlotsPerUser).map { _ in
                let id = UUIDv7.make(at: now)
                let rendering = template.render(deliveryID: id, recipient: user.userID)
                return IntakePush.Slot(
                    id: id, userID: user.userID, locale: checked.isLocalized ? user.locale ?? "" : nil,
                    apns: rendering.apns, fcm: rendering.fcm)
            }
        }
    }

    /// One delivery for each of `devices`, each with its own id, rendered for its device's service from the template
    /// its user gets (`template`, given the user's id) and signed for its user.
    public static func deliveries(
        to devices: [RecipientResolution.Device], now: Date, template: (_ userID: String) -> PushTemplate
    ) -> [OutboxWrite.Delivery] {
        devices.map { device in
            let id = UUIDv7.make(at: now)
            let payload = template(device.userID).render(
                deliveryID: id, recipient: device.userID, for: device.service)
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
        // Each user in the variant its locale matches (LocaleTag.lookup), else the default text.
        let locales = resolution.locales
        write.deliveries = deliveries(to: resolution.devices, now: now) { checked.template(for: locales[$0]) }
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
