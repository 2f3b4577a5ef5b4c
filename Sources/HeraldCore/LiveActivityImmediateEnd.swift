import Foundation

/// An active activity as stored, read back to end it at once: by a newer start of the same user and mini-app
/// (replacement), or by the partner's revocation. Its card must leave the lock screen now.
public struct StoredLiveActivity: Sendable {
    public let id: UUID
    public let template: String
    /// The stored forms (`live_activities.attributes`, `.state`) as JSON text.
    public let attributesJSON: String
    public let stateJSON: String
    /// `aps.timestamp` of its newest event.
    public let lastTimestamp: Int
    public let createdAt: Date
    public let expiresAt: Date

    public init(
        id: UUID, template: String, attributesJSON: String, stateJSON: String, lastTimestamp: Int,
        createdAt: Date, expiresAt: Date
    ) {
        self.id = id
        self.template = template
        self.attributesJSON = attributesJSON
        self.stateJSON = stateJSON
        self.lastTimestamp = lastTimestamp
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The end dismissed at `now` with the last state, sent at once although silent, with a timestamp after every
    /// earlier event (iOS ignores an older one). A stored form that no longer decodes is Herald's fault: 500.
    public func immediateEnd(miniAppID: String, displayName: String, now: Date, signer: some PayloadSigner) throws
        -> (rendered: RenderedLiveActivity, timestamp: Int)
    {
        guard let template = LiveActivityTemplate(rawValue: template) else { throw HeraldError.internalError }
        let attributes: LiveActivityAttributes
        let state: LiveActivityState
        do {
            attributes = try LiveActivityAttributes.decode(try JSONParser.parse(attributesJSON))
            state = try LiveActivityState.decode(template: template, json: try JSONParser.parse(stateJSON))
        } catch {
            throw HeraldError.internalError
        }
        let stamp = max(Int(now.timeIntervalSince1970.rounded(.down)), lastTimestamp + 1)
        let content = LiveActivityContent(
            activityID: id, miniAppID: miniAppID, displayName: displayName, template: template, attributes: attributes,
            state: state, event: .end, timestamp: stamp, expiresAt: expiresAt, dismissalDate: now, alert: nil,
            immediate: true)
        return (LiveActivityPayload.render(content, signer: signer), stamp)
    }
}
