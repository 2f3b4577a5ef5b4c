import Foundation

/// What a partner's revocation writes to end its active activities at once on every device
/// (herald_partner_end_activities): for each, its end dismissed now (`StoredLiveActivity.immediateEnd`) as APNs and
/// FCM payload text and that end's timestamp, in the order given. An activity that follows a broadcast channel ends
/// with the channel's end: its payloads are empty and its timestamp stays its last.
public struct RevocationEnds: Sendable, Equatable {
    public private(set) var ids: [UUID] = []
    public private(set) var apns: [String] = []
    public private(set) var fcm: [String] = []
    public private(set) var timestamps: [Int] = []

    /// Renders the ends of `activities` (each with whether it follows a channel), of the partner `miniAppID` named
    /// `displayName`, signed by `signer`, which is asked for only when an end is rendered.
    public init(
        _ activities: [(activity: StoredLiveActivity, followsChannel: Bool)], miniAppID: String,
        displayName: String, now: Date, signer: () throws -> any PayloadSigner
    ) throws {
        for (activity, followsChannel) in activities {
            ids.append(activity.id)
            if followsChannel {
                apns.append("")
                fcm.append("")
                timestamps.append(activity.lastTimestamp)
                continue
            }
            let end = try activity.immediateEnd(
                miniAppID: miniAppID, displayName: displayName, now: now,
                signer: try signer())
            apns.append(String(decoding: end.rendered.apns, as: UTF8.self))
            fcm.append(String(decoding: end.rendered.fcm, as: UTF8.self))
            timestamps.append(end.timestamp)
        }
    }

    public var isEmpty: Bool { ids.isEmpty }
}
