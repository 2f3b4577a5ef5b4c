import Foundation
import HeraldCore
import Testing

@Suite struct WakeUpMessageTests {
    static let ids = [UUID(), UUID()]
    static let row: [[UInt8]] = [
        Array(UUIDText.string(ids[0]).utf8), Array("apns".utf8), Array("production".utf8),
        Array("2026-01-02 03:04:05.5+00".utf8), Array("ab12".utf8), [], Array(UUIDText.string(ids[1]).utf8),
        Array("2026-01-02 03:03:05+00".utf8), Array(String(repeating: "c", count: 64).utf8),
        Array(#"{"aps":{"alert":"a\u001fb"}}"#.utf8) + [0x1F],
    ]

    static let messages: [WakeUpMessage] = [
        .due, .named(listener: 4242), .listed(ids), .listed([ids[0]]), .leased(ids),
        .carried(CarriedRows([row, row])!), .later(version: 2),
    ]

    @Test(arguments: messages)
    func aMessageReadsBackAsItself(_ message: WakeUpMessage) {
        #expect(WakeUpMessage(decoding: message.encode()) == message)
    }

    @Test func versionOneIsWrittenWithoutAPrefixInTheFormsWorkersAlreadyRead() {
        #expect(WakeUpMessage.due.encode() == "")
        #expect(WakeUpMessage.named(listener: 17).encode() == "17")
        #expect(WakeUpMessage.listed(Self.ids).encode() == Self.ids.map(UUIDText.string).joined(separator: ","))
        #expect(WakeUpMessage.leased([Self.ids[0]]).encode() == "leased:" + UUIDText.string(Self.ids[0]))
        let carried = WakeUpMessage.carried(CarriedRows([Self.row])!).encode()
        #expect(carried == "rows:" + Self.row.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\u{1F}"))
    }

    @Test func idsReadInEitherLetterCase() {
        #expect(WakeUpMessage(decoding: Self.ids.map(\.uuidString).joined(separator: ",")) == .listed(Self.ids))
        #expect(WakeUpMessage(decoding: "leased:" + Self.ids[1].uuidString) == .leased([Self.ids[1]]))
    }

    @Test func carriedRowsGiveEachFieldAndKeepSeparatorsInThePayload() throws {
        let rows = try #require(CarriedRows([Self.row, Self.row]))
        #expect(rows.count == 2)
        for row in 0..<rows.count {
            for field in CarriedRows.Field.allCases {
                #expect(rows.field(field, ofRow: row) == Self.row[field.rawValue])
            }
        }
        // A field separator in any field but the payload, a row separator anywhere, or a field too few: not rows.
        var split = Self.row
        split[4] += [0x1F]
        #expect(CarriedRows([split]) == nil)
        var broken = Self.row
        broken[9] += [0x1E]
        #expect(CarriedRows([broken]) == nil)
        #expect(CarriedRows([Array(Self.row.dropLast())]) == nil)
        #expect(CarriedRows([]) == nil)
    }

    @Test(arguments: [
        "12345678901",  // a process id out of range
        "leased:", "leased:x", "leased:" + UUIDText.string(ids[0]) + ",",
        UUIDText.string(ids[0]) + ",", "," + UUIDText.string(ids[0]), "not-an-id",
        String(UUIDText.string(ids[0]).dropLast()),
        "rows:", "rows:a\u{1F}b", "rows:" + Array(repeating: "x", count: 9).joined(separator: "\u{1F}") + "\u{1E}x",
        "v", "v:x", "vx:", "v1:", "v0:", "v-2:",
    ])
    func malformedPayloadsDoNotRead(_ payload: String) {
        #expect(WakeUpMessage(decoding: payload) == nil)
    }

    @Test func aLaterVersionReadsAsLaterWhateverItsBody() {
        #expect(WakeUpMessage(decoding: "v2:rows:whatever") == .later(version: 2))
        #expect(WakeUpMessage(decoding: "v17:") == .later(version: 17))
    }
}
