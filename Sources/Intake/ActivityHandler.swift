import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Store

/// The Live Activity endpoints and the host's update tokens.
///
/// Like a push: what needs no database is checked first; then ONE pipelined round trip reads the
/// Idempotency-Key's stored answer, what the change needs (the audience of a start, the activity of an
/// update or end) and a rate-limit slot; then ONE statement writes (sql/functions/activity_*.sql). Every
/// payload is rendered and size-checked here, the only process with the signing keys: the activity row
/// keeps the end its TTL will send, so the workers' sweep renders nothing.
///
/// An update merges into the version it read; if another change committed first, it reads the activity
/// again and merges anew (`maxMergeAttempts`), so concurrent partial updates never lose one another.
struct ActivityHandler: Sendable {
    let store: ActivityStore
    /// Broadcast channels (`ActivityHandler+Channels.swift`).
    let channels: ChannelStore
    /// Idempotency keys and rate limits, shared with pushes.
    let keys: PushStore
    /// The user's locale, read for an alert with `localized` variants.
    let directory: DirectoryStore
    let rules: LiveActivityRules
    /// A start needs an in-app session with the mini-app this recent (HERALD_SESSION_WINDOW_DAYS).
    let sessionWindow: TimeInterval
    /// Shared by every mini-app (HERALD_LA_*): checked where the start and update are written.
    let budgets: LiveActivityBudgets
    let signer: HMACSigner
    let metrics: IntakeMetrics
    let notifier: DeliveryNotifier
    let clock: @Sendable () -> Date

    static let maxMergeAttempts = 5

    /// Channels first: `.../channels/{channelId}` and `.../{activityId}/events` both match
    /// `.../channels/events`, and the first in `IntakeRoutes.all` wins. The host's update tokens, device states
    /// and a mini-app's live channels take the host token.
    static let routes: [IntakeRoute] = [
        .partner("POST", "/api/partners/live-activities/channels") { try $0.activity.openChannel($1, partner: $2) },
        .partner("POST", "/api/partners/live-activities/channels/{channelId}/update") {
            try $0.activity.updateChannel($1, partner: $2)
        },
        .partner("DELETE", "/api/partners/live-activities/channels/{channelId}") {
            try $0.activity.endChannel($1, partner: $2)
        },
        .partner("GET", "/api/partners/live-activities/channels/{channelId}") {
            try $0.activity.getChannel($1, partner: $2)
        },
        .partner("POST", "/api/partners/live-activities/channels/{channelId}/starts") {
            try $0.activity.startFromChannel($1, partner: $2)
        },
        .partner("POST", "/api/partners/live-activities") { try $0.activity.start($1, partner: $2) },
        .partner("POST", "/api/partners/live-activities/{activityId}/update") {
            try $0.activity.update($1, partner: $2)
        },
        .partner("PATCH", "/api/partners/live-activities/{activityId}") { try $0.activity.update($1, partner: $2) },
        .partner("DELETE", "/api/partners/live-activities/{activityId}") { try $0.activity.end($1, partner: $2) },
        .partner("GET", "/api/partners/live-activities/{activityId}") { try $0.activity.get($1, partner: $2) },
        .partner("GET", "/api/partners/live-activities/{activityId}/events") {
            try $0.activity.events($1, partner: $2)
        },
        .host("PUT", "/api/internal/live-activities/{activityId}/push-tokens/{deviceId}") {
            try $0.activity.putToken($1)
        },
        .host("PUT", "/api/internal/live-activities/{activityId}/devices/{deviceId}/state") {
            try $0.activity.putDeviceState($1)
        },
        .host("GET", "/api/internal/mini-apps/{miniAppId}/live-channels") { try $0.activity.listLiveChannels($1) },
    ]

    // MARK: - Start

    func start(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        try keyedWrite(request, partner: partner) { keyed in
            let (body, start) = try validated(keyed, partner: partner) {
                let body = try request.jsonBody()
                var start = try LiveActivityValidator.validateStart(body, rules: rules)
                start.startAt = try rules.scheduledStart(start.startAt, now: keyed.now)
                return (body, start)
            }
            // The audit keeps the partner's TTL only when it gave one (`start.ttlSeconds` has the default).
            let ttlGiven = body["ttlSeconds"].map { $0 != .null } ?? false
            return try begin(start, ttlGiven: ttlGiven, keyed, partner: partner)
        }
    }

    /// A validated start, written: the audience read, the payloads rendered, the budgets checked where the start is
    /// written. `channel`: a start from a broadcast channel (its template, attributes and state, its expiry, and
    /// the iPhones only: the activity follows the channel, `input-push-channel`). A start with `startAt` (never one
    /// from a channel) is rendered for that time and held (`herald_activity_schedule`): the workers' sweep checks the
    /// session, opt-out, quiet hours and budgets again and sends it then (functions/activity_start_due.sql).
    func begin(
        _ start: LiveActivityStart, ttlGiven: Bool, _ keyed: KeyedWrite, partner: PartnerProfile,
        channel: ChannelRecord? = nil
    ) throws -> HTTPResponse {
        let now = keyed.now
        let activityID = UUIDv7.make(at: now)
        let createdAt = UUIDv7.timestamp(of: activityID)!
        let startAt = channel == nil ? start.startAt : nil
        // The payloads carry the start's time: a scheduled start's TTL and stale date count from `startAt`.
        let startsAt = startAt ?? createdAt
        let expiresAt =
            try channel.map { $0.expiresAt }
            ?? rules.expiresAt(startedAt: startsAt, now: startsAt, ttlSeconds: start.ttlSeconds)
        let timestamp = Self.seconds(startsAt)
        let startAlert = LiveActivityPayload.startAlert(start.alert, attributes: start.attributes)
        let content = { (event: LiveActivityEvent, stamp: Int, dismissal: Date?, alert: LiveActivityAlert?) in
            LiveActivityContent(
                activityID: activityID, miniAppID: partner.miniAppID, displayName: partner.displayName,
                template: start.template, attributes: start.attributes, state: start.state, event: event,
                timestamp: stamp, expiresAt: expiresAt, dismissalDate: dismissal, alert: alert,
                relevanceScore: start.relevanceScore,
                inputPushChannel: event == .start ? channel?.apnsChannelID : nil)
        }
        let startPayloads = try render(content(.start, timestamp, nil, startAlert))
        let endTimestamp = max(Self.seconds(expiresAt), timestamp + 1)
        let endPayloads = try render(content(.end, endTimestamp, expiresAt, nil))

        let email: String?, wallet: String?
        switch start.recipient {
        case .email(let value): (email, wallet) = (value, nil)
        case .wallet(let value): (email, wallet) = (nil, value)
        }
        let admission = try store.admitStart(
            partner: partner, idempotencyKey: keyed.key, now: now, email: email, wallet: wallet,
            sessionSince: now.addingTimeInterval(-sessionWindow), template: start.template)
        return try admitted(admission.stored, admission.reservation, keyed, partner: partner) {
            let (audience, devices) = try Self.reachable(admission.audience, channel: channel)
            // A scheduled start replaces what is active when it is sent, with that activity's stored end.
            let replacement = try audience.replaced.flatMap { old in
                startAt == nil ? try replacementEnd(old, partner: partner, now: createdAt) : nil
            }
            // An alert with variants shows the one the user's locale matches (every variant was size-checked).
            var startPayloads = startPayloads
            if !startAlert.localized.isEmpty {
                var localized = content(.start, timestamp, nil, startAlert)
                localized.locale = try directory.locale(userID: audience.userID)
                startPayloads = try render(localized)
            }
            var answer: [(key: String, value: JSONValue)] = [
                ("activityId", .string(Self.text(activityID))),
                ("status", .string((startAt == nil ? ActivityStatus.active : .scheduled).rawValue)),
            ]
            if let startAt { answer.append(("startAt", .string(ISO8601.format(startAt)))) }
            answer.append(("expiresAt", .string(ISO8601.format(expiresAt))))
            let response = JSONWriter.string(.object(answer))
            var write = ActivityStartWrite(
                partnerID: partner.id, key: keyed.activityKey(response: response),
                activityID: activityID, now: createdAt, miniAppID: partner.miniAppID, userID: audience.userID,
                template: start.template.rawValue, attributesJSON: JSONWriter.string(start.attributes.json),
                stateJSON: JSONWriter.string(start.state.json), startAlertJSON: JSONWriter.string(startAlert.json),
                expiresAt: expiresAt, timestamp: timestamp, start: startPayloads, end: endPayloads,
                endTimestamp: endTimestamp, devices: devices, replaced: replacement,
                relevanceScore: start.relevanceScore, budgets: budgets)
            write.inputs = ActivityEventInputs(
                alertTitle: start.alert?.title,
                ttlSeconds: ttlGiven ? start.ttlSeconds : nil)
            write.channelID = channel?.id
            if let startAt {
                write.startAt = startAt
                write.sessionWindowDays = Int((sessionWindow / 86_400).rounded())
                return try finish(try store.schedule(write), keyed, partner: partner) {
                    Reply.json(201, Array(response.utf8))
                }
            }
            let outcome = try store.start(write)
            if let refusal = outcome.refusal {
                metrics.recordLiveActivityBudget(partner: partner.miniAppID, reason: refusal)
                throw refusal.error(retryAfter: outcome.retryAfter, budgets: budgets) ?? HeraldError.internalError
            }
            if outcome.replacedPriority == 5 {
                metrics.recordLiveActivityBudget(partner: partner.miniAppID, reason: .alertedUpdates)
            }
            return try finish(outcome.result, keyed, partner: partner) {
                Reply.json(201, Array(response.utf8))
            }
        }
    }

    /// The user a start reaches and the devices it goes to, or the refusal the directory lookup gives: a
    /// `SpentRefusal`, so it costs the partner's rate-limit slot like an accepted start. Were it given back, a
    /// partner could ask which identifiers are users (and which have a session, opted out, or have a phone) without
    /// limit; spent, it learns no faster than it could send. An identifier of another tenant is refused exactly as
    /// one of nobody.
    static func reachable(_ audience: ActivityAudience?, channel: ChannelRecord?) throws
        -> (ActivityAudience, [ActivityAudience.Device])
    {
        guard let audience else {
            throw SpentRefusal(
                error: HeraldError(
                    status: 404, code: "recipient_not_found",
                    message: "The recipient is no user of this partner's tenant.",
                    field: "recipient"))
        }
        guard audience.hasSession else {
            throw SpentRefusal(
                error: HeraldError(
                    status: 409, code: "no_session",
                    message: "The user has no recent in-app session with this mini-app.",
                    field: "recipient"))
        }
        guard !audience.optedOut else {
            throw SpentRefusal(
                error: HeraldError(
                    status: 409, code: "opted_out",
                    message: "The user opted out of this mini-app's notifications.",
                    field: "recipient"))
        }
        // Broadcast channels are iOS 18's: a start from one goes to the user's iPhones.
        let devices = channel == nil ? audience.devices : audience.devices.filter { $0.service == .apns }
        guard !devices.isEmpty else {
            let message =
                channel == nil
                ? "The user has no device that can show a Live Activity."
                : "The user has no iPhone that can follow a broadcast channel."
            throw SpentRefusal(
                error: HeraldError(status: 409, code: "no_live_device", message: message, field: "recipient"))
        }
        return (audience, devices)
    }

    /// The end of the activity a start replaces: its last state, dismissed at once and sent at once (its
    /// card must leave as the new one arrives; `herald_activity_start` pays for it from that activity's
    /// alerted budget).
    private func replacementEnd(_ old: StoredLiveActivity, partner: PartnerProfile, now: Date) throws
        -> ActivityStartWrite.Replacement
    {
        let end = try old.immediateEnd(
            miniAppID: partner.miniAppID, displayName: partner.displayName, now: now,
            signer: signer)
        return .init(id: old.id, end: Self.payloads(end.rendered), timestamp: end.timestamp)
    }

    // MARK: - Update and end

    func update(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        try change(
            request, partner: partner,
            validate: { try LiveActivityValidator.validateUpdate($0 ?? .null, rules: rules) },
            write: { change, activity, keyed in try updateWrite(change, activity, keyed, partner: partner) },
            notStarted: { activity, _ in throw activity.status == .scheduled ? Self.scheduled : Self.ended })
    }

    func end(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        try change(
            request, partner: partner, validate: { try LiveActivityValidator.validateEnd($0, rules: rules) },
            write: { change, activity, keyed in try endWrite(change, activity, keyed, partner: partner) },
            notStarted: { activity, keyed in cancelWrite(activity, keyed, partner: partner) })
    }

    /// A prepared write of one change: the statement to run and the answer once it committed
    /// (`silentResponse`: the answer when an alerted update went out without its alert).
    private struct PreparedChange {
        let run: () throws -> ActivityWriteResult
        let response: String
        var silentResponse: String?
    }

    private func change(
        _ request: RoutedRequest, partner: PartnerProfile,
        validate: (JSONValue?) throws -> LiveActivityChange,
        write: (LiveActivityChange, ActivityRecord, KeyedWrite) throws -> PreparedChange,
        notStarted: (ActivityRecord, KeyedWrite) throws -> PreparedChange
    ) throws -> HTTPResponse {
        try keyedWrite(request, partner: partner) { keyed in
            let activityID = try request.uuid("activityId")
            let change = try validated(keyed, partner: partner) { try validate(try Self.changeBody(request)) }
            let admission = try store.admitChange(
                partner: partner, idempotencyKey: keyed.key, now: keyed.now, activityID: activityID)
            return try merging(
                admission.activity, noun: "activity", admission.stored, admission.reservation, keyed, partner: partner,
                reread: { try store.find(id: activityID, partnerID: partner.id) }
            ) { current in
                // A scheduled start, held or cancelled: nothing was sent yet, nothing will be when cancelled.
                if current.status == .scheduled || current.status == .cancelled {
                    let prepared = try notStarted(current, keyed)
                    return (try prepared.run(), prepared.response, prepared.silentResponse)
                }
                guard current.status == .active, current.expiresAt > keyed.now else { throw Self.ended }
                guard current.channelID == nil else { throw Self.followsChannel }
                let prepared = try write(change, current, keyed)
                return (try prepared.run(), prepared.response, prepared.silentResponse)
            }
        }
    }

    /// The partner's DELETE of a scheduled start: cancelled under its row lock unless the sweep sent it meanwhile
    /// (`conflict`: `merging` reads it again and ends it as an active one). The body's state, alert and dismissAt do
    /// not apply: nothing was shown. A DELETE of a cancelled one answers as the first did, writing nothing.
    private func cancelWrite(_ activity: ActivityRecord, _ keyed: KeyedWrite, partner: PartnerProfile)
        -> PreparedChange
    {
        let state = (try? Self.parse(activity.stateJSON)) ?? .object([])
        guard activity.status == .scheduled else {
            let json = Self.activityJSON(
                activity, status: .cancelled, state: state, updatedAt: activity.updatedAt,
                expiresAt: activity.expiresAt, endedAt: activity.endedAt)
            return PreparedChange(run: { .cancelled }, response: JSONWriter.string(json))
        }
        let response = JSONWriter.string(
            Self.activityJSON(
                activity, status: .cancelled, state: state, updatedAt: keyed.now, expiresAt: activity.expiresAt,
                endedAt: keyed.now))
        return PreparedChange(
            run: {
                try store.cancel(
                    partnerID: partner.id, key: keyed.activityKey(response: response), activityID: activity.id,
                    version: activity.version, now: keyed.now)
            }, response: response)
    }

    /// What every keyed write (a start, a change, a channel's) reads before its work.
    struct KeyedWrite {
        let key: String?
        /// Set when `key` is.
        let bodyHash: String?
        let now: Date

        /// The key, its body's hash and `response` as the write stores them for a replay.
        func activityKey(response: String) -> ActivityKey {
            ActivityKey(key: key, bodyHash: bodyHash, response: response)
        }
    }

    /// Runs a keyed write: reads its idempotency key, the body's hash and the time, and answers with the stored
    /// replay when `write` finds one (`validated`).
    func keyedWrite(_ request: RoutedRequest, partner: PartnerProfile, _ write: (KeyedWrite) throws -> HTTPResponse)
        throws -> HTTPResponse
    {
        let key = try PartnerAdmission.idempotencyKey(request)
        let bodyHash = key.map { _ in Self.hash(request) }
        do {
            return try write(KeyedWrite(key: key, bodyHash: bodyHash, now: clock()))
        } catch let replayed as Replayed {
            return replayed.response
        }
    }

    /// `validate`'s result. A request it refuses may be the retry of a write already accepted: when its key was
    /// used, the stored answer is replayed (thrown as `Replayed` to `keyedWrite`), else the refusal stands.
    func validated<Value>(_ keyed: KeyedWrite, partner: PartnerProfile, _ validate: () throws -> Value) throws
        -> Value
    {
        do {
            return try validate()
        } catch {
            if let replay = try storedReplay(keyed, partner) {
                throw Replayed(response: replay)
            }
            throw error
        }
    }

    /// A change's body: DELETE may come without one; the other changes need one.
    static func changeBody(_ request: RoutedRequest) throws -> JSONValue? {
        request.http.method == "DELETE" && request.http.body.isEmpty ? nil : try request.jsonBody()
    }

    /// Merges an admitted change (`admitted`) into the record it read (an activity, a channel); when another change
    /// committed first (`conflict`), reads the record again and merges anew, up to `maxMergeAttempts`. `attempt`
    /// checks the record, writes, and gives the write's result with its answer and the one for an alert dropped by
    /// the budget.
    func merging<Record>(
        _ first: Record?, noun: String, _ stored: IdempotentResponse?, _ reservation: RateReservation,
        _ keyed: KeyedWrite, partner: PartnerProfile, reread: () throws -> Record?,
        attempt: (Record) throws -> (result: ActivityWriteResult, response: String, silentResponse: String?)
    ) throws -> HTTPResponse {
        try admitted(stored, reservation, keyed, partner: partner) {
            var record = first
            for _ in 0..<Self.maxMergeAttempts {
                guard let current = record else { throw HeraldError.notFound }
                let (result, response, silentResponse) = try attempt(current)
                if result == .conflict {
                    record = try reread()
                    continue
                }
                if result == .updatedSilently {
                    metrics.recordLiveActivityBudget(partner: partner.miniAppID, reason: .alertedUpdates)
                }
                let answer = result == .updatedSilently ? silentResponse ?? response : response
                return try finish(result, keyed, partner: partner) { Reply.json(200, Array(answer.utf8)) }
            }
            throw HeraldError(
                status: 409, code: "conflict",
                message: "The \(noun) is changing too fast to merge this update; retry.", retryAfter: 1)
        }
    }

    private func updateWrite(
        _ change: LiveActivityChange, _ activity: ActivityRecord, _ keyed: KeyedWrite, partner: PartnerProfile
    ) throws -> PreparedChange {
        let now = keyed.now
        let (template, state) = try Self.merged(change, into: activity)
        let expiresAt =
            try change.ttlSeconds.map {
                try rules.expiresAt(startedAt: activity.createdAt, now: now, ttlSeconds: $0)
            } ?? activity.expiresAt
        let attributes = try Self.storedAttributes(activity.attributesJSON)
        let timestamp = max(Self.seconds(now), activity.lastTimestamp + 1)
        let relevanceScore = change.relevanceScore ?? activity.relevanceScore
        let startAlert = try Self.storedAlert(activity.startAlertJSON)
        let locale = try locale(of: activity, for: [change.alert, startAlert])
        let content = { (event: LiveActivityEvent, stamp: Int, dismissal: Date?, alert: LiveActivityAlert?) in
            var content = LiveActivityContent(
                activityID: activity.id, miniAppID: partner.miniAppID, displayName: partner.displayName,
                template: template, attributes: attributes, state: state, event: event, timestamp: stamp,
                expiresAt: expiresAt, dismissalDate: dismissal, alert: alert, relevanceScore: relevanceScore)
            content.locale = locale
            return content
        }
        let update = LiveActivityPayload.render(content(.update, timestamp, nil, change.alert), signer: signer)
        try LiveActivityPayload.checkSize(update, event: .update)
        try LiveActivityPayload.checkVariants(content(.update, timestamp, nil, change.alert), signer: signer)
        let restart = try render(content(.start, timestamp, nil, startAlert))
        let endTimestamp = max(Self.seconds(expiresAt), timestamp + 1)
        let end = try render(content(.end, endTimestamp, expiresAt, nil))
        let body = Self.activityJSON(
            activity, status: .active, state: state.json, updatedAt: now, expiresAt: expiresAt, endedAt: nil)
        // With an alert, the answer says whether it was shown: `sent`, or `dropped_budget` when the activity's
        // alerted budget was spent and the update went out silent (rendered here too: the statement decides).
        let response = JSONWriter.string(change.alert == nil ? body : Self.withAlert(body, "sent"))
        var silent: (payloads: ActivityPayloads, response: String)?
        if change.alert != nil {
            silent = (
                Self.payloads(LiveActivityPayload.render(content(.update, timestamp, nil, nil), signer: signer)),
                JSONWriter.string(Self.withAlert(body, "dropped_budget"))
            )
        }
        var write = ActivityUpdateWrite(
            partnerID: partner.id, key: keyed.activityKey(response: response),
            activityID: activity.id, version: activity.version, now: now, stateJSON: JSONWriter.string(state.json),
            expiresAt: expiresAt, timestamp: timestamp, update: Self.payloads(update), restart: restart,
            apnsPriority: update.apnsPriority, end: end, endTimestamp: endTimestamp, relevanceScore: relevanceScore,
            alertedLimit: budgets.alertedUpdatesPerHour, silent: silent)
        write.inputs = ActivityEventInputs(
            patchJSON: change.statePatch.map(JSONWriter.string),
            alertTitle: change.alert?.title, ttlSeconds: change.ttlSeconds)
        return PreparedChange(run: { try store.update(write) }, response: response, silentResponse: silent?.response)
    }

    private func endWrite(
        _ change: LiveActivityChange, _ activity: ActivityRecord, _ keyed: KeyedWrite, partner: PartnerProfile
    ) throws -> PreparedChange {
        let now = keyed.now
        let (template, state) = try Self.merged(change, into: activity)
        let dismissAt = try rules.dismissalDate(requested: change.dismissAt, endedAt: now)
        let timestamp = max(Self.seconds(now), activity.lastTimestamp + 1)
        var content = LiveActivityContent(
            activityID: activity.id, miniAppID: partner.miniAppID, displayName: partner.displayName, template: template,
            attributes: try Self.storedAttributes(activity.attributesJSON), state: state, event: .end,
            timestamp: timestamp,
            expiresAt: activity.expiresAt, dismissalDate: dismissAt, alert: change.alert)
        content.locale = try locale(of: activity, for: [change.alert])
        let rendered = LiveActivityPayload.render(content, signer: signer)
        try LiveActivityPayload.checkSize(rendered, event: .end)
        try LiveActivityPayload.checkVariants(content, signer: signer)
        let response = JSONWriter.string(
            Self.activityJSON(
                activity, status: .ended, state: state.json, updatedAt: now, expiresAt: activity.expiresAt, endedAt: now
            ))
        var write = ActivityEndWrite(
            partnerID: partner.id, key: keyed.activityKey(response: response),
            activityID: activity.id, version: activity.version, now: now, stateJSON: JSONWriter.string(state.json),
            dismissAt: dismissAt, timestamp: timestamp, end: Self.payloads(rendered),
            apnsPriority: rendered.apnsPriority)
        write.inputs = ActivityEventInputs(alertTitle: change.alert?.title, dismissAt: change.dismissAt)
        return PreparedChange(run: { try store.end(write) }, response: response)
    }

    // MARK: - Read

    func get(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        let id = try request.uuid("activityId")
        guard let activity = try store.find(id: id, partnerID: partner.id) else { throw HeraldError.notFound }
        var json = Self.activityJSON(
            activity, status: activity.status, state: try Self.parse(activity.stateJSON), updatedAt: activity.updatedAt,
            expiresAt: activity.expiresAt, endedAt: activity.endedAt)
        // Only the read shows each device (the answers to changes are stored for idempotent replays), by
        // platform and state: the host's device ids are not the partner's business.
        if case .object(var members) = json {
            let devices = try store.devices(activityID: activity.id).map { device in
                JSONValue.object([("platform", .string(device.platform)), ("state", .string(device.state))])
            }
            members.append(("devices", .array(devices)))
            if let channel = activity.channelID { members.append(("channelId", .string(Self.text(channel)))) }
            json = .object(members)
        }
        return Reply.json(200, json)
    }

    // MARK: - Host: the device's word

    func putDeviceState(_ request: RoutedRequest) throws -> HTTPResponse {
        let activityID = try request.uuid("activityId")
        let deviceID = request.parameter("deviceId")
        let fields = try JSONFields(request.jsonBody(), allowed: ["state"])
        let text = try fields.requiredString("state")
        guard let state = ActivityDeviceState(rawValue: text) else {
            throw HeraldError.invalidField(
                "state", "state must be one of \(ActivityDeviceState.allCases.map(\.rawValue).joined(separator: ", "))."
            )
        }
        let status: ActivityStatus
        switch try store.putDeviceState(activityID: activityID, deviceID: deviceID, state: state) {
        case .notFound:
            throw HeraldError(status: 404, code: "not_found", message: "No such activity was started on this device.")
        case .notAndroid:
            throw HeraldError(
                status: 409, code: "not_android_device",
                message: "not_promoted is Android's word (a Live Update declined); this device is an iPhone.",
                field: "state")
        case .recorded(let recorded):
            status = recorded
        }
        return Reply.json(
            200,
            .object([
                ("activityId", .string(Self.text(activityID))), ("deviceId", .string(deviceID)),
                ("state", .string(state.rawValue)), ("activityStatus", .string(status.rawValue)),
            ]))
    }

    // MARK: - Host: update tokens

    func putToken(_ request: RoutedRequest) throws -> HTTPResponse {
        let activityID = try request.uuid("activityId")
        let deviceID = request.parameter("deviceId")
        let fields = try JSONFields(request.jsonBody(), allowed: ["token"])
        guard let token = Identifiers.normalizedAPNsToken(try fields.requiredString("token")) else {
            throw HeraldError.invalidField("token", "token must be an even number of 64-200 hex digits.")
        }
        switch try store.putToken(activityID: activityID, deviceID: deviceID, token: token) {
        case .notFound:
            throw HeraldError(
                status: 404, code: "not_found",
                message: "No such activity was started on this device.")
        case .notIOS:
            throw HeraldError(
                status: 409, code: "not_ios_device",
                message: "Update tokens are for iPhones; this device is an Android phone.", field: "deviceId")
        case let result:
            if result == .sent { notifier.signal() }
            return Reply.json(
                200,
                .object([
                    ("activityId", .string(Self.text(activityID))), ("deviceId", .string(deviceID)),
                    ("result", .string(result.rawValue)),
                ]))
        }
    }

    // MARK: - Shared steps

    /// Replays a stored answer (giving the slot back), refuses a spent rate limit, else runs `body`; a refusal
    /// after the slot was reserved gives it back (a rejected request writes nothing), except a `SpentRefusal`.
    func admitted(
        _ stored: IdempotentResponse?, _ reservation: RateReservation, _ keyed: KeyedWrite, partner: PartnerProfile,
        _ body: () throws -> HTTPResponse
    ) throws -> HTTPResponse {
        if let stored, let bodyHash = keyed.bodyHash {
            if reservation.admitted { refund(partner, reservation) }
            return try PartnerAdmission.replay(stored, bodyHash: bodyHash, metrics: metrics)
        }
        guard reservation.admitted else {
            metrics.recordRateLimited()
            throw PartnerAdmission.rateLimited(reservation, partner: partner)
        }
        do {
            return try body()
        } catch let replayed as Replayed {
            refund(partner, reservation)
            return replayed.response
        } catch let spent as SpentRefusal {
            throw spent.error
        } catch {
            refund(partner, reservation)
            throw error
        }
    }

    /// The answer to a committed write, or to one another request with the same key beat.
    func finish(
        _ result: ActivityWriteResult, _ keyed: KeyedWrite, partner: PartnerProfile, _ answer: () -> HTTPResponse
    ) throws -> HTTPResponse {
        switch result {
        case .started, .updated, .updatedSilently, .endedNow:
            metrics.recordActivityEvent()
            notifier.signal()
            return answer()
        case .scheduled, .cancelled:
            // Nothing was queued: the workers' sweep sends a scheduled start at its time.
            return answer()
        case .duplicate:
            guard let key = keyed.key, let bodyHash = keyed.bodyHash,
                let stored = try keys.idempotentResponse(partnerID: partner.id, key: key, now: clock())
            else { throw HeraldError.internalError }
            // `admitted` gives this request's slot back and answers with the replay.
            throw Replayed(response: try PartnerAdmission.replay(stored, bodyHash: bodyHash, metrics: metrics))
        case .notFound: throw HeraldError.notFound
        case .ended: throw Self.ended
        case .conflict, .refused: throw HeraldError.internalError
        }
    }

    /// `PartnerAdmission.storedReplay` with this handler's keys.
    func storedReplay(_ keyed: KeyedWrite, _ partner: PartnerProfile) throws -> HTTPResponse? {
        try PartnerAdmission.storedReplay(
            key: keyed.key, bodyHash: keyed.bodyHash, partnerID: partner.id, now: keyed.now, keys: keys,
            metrics: metrics)
    }

    /// A refusal that keeps the rate-limit slot its request reserved (`admitted`).
    struct SpentRefusal: Error {
        let error: HeraldError
    }

    private func refund(_ partner: PartnerProfile, _ reservation: RateReservation) {
        try? keys.refundRate(partnerID: partner.id, seconds: reservation.nowSeconds)
    }

    /// Renders and size-checks one event, and every variant of its alert (the 422 names the part the partner
    /// controls that overflowed).
    func render(_ content: LiveActivityContent) throws -> ActivityPayloads {
        let rendered = LiveActivityPayload.render(content, signer: signer)
        try LiveActivityPayload.checkSize(rendered, event: content.event)
        try LiveActivityPayload.checkVariants(content, signer: signer)
        return Self.payloads(rendered)
    }

    /// The locale of `activity`'s user when one of `alerts` has variants to choose from (a read of the user's row);
    /// nil otherwise.
    func locale(of activity: ActivityRecord, for alerts: [LiveActivityAlert?]) throws -> String? {
        guard alerts.contains(where: { !($0?.localized.isEmpty ?? true) }) else { return nil }
        return try directory.locale(userID: activity.userID)
    }

    static let ended = HeraldError(
        status: 409, code: "activity_ended",
        message: "The activity has ended; start a new one.")

    static let scheduled = HeraldError(
        status: 409, code: "activity_scheduled",
        message: "The activity's start is scheduled and not sent yet: delete it and schedule a new one to change it.")

    static let followsChannel = HeraldError(
        status: 409, code: "activity_follows_channel",
        message: "The activity follows a broadcast channel: update or end the channel instead.")

    /// Keys of the push and activity endpoints share one table: the hash covers the method and path too, so
    /// one key sent to two endpoints is a reuse, not a replay.
    static func hash(_ request: RoutedRequest) -> String {
        Digest.hex(Digest.sha256(Array("\(request.http.method) \(request.http.path)\n".utf8) + request.http.body))
    }

    static func payloads(_ rendered: RenderedLiveActivity) -> ActivityPayloads {
        ActivityPayloads(
            apns: String(decoding: rendered.apns, as: UTF8.self),
            fcm: String(decoding: rendered.fcm, as: UTF8.self))
    }

    static func seconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }

    static func text(_ id: UUID) -> String { id.uuidString.lowercased() }

    static func parse(_ text: String) throws -> JSONValue {
        do { return try JSONParser.parse(text) } catch { throw HeraldError.internalError }
    }

    /// The activity's template and its state with the change's patch merged in (validated as a whole).
    static func merged(_ change: LiveActivityChange, into activity: ActivityRecord) throws
        -> (LiveActivityTemplate, LiveActivityState)
    {
        let template = try template(activity.template)
        let current = try LiveActivityState.decode(template: template, json: parse(activity.stateJSON))
        return (template, try change.statePatch.map { try current.merged(with: $0) } ?? current)
    }

    static func template(_ name: String) throws -> LiveActivityTemplate {
        guard let template = LiveActivityTemplate(rawValue: name) else { throw HeraldError.internalError }
        return template
    }

    /// A stored form read back (`LiveActivityAttributes.decode`, `LiveActivityAlert.decode`): a row that no
    /// longer decodes is Herald's fault, not the partner's.
    static func storedAttributes(_ text: String) throws -> LiveActivityAttributes {
        do { return try LiveActivityAttributes.decode(try parse(text)) } catch { throw HeraldError.internalError }
    }

    static func storedAlert(_ text: String) throws -> LiveActivityAlert {
        do { return try LiveActivityAlert.decode(try parse(text)) } catch { throw HeraldError.internalError }
    }

    /// An update's answer with its `alert` member: what became of the update's alert.
    static func withAlert(_ body: JSONValue, _ outcome: String) -> JSONValue {
        guard case .object(let members) = body else { return body }
        return .object(members + [("alert", .string(outcome))])
    }

    /// The body of GET (and of an update's or end's answer).
    static func activityJSON(
        _ activity: ActivityRecord, status: ActivityStatus, state: JSONValue, updatedAt: Date,
        expiresAt: Date, endedAt: Date?
    ) -> JSONValue {
        let attributes = (try? parse(activity.attributesJSON)) ?? .object([])
        var members: [(key: String, value: JSONValue)] = [
            ("activityId", .string(text(activity.id))), ("status", .string(status.rawValue)),
            ("template", .string(activity.template)), ("attributes", attributes), ("state", state),
            ("createdAt", .string(ISO8601.format(activity.createdAt))),
            ("updatedAt", .string(ISO8601.format(updatedAt))),
            ("expiresAt", .string(ISO8601.format(expiresAt))),
            ("endedAt", endedAt.map { .string(ISO8601.format($0)) } ?? .null),
        ]
        // A scheduled start's time, and why it was not sent when it was refused.
        if let startAt = activity.startAt { members.append(("startAt", .string(ISO8601.format(startAt)))) }
        if let refusal = activity.startRefusal { members.append(("refusal", .string(refusal))) }
        return .object(members)
    }
}

/// A write that lost its Idempotency-Key to a concurrent request: the answer is that request's.
struct Replayed: Error {
    let response: HTTPResponse
}
