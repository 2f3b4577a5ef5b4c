import HeraldCore

/// The payload rules of an `apns-push-type: liveactivity` push, as Apple documents them for ActivityKit
/// push notifications (start, update, end).
///
/// The body is a JSON object whose `aps` holds:
/// - `timestamp`: a whole number of UNIX seconds (the device keeps the newest content by it);
/// - `event`: `start`, `update` or `end`;
/// - `content-state`: an object (the app's `ContentState`) on start and update; optional on end, an object when
///   present;
/// - on start, also `attributes-type` (the name of the app's `ActivityAttributes` struct, non-empty), `attributes`
///   (an object) and `alert`, an object with a `title` or a `body` (a string, or a localized `loc-key` object):
///   Apple requires an alert to start an activity remotely;
/// - when present: `stale-date` and `dismissal-date` numbers of UNIX seconds, `input-push-token` 1,
///   `relevance-score` a number, `alert` an object;
/// - `input-push-channel` (iOS 18: the started activity follows that broadcast channel) only on start, a channel id
///   of the shape APNs makes, and not beside `input-push-token` (an activity has one push type, ActivityKit's
///   `PushType`: a token or a channel).
///
/// `dismissal-date` is accepted on every event: Apple documents its effect only on end (and real clients send it
/// on start and update too) but no refusal of it elsewhere, and the device simply ignores it there. Keys Apple
/// does not define inside `aps` are ignored, as APNs ignores them, and so is everything outside `aps`.
///
/// The first rule broken is the answer, with a detail naming it (the detail goes to the simulator's record, not
/// into the APNs answer). Only Live Activity pushes are parsed into a document; other pushes keep the
/// allocation-free `JSONShape` scan.
enum LiveActivityPayloadValidator {
    /// The rejection for `body`, or nil when it is a valid Live Activity payload.
    static func check(_ body: [UInt8]) -> APNsRejection? {
        // Same depth bound as JSONShape, so a payload refused here is refused for its content, not its nesting.
        // JSONParser, unlike JSONShape, refuses duplicate keys: which of two `event`s a device would take is
        // anyone's guess, so such a payload is refused here rather than passed.
        guard let document = try? JSONParser.parse(body, maxDepth: JSONShape.maxDepth),
            let members = document.objectMembers
        else { return .liveActivityPayload("the payload must be a JSON object (without duplicate keys)") }
        guard let aps = members.first(where: { $0.key == "aps" })?.value else {
            return .liveActivityPayload("aps is required")
        }
        guard let fields = aps.objectMembers else { return .liveActivityPayload("aps must be an object") }
        return check(aps: fields)
    }

    /// The `aps` keys Apple defines for Live Activities, read in one pass over the members.
    private struct Fields {
        var timestamp: JSONValue?
        var event: JSONValue?
        var contentState: JSONValue?
        var attributesType: JSONValue?
        var attributes: JSONValue?
        var alert: JSONValue?
        var staleDate: JSONValue?
        var dismissalDate: JSONValue?
        var inputPushToken: JSONValue?
        var inputPushChannel: JSONValue?
        var relevanceScore: JSONValue?

        init(_ members: [(key: String, value: JSONValue)]) {
            for (key, value) in members {
                switch key {
                case "timestamp": timestamp = value
                case "event": event = value
                case "content-state": contentState = value
                case "attributes-type": attributesType = value
                case "attributes": attributes = value
                case "alert": alert = value
                case "stale-date": staleDate = value
                case "dismissal-date": dismissalDate = value
                case "input-push-token": inputPushToken = value
                case "input-push-channel": inputPushChannel = value
                case "relevance-score": relevanceScore = value
                default: break
                }
            }
        }
    }

    private enum Event { case start, update, end }

    private static func check(aps members: [(key: String, value: JSONValue)]) -> APNsRejection? {
        let fields = Fields(members)

        guard let timestamp = fields.timestamp else { return .liveActivityPayload("aps.timestamp is required") }
        guard isUnixSeconds(timestamp, whole: true) else {
            return .liveActivityPayload("aps.timestamp must be a whole number of UNIX seconds")
        }
        guard let eventValue = fields.event else { return .liveActivityPayload("aps.event is required") }
        let event: Event
        switch eventValue.stringValue {
        case "start": event = .start
        case "update": event = .update
        case "end": event = .end
        default: return .liveActivityPayload("aps.event must be start, update or end")
        }

        if let contentState = fields.contentState {
            guard contentState.objectMembers != nil else {
                return .liveActivityPayload("aps.content-state must be an object")
            }
        } else if event != .end {
            return .liveActivityPayload(
                event == .start
                    ? "aps.content-state is required on start"
                    : "aps.content-state is required on update")
        }

        if event == .start {
            guard let attributesType = fields.attributesType?.stringValue, !attributesType.isEmpty else {
                return .liveActivityPayload("aps.attributes-type (a non-empty string) is required on start")
            }
            guard fields.attributes?.objectMembers != nil else {
                return .liveActivityPayload("aps.attributes (an object) is required on start")
            }
            guard let alert = fields.alert else { return .liveActivityPayload("aps.alert is required on start") }
            guard alert.objectMembers != nil else { return .liveActivityPayload("aps.alert must be an object") }
            guard isAlertText(alert["title"]) || isAlertText(alert["body"]) else {
                return .liveActivityPayload("aps.alert needs a title or a body on start")
            }
        } else if let alert = fields.alert, alert.objectMembers == nil {
            return .liveActivityPayload("aps.alert must be an object")
        }

        if let staleDate = fields.staleDate, !isUnixSeconds(staleDate, whole: false) {
            return .liveActivityPayload("aps.stale-date must be a number of UNIX seconds")
        }
        if let dismissalDate = fields.dismissalDate, !isUnixSeconds(dismissalDate, whole: false) {
            return .liveActivityPayload("aps.dismissal-date must be a number of UNIX seconds")
        }
        if let inputPushToken = fields.inputPushToken, inputPushToken.numberValue != 1 {
            return .liveActivityPayload("aps.input-push-token must be 1")
        }
        if let channel = fields.inputPushChannel {
            guard event == .start else { return .liveActivityPayload("aps.input-push-channel is for start only") }
            guard let id = channel.stringValue, BroadcastChannels.isWellFormedID(id) else {
                return .liveActivityPayload("aps.input-push-channel must be a channel id (base64)")
            }
            guard fields.inputPushToken == nil else {
                return .liveActivityPayload("aps.input-push-channel and aps.input-push-token exclude each other")
            }
        }
        if let relevanceScore = fields.relevanceScore, relevanceScore.numberValue == nil {
            return .liveActivityPayload("aps.relevance-score must be a number")
        }
        return nil
    }

    /// A JSON number of seconds since 1970, not negative; `whole`: without a fraction.
    private static func isUnixSeconds(_ value: JSONValue, whole: Bool) -> Bool {
        guard let seconds = value.numberValue, seconds >= 0 else { return false }
        return !whole || seconds == seconds.rounded(.towardZero)
    }

    /// An alert `title` or `body`: a non-empty string, or a localized form (an object with `loc-key`).
    private static func isAlertText(_ value: JSONValue?) -> Bool {
        if let text = value?.stringValue { return !text.isEmpty }
        return value?["loc-key"]?.stringValue.map { !$0.isEmpty } ?? false
    }
}
