import Foundation
import Store

/// What a leased broadcast channel needs from APNs next (sql/functions/channel_claim.sql, channel_record.sql). Pure.
///
/// - opening: create the APNs channel;
/// - open or ending with a change not broadcast (`version > sentVersion`): broadcast the newest change;
/// - ending with no APNs channel: close it (nothing to delete: APNs never made it);
/// - ending, its end broadcast: delete the APNs channel once `deleteAt` has come;
/// - anything else (a claim raced a change that another worker already sent): release the lease.
enum ChannelAction: Equatable {
    case create
    case broadcast(apnsChannelID: String, version: Int, payload: String, priority: Int, expiration: Int?)
    case delete(apnsChannelID: String)
    case close
    case release

    static func next(for channel: LeasedChannel, now: Date) -> ChannelAction {
        switch channel.status {
        case .opening:
            return .create
        case .open, .ending:
            guard let id = channel.apnsChannelID else { return channel.status == .ending ? .close : .create }
            if channel.version > channel.sentVersion, let payload = channel.payload {
                // APNs keeps the newest message for a phone that is offline until the change stops being worth
                // showing: the TTL for an update, the dismissal (the channel's deletion) for the end.
                let until = channel.status == .ending ? (channel.deleteAt ?? channel.expiresAt) : channel.expiresAt
                return .broadcast(
                    apnsChannelID: id, version: channel.version, payload: payload, priority: channel.priority ?? 5,
                    expiration: max(Int(until.timeIntervalSince1970), Int(now.timeIntervalSince1970) + 1))
            }
            if channel.status == .ending, (channel.deleteAt ?? now) <= now {
                return .delete(apnsChannelID: id)
            }
            return .release
        case .ended, .failed:
            return .release
        }
    }
}
