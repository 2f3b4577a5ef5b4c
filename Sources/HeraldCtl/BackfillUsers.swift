import Foundation
import HeraldCore
import Store

/// `backfill users`: each line is `{"userId","tenantId","emails","wallets","timeZone"?,"quietHours"?,
/// "devices":[{"deviceId",...}]}`,
/// checked by the host API's own rules (`HostDirectoryRules`) and written by the same SQL
/// (`herald_put_user`, `herald_put_device`): identifiers normalised, a user moved to another
/// tenant takes its identifiers along, a token another device row holds is taken from it. Each
/// line is its own subtransaction: one the directory refuses (an identifier of another user) is
/// reported and the others are written. Devices are upserted; ones the line does not name stay. So do the user's
/// time zone and quiet hours when the line carries neither; a line with either replaces both, as a PUT does.
struct UsersBackfill {
    let store: BackfillStore
    let batchSize: Int
    static let maxDevices = 100
    static let lineFields = HostDirectoryRules.userFields.union(UserGuards.fields).union(["userId", "devices"])
    private var summary = UsersSummary()

    init(store: BackfillStore, batchSize: Int) {
        self.store = store
        self.batchSize = batchSize
    }

    mutating func load(_ input: LineReader) throws -> UsersSummary {
        let progress = Progress(label: "backfill users", totalBytes: input.size)
        var batch: [BackfillUser] = []
        while !Interruption.requested, let bytes = try input.next() {
            if BackfillLine.isBlank(bytes) { continue }
            summary.lines += 1
            let line = input.lineNumber
            switch BackfillLine.parse(bytes, line: line) {
            case .failure(let rejected): summary.rejected.append(rejected)
            case .success(let json):
                do throws(HeraldError) {
                    batch.append(try Self.check(json, line: line))
                } catch {
                    summary.rejected.append(.of(line, error))
                }
            }
            if batch.count >= batchSize {
                try flush(batch)
                batch.removeAll(keepingCapacity: true)
                progress.update(lines: summary.lines, bytes: input.bytesRead)
            }
        }
        try flush(batch)
        summary.interrupted = Interruption.requested
        summary.rejected.sort { $0.line < $1.line }
        progress.finish(lines: summary.lines, bytes: input.bytesRead, interrupted: summary.interrupted)
        return summary
    }

    static func check(_ json: JSONValue, line: Int) throws(HeraldError) -> BackfillUser {
        let fields = try JSONFields(json, allowed: lineFields)
        let userID = try HostDirectoryRules.externalID(try fields.requiredString("userId"), field: "userId")
        let entry = try HostDirectoryRules.user(fields)
        var devices: [(deviceID: String, device: DeviceRegistration)] = []
        if let value = fields.value("devices") {
            guard let items = value.arrayValue, items.count <= maxDevices else {
                throw .invalidField("devices", "devices must be an array of at most \(maxDevices) devices.")
            }
            var seen = Set<String>()
            for (index, item) in items.enumerated() {
                let path = "devices[\(index)]"
                let deviceFields = try JSONFields(
                    item, allowed: HostDirectoryRules.deviceFields.union(["deviceId"]),
                    path: path)
                let deviceID = try HostDirectoryRules.externalID(
                    try deviceFields.requiredString("deviceId"),
                    field: "\(path).deviceId")
                guard seen.insert(deviceID).inserted else {
                    throw .invalidField("\(path).deviceId", "deviceId \(deviceID) appears twice in this line.")
                }
                devices.append((deviceID, try HostDirectoryRules.device(deviceFields)))
            }
        }
        let guards = UserGuards.fields.contains(where: fields.has) ? try UserGuards.parse(fields) : nil
        return BackfillUser(line: line, userID: userID, entry: entry, devices: devices, guards: guards)
    }

    private mutating func flush(_ batch: [BackfillUser]) throws {
        guard !batch.isEmpty else { return }
        let outcomes = try store.putUsers(batch)
        for user in batch {
            guard let outcome = outcomes[user.line] else { continue }
            if let error = outcome.error {
                summary.rejected.append(.of(user.line, error))
            } else {
                summary.users += 1
                summary.devices += outcome.devices
            }
        }
    }
}
