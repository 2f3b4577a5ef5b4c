import Foundation
import HTTPServer
import HeraldCore
import Store

/// iOS 18 broadcast channels: one Live Activity every phone following the channel shows, changed by one
/// APNs broadcast whatever the number of followers (sql/034_live_channels.sql).
///
/// The partner opens, updates, ends and reads a channel; which users follow it is the host app's business (it
/// starts the activity with `pushType: .channel(id)` from `GET /api/internal/mini-apps/{miniAppId}/live-channels`).
/// The same rules as an activity's: the partner row's brand in every payload, rate limits, Idempotency-Key, an
/// audit row per call, payloads rendered and signed here. A worker creates the APNs channel, broadcasts the
/// newest change, and ends and deletes the channel at its TTL.
extension ActivityHandler {
    /// Most channels the host's list shows for one mini-app (its open channels are capped lower by default).
    static let followableLimit = 1_000
    /// Audit rows GET shows, newest first.
    static let channelEventsShown = 50

    // MARK: - Partner

    func openChannel(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        try keyedWrite(request, partner: partner) { try openChannel(request, partner: partner, keyed: $0) }
    }

    private func openChannel(_ request: RoutedRequest, partner: PartnerProfile, keyed: KeyedWrite) throws
        -> HTTPResponse
    {
        let (body, open) = try validated(keyed, partner: partner) {
            let body = try request.jsonBody()
            return (body, try LiveActivityValidator.validateChannelOpen(body, rules: rules))
        }
        let channelID = UUIDv7.make(at: keyed.now)
        let createdAt = UUIDv7.timestamp(of: channelID)!
        let expiresAt = try rules.expiresAt(startedAt: createdAt, now: createdAt, ttlSeconds: open.ttlSeconds)
        let timestamp = Self.seconds(createdAt)
        let endTimestamp = max(Self.seconds(expiresAt), timestamp + 1)
        let end = try broadcast(
            LiveActivityContent(
                activityID: channelID, miniAppID: partner.miniAppID, displayName: partner.displayName,
                template: open.template, attributes: open.attributes, state: open.state, event: .end,
                timestamp: endTimestamp, expiresAt: expiresAt, dismissalDate: expiresAt))
        let admission = try channels.admit(partner: partner, idempotencyKey: keyed.key, now: keyed.now, channelID: nil)
        return try admitted(admission.stored, admission.reservation, keyed, partner: partner) {
            let response = JSONWriter.string(
                .object([
                    ("channelId", .string(Self.text(channelID))), ("status", .string(ChannelStatus.opening.rawValue)),
                    ("expiresAt", .string(ISO8601.format(expiresAt))),
                ]))
            let ttlGiven = body["ttlSeconds"].map { $0 != .null } ?? false
            let write = ChannelOpenWrite(
                partnerID: partner.id, key: keyed.activityKey(response: response),
                channelID: channelID, now: createdAt, miniAppID: partner.miniAppID, template: open.template.rawValue,
                attributesJSON: JSONWriter.string(open.attributes.json), stateJSON: JSONWriter.string(open.state.json),
                expiresAt: expiresAt, timestamp: timestamp, relevanceScore: open.relevanceScore,
                endPayload: end.payload, ttlGiven: ttlGiven ? open.ttlSeconds : nil,
                maxOpen: budgets.openChannelsPerMiniApp)
            switch try channels.open(write) {
            case .opened:
                notifier.signalChannels()
                return try finish(.started, keyed, partner: partner) {
                    Reply.json(201, Array(response.utf8))
                }
            case .duplicate:
                return try finish(.duplicate, keyed, partner: partner) {
                    Reply.json(201, Array(response.utf8))
                }
            case .tooManyChannels:
                metrics.recordLiveActivityBudget(partner: partner.miniAppID, reason: .openChannels)
                throw LiveActivityBudgetReason.openChannels.error(retryAfter: nil, budgets: budgets)
                    ?? HeraldError.internalError
            }
        }
    }

    func updateChannel(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        try changeChannel(request, partner: partner, kind: .update) {
            try LiveActivityValidator.validateUpdate($0 ?? .null, rules: rules)
        }
    }

    func endChannel(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        try changeChannel(request, partner: partner, kind: .end) {
            try LiveActivityValidator.validateEnd($0, rules: rules)
        }
    }

    /// Starts the channel's activity on a user's iPhones (a push-to-start carrying `input-push-channel`): the same
    /// rules and budgets as any start, and the activity then follows the channel's broadcasts until its end.
    func startFromChannel(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        try keyedWrite(request, partner: partner) { try startFromChannel(request, partner: partner, keyed: $0) }
    }

    private func startFromChannel(_ request: RoutedRequest, partner: PartnerProfile, keyed: KeyedWrite) throws
        -> HTTPResponse
    {
        let channelID = try request.uuid("channelId")
        let (start, channel) = try validated(keyed, partner: partner) {
            let body = try request.jsonBody()
            guard let channel = try channels.find(id: channelID, partnerID: partner.id) else {
                throw HeraldError.notFound
            }
            let template = try Self.template(channel.template)
            let start = try LiveActivityValidator.validateChannelStart(
                body, channel: template, attributes: try Self.storedAttributes(channel.attributesJSON),
                state: try LiveActivityState.decode(template: template, json: Self.parse(channel.stateJSON)),
                rules: rules)
            return (start, channel)
        }
        guard channel.status == .open, channel.apnsChannelID != nil, channel.expiresAt > keyed.now else {
            // A retry of a start that was accepted before the channel ended is answered as it was, not refused.
            if let replay = try storedReplay(keyed, partner) { return replay }
            if channel.status == .opening {
                throw HeraldError(
                    status: 409, code: "channel_opening",
                    message: "APNs has not made the channel yet; retry in a moment.", retryAfter: 1)
            }
            throw Self.channelEnded
        }
        return try begin(start, ttlGiven: false, keyed, partner: partner, channel: channel)
    }

    func getChannel(_ request: RoutedRequest, partner: PartnerProfile) throws -> HTTPResponse {
        let id = try request.uuid("channelId")
        guard let channel = try channels.find(id: id, partnerID: partner.id) else { throw HeraldError.notFound }
        guard
            case .object(var members) = Self.channelJSON(
                channel, status: channel.status, state: try Self.parse(channel.stateJSON), updatedAt: channel.updatedAt,
                expiresAt: channel.expiresAt, endedAt: channel.endedAt)
        else {
            throw HeraldError.internalError
        }
        members.append(("broadcasts", .number(Double(channel.broadcasts))))
        members.append(("failure", channel.failure.map(JSONValue.string) ?? .null))
        let events = try channels.events(channelID: id, limit: Self.channelEventsShown).map(Self.channelEventJSON)
        members.append(("events", .array(events)))
        return Reply.json(200, .object(members))
    }

    // MARK: - Host

    /// The mini-app's channels phones can follow now, with APNs' channel id (`pushType: .channel(id)`) and what
    /// the app needs to start the activity itself: the attributes type, attributes and newest content state exactly
    /// as a remote start carries them, the partner row's brand included.
    func listLiveChannels(_ request: RoutedRequest) throws -> HTTPResponse {
        let miniAppID = request.parameter("miniAppId")
        let list = try channels.followable(miniAppID: miniAppID, limit: Self.followableLimit).map {
            channel, displayName in
            let template = try Self.template(channel.template)
            let start = LiveActivityPayload.localStart(
                LiveActivityContent(
                    activityID: channel.id, miniAppID: channel.miniAppID, displayName: displayName, template: template,
                    attributes: try Self.storedAttributes(channel.attributesJSON),
                    state: try LiveActivityState.decode(template: template, json: Self.parse(channel.stateJSON)),
                    event: .start, timestamp: channel.lastTimestamp, expiresAt: channel.expiresAt))
            return JSONValue.object([
                ("channelId", .string(Self.text(channel.id))), ("apnsChannelId", .string(channel.apnsChannelID ?? "")),
                ("template", .string(channel.template)), ("attributesType", .string(start.attributesType)),
                ("attributes", start.attributes), ("contentState", start.contentState),
                ("relevanceScore", .number(Double(channel.relevanceScore))),
                ("expiresAt", .string(ISO8601.format(channel.expiresAt))),
            ])
        }
        return Reply.json(200, .object([("miniAppId", .string(miniAppID)), ("channels", .array(list))]))
    }

    // MARK: - Steps

    private func changeChannel(
        _ request: RoutedRequest, partner: PartnerProfile, kind: ChannelChangeWrite.Kind,
        validate: (JSONValue?) throws -> LiveActivityChange
    ) throws -> HTTPResponse {
        try keyedWrite(request, partner: partner) { keyed in
            let channelID = try request.uuid("channelId")
            let change = try validated(keyed, partner: partner) { try validate(try Self.changeBody(request)) }
            let admission = try channels.admit(
                partner: partner, idempotencyKey: keyed.key, now: keyed.now, channelID: channelID)
            return try merging(
                admission.channel, noun: "channel", admission.stored, admission.reservation, keyed, partner: partner,
                reread: { try channels.find(id: channelID, partnerID: partner.id) }
            ) { current in
                guard current.status == .opening || current.status == .open, current.expiresAt > keyed.now else {
                    throw Self.channelEnded
                }
                let (write, response) = try channelWrite(change, kind: kind, current, keyed, partner: partner)
                let result = try channels.change(write)
                if result == .ended { throw Self.channelEnded }
                if result == .updated || result == .updatedSilently || result == .endedNow {
                    notifier.signalChannels()
                }
                return (result, response, write.silent?.response)
            }
        }
    }

    /// The write of one update or end merged into `channel`, and its answer.
    private func channelWrite(
        _ change: LiveActivityChange, kind: ChannelChangeWrite.Kind, _ channel: ChannelRecord, _ keyed: KeyedWrite,
        partner: PartnerProfile
    ) throws -> (ChannelChangeWrite, String) {
        let now = keyed.now
        let template = try Self.template(channel.template)
        let current = try LiveActivityState.decode(template: template, json: Self.parse(channel.stateJSON))
        let state = try change.statePatch.map { try current.merged(with: $0) } ?? current
        let attributes = try Self.storedAttributes(channel.attributesJSON)
        let timestamp = max(Self.seconds(now), channel.lastTimestamp + 1)
        let relevanceScore = change.relevanceScore ?? channel.relevanceScore
        let content = {
            (event: LiveActivityEvent, stamp: Int, expires: Date, dismissal: Date?, alert: LiveActivityAlert?) in
            LiveActivityContent(
                activityID: channel.id, miniAppID: partner.miniAppID, displayName: partner.displayName,
                template: template, attributes: attributes, state: state, event: event, timestamp: stamp,
                expiresAt: expires, dismissalDate: dismissal, alert: alert,
                relevanceScore: event == .end ? nil : relevanceScore)
        }
        let stateJSON = JSONWriter.string(state.json)
        switch kind {
        case .update:
            let expiresAt =
                try change.ttlSeconds.map {
                    try rules.expiresAt(startedAt: channel.createdAt, now: now, ttlSeconds: $0)
                } ?? channel.expiresAt
            let update = try broadcast(content(.update, timestamp, expiresAt, nil, change.alert))
            let endTimestamp = max(Self.seconds(expiresAt), timestamp + 1)
            let end = try broadcast(content(.end, endTimestamp, expiresAt, expiresAt, nil))
            let body = Self.channelJSON(
                channel, status: channel.status, state: state.json, updatedAt: now, expiresAt: expiresAt, endedAt: nil)
            // With an alert, the answer says whether it was shown, as for an activity: `sent`, or `dropped_budget`
            // once the channel's alerted budget is spent and the update goes out silent (the statement decides).
            let response = JSONWriter.string(change.alert == nil ? body : Self.withAlert(body, "sent"))
            var write = ChannelChangeWrite(
                partnerID: partner.id, key: keyed.activityKey(response: response), channelID: channel.id,
                version: channel.version, now: now,
                kind: .update, stateJSON: stateJSON, timestamp: timestamp, payload: update.payload,
                priority: update.priority, endPayload: end.payload, expiresAt: expiresAt,
                relevanceScore: relevanceScore,
                deleteAt: nil,
                inputs: ActivityEventInputs(
                    patchJSON: change.statePatch.map(JSONWriter.string),
                    alertTitle: change.alert?.title, ttlSeconds: change.ttlSeconds))
            if change.alert != nil {
                write.alertedLimit = budgets.alertedUpdatesPerHour
                write.silent = (
                    try broadcast(content(.update, timestamp, expiresAt, nil, nil)).payload,
                    JSONWriter.string(Self.withAlert(body, "dropped_budget"))
                )
            }
            return (write, response)
        case .end:
            let dismissAt = try rules.dismissalDate(requested: change.dismissAt, endedAt: now)
            let end = try broadcast(content(.end, timestamp, channel.expiresAt, dismissAt, change.alert))
            let response = JSONWriter.string(
                Self.channelJSON(
                    channel, status: .ending, state: state.json, updatedAt: now, expiresAt: channel.expiresAt,
                    endedAt: now))
            let write = ChannelChangeWrite(
                partnerID: partner.id, key: keyed.activityKey(response: response), channelID: channel.id,
                version: channel.version, now: now,
                kind: .end, stateJSON: stateJSON, timestamp: timestamp, payload: end.payload, priority: end.priority,
                endPayload: end.payload, expiresAt: channel.expiresAt, relevanceScore: relevanceScore,
                deleteAt: dismissAt,
                inputs: ActivityEventInputs(alertTitle: change.alert?.title, dismissAt: change.dismissAt))
            return (write, response)
        }
    }

    /// The APNs broadcast of one event, size-checked (the 422 names the part the partner controls that overflowed).
    private func broadcast(_ content: LiveActivityContent) throws -> (payload: String, priority: Int) {
        let rendered = LiveActivityPayload.render(content, signer: signer)
        try LiveActivityPayload.checkSize(rendered, event: content.event)
        return (String(decoding: rendered.apns, as: UTF8.self), rendered.apnsPriority)
    }

    static let channelEnded = HeraldError(
        status: 409, code: "channel_ended",
        message: "The channel has ended; open a new one.")

    /// The body of GET and of a change's answer.
    static func channelJSON(
        _ channel: ChannelRecord, status: ChannelStatus, state: JSONValue, updatedAt: Date,
        expiresAt: Date, endedAt: Date?
    ) -> JSONValue {
        let attributes = (try? parse(channel.attributesJSON)) ?? .object([])
        return .object([
            ("channelId", .string(text(channel.id))), ("status", .string(status.rawValue)),
            ("template", .string(channel.template)), ("attributes", attributes), ("state", state),
            ("relevanceScore", .number(Double(channel.relevanceScore))),
            ("createdAt", .string(ISO8601.format(channel.createdAt))),
            ("updatedAt", .string(ISO8601.format(updatedAt))),
            ("expiresAt", .string(ISO8601.format(expiresAt))),
            ("endedAt", endedAt.map { .string(ISO8601.format($0)) } ?? .null),
        ])
    }

    /// An audit row in the shape of an activity's (`eventJSON`), with one outcome instead of per-device counts.
    static func channelEventJSON(_ event: ChannelEventRecord) throws -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(text(event.id))), ("kind", .string(event.kind)),
            ("createdAt", .string(ISO8601.format(event.createdAt))),
        ]
        if let state = event.stateJSON { members.append(("state", try parse(state))) }
        if let title = event.alertTitle { members.append(("alert", .object([("title", .string(title))]))) }
        if let ttl = event.ttlSeconds { members.append(("ttlSeconds", .number(Double(ttl)))) }
        if let dismissAt = event.dismissAt { members.append(("dismissAt", .string(ISO8601.format(dismissAt)))) }
        if let key = event.idempotencyKey { members.append(("idempotencyKey", .string(key))) }
        members.append(("outcome", .string(event.outcome)))
        if let reason = event.reason { members.append(("reason", .string(reason))) }
        if let finished = event.finishedAt { members.append(("finishedAt", .string(ISO8601.format(finished)))) }
        return .object(members)
    }
}
