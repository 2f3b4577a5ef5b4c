import Foundation

/// The payload of a NOTIFY on the workers' deliveries channels (`herald_deliveries`, every worker's, and
/// `herald_deliveries_<pid>`, one worker's): what an intake, a SQL function or heraldctl tells the workers about rows
/// due. The one reader and writer of that text; the SQL producers (functions/intake_push.sql and the functions that
/// send an empty payload) write exactly these forms, which `NotificationTests` and `IntakeLeaseTests` check.
///
/// Version 1, the forms below, is written without a prefix (so workers from before this type read it during a
/// rolling upgrade). A later version is written `v<N>:` and its body; a worker that cannot read it gets
/// `.later(version:)` and treats it as a plain wake-up: it walks the due index (its poll), and releases rows leased to
/// it that it does not hold, as the message may have named some (Worker/DeliveryWorker.swift, `Hints.announce`).
public enum WakeUpMessage: Sendable, Equatable {
    /// Rows are due (the empty payload): the worker walks the due index. Every producer but herald_intake_push.
    case due
    /// On the shared channel: only the worker whose listener connection is served by server process `listener` claims
    /// (the decimal process id). What intakes sent before each worker had a channel of its own.
    case named(listener: Int32)
    /// Pending rows an intake made due now, by id (comma-separated): the worker leases them by primary key.
    case listed([UUID])
    /// Rows an intake leased to the worker, by id (`leased:` and the ids): the worker reads them.
    case leased([UUID])
    /// Rows an intake leased to the worker, carried whole (`rows:` and the rows): the worker sends them as they are.
    case carried(CarriedRows)
    /// A form of a later version than `version` (`v<N>:`), which this worker cannot read.
    case later(version: Int)

    /// The version this type writes and reads.
    public static let version = 1

    static let leasedPrefix = "leased:"
    static let carriedPrefix = "rows:"
    /// Within `rows:`: between the fields of a row (U+001F) and between rows (U+001E), bytes no JSON text holds raw.
    static let fieldSeparator: UInt8 = 0x1F
    static let rowSeparator: UInt8 = 0x1E

    /// The payload's text.
    public func encode() -> String {
        switch self {
        case .due: ""
        case .named(let listener): String(listener)
        case .listed(let ids): Self.idList(ids)
        case .leased(let ids): Self.leasedPrefix + Self.idList(ids)
        case .carried(let rows): Self.carriedPrefix + rows.text
        case .later(let version): "v\(version):"
        }
    }

    /// Reads a payload; nil when it is none of the forms (a list with a part that is not an id, rows with a field
    /// missing, an empty list, a version prefix with no number).
    public init?(decoding payload: String) {
        if payload.isEmpty {
            self = .due
        } else if payload.hasPrefix(Self.carriedPrefix) {
            let text = payload.utf8.dropFirst(Self.carriedPrefix.utf8.count)
            guard let rows = CarriedRows(text: text) else { return nil }
            self = .carried(rows)
        } else if payload.hasPrefix(Self.leasedPrefix) {
            guard let ids = Self.ids(payload.dropFirst(Self.leasedPrefix.count)) else { return nil }
            self = .leased(ids)
        } else if payload.hasPrefix("v") {
            // `v<N>:`: no id starts with a v (hex digits only), no process id, no other form.
            guard let colon = payload.firstIndex(of: ":"),
                let version = Int(payload[payload.index(after: payload.startIndex)..<colon]), version > Self.version
            else { return nil }
            self = .later(version: version)
        } else if payload.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let listener = Int32(payload) else { return nil }
            self = .named(listener: listener)
        } else {
            guard let ids = Self.ids(payload[...]) else { return nil }
            self = .listed(ids)
        }
    }

    private static func idList(_ ids: [UUID]) -> String { ids.map(UUIDText.string).joined(separator: ",") }

    /// Comma-separated ids, or nil when any part is not one (or there is none).
    private static func ids(_ text: Substring) -> [UUID]? {
        guard !text.isEmpty else { return nil }
        var ids: [UUID] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let id = UUIDText.parse(part) else { return nil }
            ids.append(id)
        }
        return ids
    }
}
