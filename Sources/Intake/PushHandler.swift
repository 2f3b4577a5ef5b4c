import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Store

/// `POST /api/partners/notifications/push`, `GET .../push/{requestId}` and its retraction, `DELETE`.
///
/// Order matters. Everything that needs no database is checked first (validation, payload size);
/// a request that fails those checks is still answered from a stored Idempotency-Key response
/// if there is one. Then ONE statement, in ONE transaction shared with the pushes other handler
/// threads submitted meanwhile (`IntakeWriter`, sql/functions/intake_push.sql), looks up the key,
/// resolves the recipients, reserves a rate-limit slot and writes the audit row, key and
/// deliveries; the answer goes out only after that commit. Its deliveries are rendered up front, signed for the
/// users its identifiers resolved to last time (`RecipientCache`). A push with a device no slot fits comes back
/// unwritten with who its identifiers resolve to: signed again for those users it goes through the statement once
/// more, and one whose users have more devices than slots takes the two-round-trip path (`pushRendered`).
struct PushHandler: Sendable {
    let store: PushStore
    let writer: IntakeWriter
    /// A push's `mediaId` to its `attachmentUrl`: one statement, before the write.
    let media: MediaHandler
    let recipients: RecipientCache
    let rules: PushRules
    let signer: HMACSigner
    let metrics: IntakeMetrics
    let notifier: DeliveryNotifier
    let waiter: PreferWaiter
    let clock: @Sendable () -> Date

    static let routes: [IntakeRoute] = [
        .partner("POST", "/api/partners/notifications/push") { try $0.push.push($1, partner: $2) },
        .partner("GET", "/api/partners/notifications/push/{requestId}") { try $0.push.status($1, partner: $2) },
        .partner("DELETE", "/api/partners/notifications/push/{requestId}") { try $0.push.retract($1, partner: $2) },
    ]

    /// A retract message lives as long as the push it retracts, and at least this long: a push retracted as it
    /// expires may still show.
    static let shortestRetractLife: TimeInterval = 3600

    func push(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        let wait = try PreferWait.parse(request.http.header("prefer"))
        let idempotencyKey = try PartnerAdmission.idempotencyKey(request)
        let now = clock()
        let bodyHash = idempotencyKey.map { _ in Digest.hex(Digest.sha256(request.http.body)) }

        let checked: CheckedPush
        switch validate(request, partner: partner, now: now) {
        case .success(let push):
            checked = push
        case .failure(let invalid):
            // A retry is answered as the first request was, even if it would no longer validate
            // (a sendAt now in the past, say): the stored response comes before the rules.
            if let replay = try PartnerAdmission.storedReplay(
                key: idempotencyKey, bodyHash: bodyHash,
                partnerID: partner.id, now: now, keys: store,
                metrics: metrics)
            {
                return replay
            }
            throw invalid
        }
        // ONE statement in ONE transaction, shared with the pushes other threads submitted meanwhile
        // (group commit, IntakeWriter): stored response, recipients, rate-limit slot and the write.
        let push = checked.request
        let known = recipients.users(tenant: partner.tenantID, emails: push.emails, wallets: push.wallets)
        if let known, known.count > PushPreparation.intakeSlotUsers {
            return try pushRendered(
                checked, partner: partner, idempotencyKey: idempotencyKey, bodyHash: bodyHash,
                now: now, wait: wait)
        }
        let (item, outcome) = try submit(
            checked, known: known, partner: partner, now: now,
            idempotencyKey: idempotencyKey, bodyHash: bodyHash)
        switch outcome {
        case .accepted(let response, let deliveries):
            // Identifiers that reach no device need no slots: the next push to them renders none.
            if deliveries == 0 && !item.slots.isEmpty {
                recipients.forget(tenant: partner.tenantID, emails: push.emails, wallets: push.wallets)
            }
            // The batch's transaction told the worker (IntakeWriter's notifyChannel).
            return accepted(
                Array(response.utf8), requestID: item.write.requestID, createdAt: item.write.createdAt,
                deliveries: deliveries, sendAt: item.write.sendAt, now: now, partner: partner, wait: wait,
                workersNotified: true)
        case .replay(let stored):
            guard let bodyHash else { throw HeraldError.internalError }
            return try PartnerAdmission.replay(stored, bodyHash: bodyHash, metrics: metrics)
        case .limited(let reservation):
            metrics.recordRateLimited()
            throw PartnerAdmission.rateLimited(reservation, partner: partner)
        case .render:
            return try pushRendered(
                checked, partner: partner, idempotencyKey: idempotencyKey, bodyHash: bodyHash,
                now: now, wait: wait)
        }
    }

    /// The push through the batch statement, its slots signed for `known`, the users its identifiers resolved to
    /// last time (in the variant each one's locale then matched). Sent back because they were others (identifiers
    /// unknown, moved to another user, or a user's locale changed), it is signed again for the users found and sent
    /// once more; sent back for the very users found, those have more devices than slots, and the outcome stays
    /// `render`. Every answer's resolution goes to the cache.
    private func submit(
        _ checked: CheckedPush, known: [IntakePush.Recipient]?, partner: PartnerProfile, now: Date,
        idempotencyKey: String?, bodyHash: String?
    ) throws -> (IntakePush, IntakePushOutcome) {
        let push = checked.request
        var item = PushPreparation.intakePush(
            checked, for: known ?? [], partner: partner, rules: rules, now: now,
            idempotencyKey: idempotencyKey, bodyHash: bodyHash)
        let outcome = try writer.submit(item)
        guard case .render(let resolved) = outcome else { return (item, outcome) }
        recipients.learn(tenant: partner.tenantID, emails: push.emails, wallets: push.wallets, resolved: resolved)
        var users: [IntakePush.Recipient] = []
        for identifier in resolved where !users.contains(where: { $0.userID == identifier.userID }) {
            users.append(IntakePush.Recipient(userID: identifier.userID, locale: identifier.locale))
        }
        // A plain push's slots do not depend on the locales: only other users are worth a second try.
        let differs =
            checked.isLocalized
            ? Set(users) != Set(known ?? []) : Set(users.map(\.userID)) != Set((known ?? []).map(\.userID))
        guard !users.isEmpty, users.count <= PushPreparation.intakeSlotUsers, differs else { return (item, outcome) }
        metrics.recordPushResubmitted()
        item.slots = PushPreparation.intakeSlots(checked, for: users, now: now)
        return (item, try writer.submit(item))
    }

    /// The path of a push to more users or devices than the slots the intake renders up front, each delivery
    /// rendered for its device once resolved: ONE pipelined round trip looks up the key, resolves the recipients
    /// and reserves a rate-limit slot (a replay gives the slot back); then one statement writes the audit row, key
    /// and deliveries. Two round trips in all.
    private func pushRendered(
        _ checked: CheckedPush, partner: PartnerProfile, idempotencyKey: String?,
        bodyHash: String?, now: Date, wait: Duration?
    ) throws -> HTTPResponse {
        metrics.recordPushRendered()
        let push = checked.request
        let admission = try store.admit(
            partner: partner, idempotencyKey: idempotencyKey, now: now,
            emails: push.emails, wallets: push.wallets)
        let reservation = admission.reservation
        if let stored = admission.stored, let bodyHash {
            if reservation.admitted { try? store.refundRate(partnerID: partner.id, seconds: reservation.nowSeconds) }
            return try PartnerAdmission.replay(stored, bodyHash: bodyHash, metrics: metrics)
        }
        guard reservation.admitted else {
            metrics.recordRateLimited()
            throw PartnerAdmission.rateLimited(reservation, partner: partner)
        }
        do {
            let (response, write) = PushPreparation.prepare(
                checked, partner: partner, rules: rules, now: now, resolution: admission.resolution,
                idempotencyKey: idempotencyKey, bodyHash: bodyHash)
            if try store.enqueue(write) {
                return accepted(
                    response, requestID: write.requestID, createdAt: write.createdAt,
                    deliveries: write.deliveries.count, sendAt: write.sendAt, now: now, partner: partner,
                    wait: wait)
            }
            // Another request with this key committed first: answer as it did, and give the slot back.
            try? store.refundRate(partnerID: partner.id, seconds: reservation.nowSeconds)
            guard let key = idempotencyKey, let bodyHash,
                let stored = try store.idempotentResponse(partnerID: partner.id, key: key, now: now)
            else { throw HeraldError.internalError }
            return try PartnerAdmission.replay(stored, bodyHash: bodyHash, metrics: metrics)
        } catch {
            if !(error is HeraldError) {
                try? store.refundRate(partnerID: partner.id, seconds: reservation.nowSeconds)
            }
            throw error
        }
    }

    /// The answer of a committed push: the 202 body, or a `Prefer: wait` answer once its outcome is known.
    private func accepted(
        _ response: [UInt8], requestID: UUID, createdAt: Date, deliveries: Int, sendAt: Date?,
        now: Date, partner: PartnerProfile, wait: Duration?,
        workersNotified: Bool = false
    ) -> HTTPResponse {
        metrics.recordPushAccepted(deliveries: deliveries)
        let due = sendAt.map { $0 <= now } ?? true
        if deliveries > 0 && due && !workersNotified { notifier.signal() }
        // A scheduled request answers at once: its outcome is not due within any wait.
        if let wait, deliveries > 0, due {
            let applied = "wait=\(Int(wait / .seconds(1)))"
            // nil: this partner has as many waiting as allowed; the normal 202 goes out.
            if let deferred = waiter.wait(
                requestID: requestID, createdAt: createdAt,
                partnerID: partner.id, for: wait,
                render: { summary in
                    Reply.json(200, statusBody(summary, id: requestID), headers: [("Preference-Applied", applied)])
                })
            {
                return deferred
            }
        }
        return Reply.json(202, response)
    }

    /// Content type and JSON here; fields and payload size in the shared `PushPreparation.check`.
    private func validate(_ request: RoutedRequest, partner: PartnerProfile, now: Date) -> Result<
        CheckedPush, HeraldError
    > {
        do {
            return .success(
                try PushPreparation.check(
                    request.jsonBody(), partner: partner, rules: rules, signer: signer, now: now,
                    attachment: { id, until throws(HeraldError) in
                        try media.attachmentURL(id, partner: partner, until: until)
                    }))
        } catch {
            return .failure(error)
        }
    }

    func status(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        let id = try request.uuid("requestId")
        guard let createdAt = UUIDv7.timestamp(of: id),
            let summary = try store.find(requestID: id, createdAt: createdAt),
            // Another partner's request answers exactly as an unknown id: a 403 would confirm that the id exists.
            summary.partnerID == partner.id
        else { throw HeraldError.notFound }
        return Reply.json(200, statusBody(summary, id: id))
    }

    /// `DELETE .../push/{requestId}`: cancels what is still queued and sends every device the push reached a silent
    /// message naming its delivery (`RetractMessage`), in one transaction (`PushStore.retract`); answers with the
    /// status. Again, it changes nothing and answers the same. Another partner's request is an unknown one.
    func retract(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        let id = try request.uuid("requestId")
        guard let createdAt = UUIDv7.timestamp(of: id) else { throw HeraldError.notFound }
        let now = clock()
        let retraction = try store.retract(
            requestID: id, createdAt: createdAt, partnerID: partner.id, retractionID: UUIDv7.make(at: now), now: now
        ) { retraction in
            let expiresAt = max(retraction.expiresAt ?? now, now.addingTimeInterval(Self.shortestRetractLife))
            let exp = Int(expiresAt.timeIntervalSince1970.rounded(.up))
            return retraction.targets.map { target in
                let payload = RetractMessage.render(
                    retracting: target.deliveryID, miniAppID: partner.miniAppID, recipient: target.userID,
                    expiresAt: exp, for: target.service, signer: signer)
                return PushRetraction.Message(
                    id: UUIDv7.make(at: now), payload: payload,
                    ttlSeconds: max(1, Int(expiresAt.timeIntervalSince(target.dueAt).rounded(.up))))
            }
        }
        guard retraction != nil, let summary = try store.find(requestID: id, createdAt: createdAt) else {
            throw HeraldError.notFound
        }
        return Reply.json(200, statusBody(summary, id: id))
    }

    /// The body of `GET .../push/{requestId}` and of a `Prefer: wait` answer.
    private func statusBody(_ summary: PushRequestSummary, id: UUID) -> JSONValue {
        let status = PushStatus.of(
            deliveries: summary.deliveries, finished: summary.finished,
            sendAt: summary.sendAt, now: clock())
        let missing = (try? JSONParser.parse(summary.missingJSON)) ?? .object([])
        var members: [(key: String, value: JSONValue)] = [
            ("requestId", .string(id.uuidString.lowercased())), ("status", .string(status.rawValue)),
            ("recipients", .number(Double(summary.recipients))), ("deliveries", .number(Double(summary.deliveries))),
            // The users opted out at acceptance and the deliveries suppressed since (opt-out, user_cap).
            ("suppressed", .number(Double(summary.suppressed + summary.suppressedDeliveries))),
            ("sent", .number(Double(summary.sent))), ("failed", .number(Double(summary.failed))),
            ("superseded", .number(Double(summary.superseded))), ("cancelled", .number(Double(summary.cancelled))),
            ("pending", .number(Double(summary.pending))), ("held", .number(Double(summary.held))),
            // What the host's app reported of the deliveries: counted once each, an open as received too.
            ("received", .number(Double(summary.received))), ("opened", .number(Double(summary.opened))),
            ("dismissed", .number(Double(summary.dismissed))),
            ("missing", missing), ("createdAt", .string(ISO8601.format(summary.createdAt))),
        ]
        members.append(("sendAt", summary.sendAt.map { .string(ISO8601.format($0)) } ?? .null))
        if let retractedAt = summary.retractedAt {
            members.append(("retractedAt", .string(ISO8601.format(retractedAt))))
            members.append(("retracted", .number(Double(summary.retracted))))
        }
        return .object(members)
    }
}
