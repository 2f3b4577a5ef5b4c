import Foundation
import HeraldCore
import Testing

@Suite struct UUIDv7Tests {
    static func bytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    static let dates: [Date] = [
        Date(timeIntervalSince1970: 0),
        Date(timeIntervalSince1970: 0.001),
        Date(timeIntervalSince1970: 1_780_272_000.123),
        Date(timeIntervalSince1970: 1_700_000_000.999),
        Date(timeIntervalSince1970: 4_102_444_800.5),  // 2100
        Fixtures.now,
    ]

    @Test(arguments: dates)
    func versionAndVariantBits(_ date: Date) {
        for _ in 0..<50 {
            let id = UUIDv7.make(at: date)
            let raw = Self.bytes(id)
            #expect(raw[6] >> 4 == 7)
            #expect(raw[8] >> 6 == 0b10)
            let text = id.uuidString
            #expect(Array(text)[14] == "7")
            #expect("89AB".contains(Array(text)[19]))
        }
    }

    @Test(arguments: dates)
    func timestampRoundTripsToTheMicrosecond(_ date: Date) throws {
        let id = UUIDv7.make(at: date)
        let decoded = try #require(UUIDv7.timestamp(of: id))
        let expectedMicros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        #expect(Int64((decoded.timeIntervalSince1970 * 1_000_000).rounded()) == expectedMicros)
        #expect(abs(decoded.timeIntervalSince(date)) < 0.000_001)
        // The first 48 bits are the milliseconds, big-endian.
        let raw = Self.bytes(id)
        let prefix = raw[0..<6].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        #expect(prefix == expectedMicros / 1000)
        #expect(UUIDv7.millisecond(of: id) == UInt64(expectedMicros / 1000))
    }

    @Test func everyMicrosecondOfAMillisecondRoundTripsExactly() throws {
        let millis: Int64 = 1_780_272_000_123
        for micro in 0..<1000 {
            let micros = millis * 1000 + Int64(micro)
            let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            let id = UUIDv7.make(at: date)
            let decoded = try #require(UUIDv7.timestamp(of: id))
            #expect(Int64((decoded.timeIntervalSince1970 * 1_000_000).rounded()) == micros, "µs \(micro)")
            #expect(UUIDv7.millisecond(of: id) == UInt64(millis))
        }
    }

    @Test func knownLayout() throws {
        // 1970-01-01T00:00:01Z is 1,000 ms = 0x0000000003E8 in the first 48 bits, then version 7 and a zero fraction.
        #expect(
            UUIDv7.make(at: Date(timeIntervalSince1970: 1.0)).uuidString.lowercased().hasPrefix("00000000-03e8-7000-"))
        // Half a millisecond later the fraction is 2048/4096 (RFC 9562 section 6.2, method 3).
        #expect(
            UUIDv7.make(at: Date(timeIntervalSince1970: 1.0005)).uuidString.lowercased().hasPrefix(
                "00000000-03e8-7800-"))
    }

    @Test func idsWithRandomFractionBitsKeepTheirMillisecond() throws {
        // An id of sql/functions/uuid_v7.sql's herald_uuid_v7 (or made before the fraction was kept): random bits
        // after the version.
        let id = try #require(UUID(uuidString: "019ae3c4-5f10-7fff-9abc-0123456789ab"))
        let millis = try #require(UUIDv7.millisecond(of: id))
        let decoded = try #require(UUIDv7.timestamp(of: id))
        #expect(millis == 0x019A_E3C4_5F10)
        #expect(decoded.timeIntervalSince1970 * 1000 >= Double(millis))
        #expect(decoded.timeIntervalSince1970 * 1000 < Double(millis + 1))
    }

    @Test func timestampIsNilForOtherVersions() {
        #expect(UUIDv7.timestamp(of: UUID(uuidString: "0190a6b2-7c1e-4abc-8def-0123456789ab")!) == nil)
        #expect(UUIDv7.timestamp(of: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!) == nil)
        #expect(UUIDv7.timestamp(of: UUID()) == nil)  // Foundation's UUID() is version 4
        #expect(UUIDv7.millisecond(of: UUID()) == nil)
    }

    @Test func idsAtIncreasingTimesSortInTimeOrder() {
        let start = Fixtures.now
        let ids = (0..<500).map { UUIDv7.make(at: start.addingTimeInterval(Double($0) * 0.002)) }
        let strings = ids.map { $0.uuidString.lowercased() }
        #expect(strings == strings.sorted())
        #expect(
            ids.map { Self.bytes($0) }.elementsEqual(
                ids.map { Self.bytes($0) }.sorted { $0.lexicographicallyPrecedes($1) }))
    }

    @Test func idsWithinOneMillisecondSortByTheirMicrosecond() {
        let ids = (0..<1000).map {
            UUIDv7.make(at: Date(timeIntervalSince1970: Double(1_780_272_000_123_000 + $0) / 1_000_000))
        }
        let strings = ids.map { $0.uuidString.lowercased() }
        #expect(strings == strings.sorted())
        #expect(Set(ids.map { Self.bytes($0)[0..<6] }).count == 1)
    }

    @Test func idsAtTheSameInstantAreDistinctButShareTheirTimestamp() {
        let ids = (0..<2000).map { _ in UUIDv7.make(at: Fixtures.now) }
        #expect(Set(ids).count == 2000)
        #expect(Set(ids.map { Self.bytes($0)[0..<8] }).count == 1)
        // The random tail varies in every byte.
        for index in 8..<16 {
            #expect(Set(ids.map { Self.bytes($0)[index] }).count > 8, "byte \(index)")
        }
    }

    @Test func theLowestIdOfAMillisecondSortsBeforeEveryIdMadeThenOrLater() {
        let at = Date(timeIntervalSince1970: 1_780_272_000.1234)
        let lowest = UUIDv7.lowest(at: at)
        #expect(UUIDv7.millisecond(of: lowest) == 1_780_272_000_123)
        let text = lowest.uuidString.lowercased()
        for offset in [0.0, 0.0005, 0.001, 3600] {
            #expect(UUIDv7.make(at: at.addingTimeInterval(offset)).uuidString.lowercased() >= text, "\(offset)")
        }
        #expect(UUIDv7.make(at: at.addingTimeInterval(-0.001)).uuidString.lowercased() < text)
    }
}
