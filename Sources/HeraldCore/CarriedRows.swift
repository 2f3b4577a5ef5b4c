/// The rows of a `WakeUpMessage.carried`: the deliveries an intake leased to the worker it notifies, each row the ten
/// `Field`s as the intake's session wrote them (Postgres' text of each column; Store's `DeliveryStore.leasedRows`
/// reads them as its columns). Kept as the payload's bytes and the bounds of each field: read in place, field by
/// field (splitting into Strings first was a seventh of a worker's CPU at 2,000 pushes/s).
public struct CarriedRows: Sendable, Equatable {
    /// A row's fields, in the order herald_intake_push writes them (functions/intake_push.sql, `due_rows`).
    public enum Field: Int, CaseIterable, Sendable {
        case id, service, environment, expiresAt, token, bundleID, partnerID, availableAt, collapseID, payload
    }

    /// How many fields a row has.
    public static let fieldCount = Field.allCases.count

    private let bytes: [UInt8]
    /// `fieldCount` bounds a row, row after row.
    private let bounds: [Range<Int>]

    /// How many rows.
    public var count: Int { bounds.count / Self.fieldCount }

    /// Rows of fields in `Field` order; nil when a row has another number of fields, or a field holds a separator
    /// (the payload, the last field, may hold a field separator, never a row separator).
    public init?(_ rows: [[[UInt8]]]) {
        var text: [UInt8] = []
        for (index, row) in rows.enumerated() {
            guard row.count == Self.fieldCount else { return nil }
            if index > 0 { text.append(WakeUpMessage.rowSeparator) }
            for (field, value) in row.enumerated() {
                guard !value.contains(WakeUpMessage.rowSeparator),
                    field == Field.payload.rawValue || !value.contains(WakeUpMessage.fieldSeparator)
                else { return nil }
                if field > 0 { text.append(WakeUpMessage.fieldSeparator) }
                text += value
            }
        }
        self.init(text: text[...])
    }

    /// Reads the text after `rows:`; nil when a row has fewer than ten fields. Whatever follows a row's ninth field
    /// separator (but a row separator) is its payload.
    init?(text: some Collection<UInt8>) {
        let bytes = Array(text)
        let fieldCount = Self.fieldCount
        var bounds: [Range<Int>] = []
        var position = 0
        while true {
            var field = 0
            var start = position
            while position < bytes.count, bytes[position] != WakeUpMessage.rowSeparator {
                if bytes[position] == WakeUpMessage.fieldSeparator, field < fieldCount - 1 {
                    bounds.append(start..<position)
                    field += 1
                    start = position + 1
                }
                position += 1
            }
            guard field == fieldCount - 1 else { return nil }
            bounds.append(start..<position)
            guard position < bytes.count else { break }
            position += 1
        }
        self.bytes = bytes
        self.bounds = bounds
    }

    /// The text after `rows:`.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Calls `body` with the bytes of `field` of row `row` (0 ..< count), without copying them.
    public func withField<Result>(
        _ field: Field, ofRow row: Int,
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result {
        let range = bounds[row * Self.fieldCount + field.rawValue]
        return try bytes.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// The bytes of `field` of row `row`, copied.
    public func field(_ field: Field, ofRow row: Int) -> [UInt8] { withField(field, ofRow: row) { Array($0) } }
}
