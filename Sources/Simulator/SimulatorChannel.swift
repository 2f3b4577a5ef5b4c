import Foundation
import HeraldCore

/// A broadcast channel the simulator holds for an app, as `GET /sim/channels` lists it.
public struct SimulatorChannel: Sendable, Equatable {
    /// The bundle id the channel was created under (`/1/apps/{bundleId}/channels`).
    public var bundleID: String
    /// The id the create answered in `apns-channel-id`: base64, as Apple's are.
    public var id: String
    /// 0: No Message Stored; 1: Most Recent Message Stored.
    public var messageStoragePolicy: Int
    /// Always `LiveActivity`, the only push type Apple takes for a channel.
    public var pushType: String = "LiveActivity"
    public var createdAt: Date

    /// A channel with the No Message Stored policy takes only broadcasts with `apns-expiration: 0`.
    public var storesMessages: Bool { messageStoragePolicy == 1 }

    /// `{"channelId","messageStoragePolicy","pushType","createdAt"}` (the bundle id is the key around it).
    var json: JSONValue {
        .object([
            ("channelId", .string(id)), ("messageStoragePolicy", .number(Double(messageStoragePolicy))),
            ("pushType", .string(pushType)), ("createdAt", .string(ISO8601.format(createdAt, microseconds: true))),
        ])
    }
}
