import Foundation
import Synchronization

/// The broadcast channels of every app, by bundle id, in creation order, at most `limit` per app (Apple's
/// 10,000 per environment; a test may set fewer).
///
/// Channel management is rare next to pushes: one lock around plain arrays is enough, and a broadcast's lookup
/// scans one app's channels (a dictionary per app would make the listing order arbitrary).
final class BroadcastChannels: Sendable {
    /// The longest `apns-channel-id` taken (Apple documents a limit without its number); ids made here are 24.
    static let maxIDLength = 64

    let limit: Int
    private let channels = Mutex<[String: [SimulatorChannel]]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Creates a channel for `bundleID`; nil when the app already holds `limit` channels.
    func create(bundleID: String, messageStoragePolicy: Int, id: String, at date: Date) -> SimulatorChannel? {
        let channel = SimulatorChannel(
            bundleID: bundleID, id: id, messageStoragePolicy: messageStoragePolicy,
            createdAt: date)
        return channels.withLock { table -> SimulatorChannel? in
            guard table[bundleID, default: []].count < limit else { return nil }
            table[bundleID, default: []].append(channel)
            return channel
        }
    }

    /// The channel `id` of `bundleID`: a channel of another app is not found, as at APNs.
    func channel(bundleID: String, id: String) -> SimulatorChannel? {
        channels.withLock { table in table[bundleID]?.first { $0.id == id } }
    }

    /// The app's channel ids, oldest first.
    func ids(bundleID: String) -> [String] {
        channels.withLock { table in table[bundleID]?.map(\.id) ?? [] }
    }

    /// Deletes one channel; false when the app has no such channel.
    func delete(bundleID: String, id: String) -> Bool {
        channels.withLock { table in
            guard let index = table[bundleID]?.firstIndex(where: { $0.id == id }) else { return false }
            table[bundleID]?.remove(at: index)
            if table[bundleID]?.isEmpty == true { table.removeValue(forKey: bundleID) }
            return true
        }
    }

    /// Every channel, by bundle id (sorted), each app's oldest first.
    func all() -> [(bundleID: String, channels: [SimulatorChannel])] {
        channels.withLock { table in table.map { ($0.key, $0.value) } }.sorted { $0.bundleID < $1.bundleID }
    }

    /// Forgets every channel; returns how many there were.
    @discardableResult
    func removeAll() -> Int {
        channels.withLock { table in
            let count = table.values.reduce(0) { $0 + $1.count }
            table.removeAll()
            return count
        }
    }

    /// A new channel id: 16 random bytes in standard, padded base64 (24 characters), the form of Apple's ids.
    static func newID(_ identifiers: Identifiers) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for word in [identifiers.next(), identifiers.next()] {
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return Data(bytes).base64EncodedString()
    }

    /// True for a channel id Apple could have made: standard, padded base64 of at least one byte, at most
    /// `maxIDLength` characters. Anything else is BadChannelId ("isn't properly encoded, or it's greater than the
    /// allowed length").
    static func isWellFormedID(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= maxIDLength, let data = Data(base64Encoded: id) else { return false }
        return !data.isEmpty
    }
}
