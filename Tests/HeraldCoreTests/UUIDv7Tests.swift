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
    func timestampRoundTripsToTheMillisecond(_ date: Date) throws {
        let id = UUIDv7.make(at: date)
        let decoded = try #require(UUIDv7.timestamp(of: id))
        let expectedMillis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        #expect(Int64((decoded.timeIntervalSince1970 * 1000).rounded()) == expectedMillis)
        #expect(abs(decoded.timeIntervalSince(date)) < 0.001)
        // The first 48 bits are the milliseconds, big-endian.
        let raw = Self.bytes(id)
        let prefix = raw[0..<6].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        #expect(prefix == expectedMillis)
    }

    @Test func exactMillisecondsRoundTripExactly() throws {
        for millis in stride(from: Int64(1_780_272_000_000), to: 1_780_272_000_000 + 5_000, by: 7) {
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            let decoded = try #require(UUIDv7.timestamp(of: UUIDv7.make(at: date)))
            #expect(Int64((decoded.timeIntervalSince1970 * 1000).rounded()) == millis)
        }
    }

    @Test func knownLayout() throws {
        // 1970-01-01T00:00:01Z is 1,000 ms = 0x0000000003E8 in the first 48 bits, then version 7.
        let id = UUIDv7.make(at: Date(timeIntervalSince1970: 1.0))
        #expect(id.uuidString.lowercased().hasPrefix("00000000-03e8-7"))
    }

    @Test func timestampIsNilForOtherVersions() {
        #expect(UUIDv7.timestamp(of: UUID(uuidString: "0190a6b2-7c1e-4abc-8def-0123456789ab")!) == nil)
        #expect(UUIDv7.timestamp(of: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!) == nil)
        #expect(UUIDv7.timestamp(of: UUID()) == nil)  // Foundation's UUID() is version 4
    }

    @Test func idsAtIncreasingTimesSortInTimeOrder() {
        let start = Fixtures.now
        let ids = (0..<500).map { UUIDv7.make(at: start.addingTimeInterval(Double($0) * 0.002)) }
        let strings = ids.map { $0.uuidString.lowercased() }
        #expect(strings == strings.sorted())
        #expect(ids.map { Self.bytes($0) }.elementsEqual(ids.map { Self.bytes($0) }.sorted { $0.lexicographicallyPrecedes($1) }))
    }

    @Test func idsAtTheSameInstantAreDistinctButShareTheirTimestamp() {
        let ids = (0..<2000).map { _ in UUIDv7.make(at: Fixtures.now) }
        #expect(Set(ids).count == 2000)
        #expect(Set(ids.map { Self.bytes($0)[0..<6] }).count == 1)
        // The random tail varies in every byte.
        for index in 6..<16 {
            #expect(Set(ids.map { Self.bytes($0)[index] }).count > 8, "byte \(index)")
        }
    }
}
