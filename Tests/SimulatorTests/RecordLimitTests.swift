import Foundation
import HeraldCore
import Testing

@testable import Simulator

/// At most `recordLimit` requests are kept, the oldest dropped first; statistics count them all.
@Suite("Record limit")
struct RecordLimitTests {
    static func token(_ index: Int) -> String {
        String(repeating: "0", count: 62) + String(format: "%02x", index)
    }

    @Test func oldestRecordsAreDroppedFirst() async throws {
        let harness = try SimulatorHarness(recordLimit: 3)
        for index in 0..<5 {
            #expect(try await harness.apns(token: Self.token(index)).status == 200)
        }
        #expect(harness.simulator.received().map(\.token) == (2..<5).map(Self.token))
        #expect(harness.simulator.statistics.apns[200] == 5)
        let (_, json) = try await harness.control("GET", "/sim/received")
        #expect(json.arrayValue?.map { $0["token"]?.stringValue } == (2..<5).map(Self.token))
        // Clearing empties the ring; it fills again in order.
        harness.simulator.clearReceived()
        #expect(try await harness.apns(token: Self.token(9)).status == 200)
        #expect(harness.simulator.received().map(\.token) == [Self.token(9)])
    }

    @Test func limitZeroRecordsNothing() async throws {
        let harness = try SimulatorHarness(recordLimit: 0)
        #expect(try await harness.apns().status == 200)
        #expect(harness.simulator.received().isEmpty)
        #expect(harness.simulator.statistics.apns[200] == 1)
    }

    @Test func ringBufferOrderAfterWrapping() {
        let log = RequestLog(limit: 4)
        for index in 0..<11 {
            log.append(
                RecordEntry(
                    service: .apns, token: Substring(String(index)), headers: [], body: [], status: 200,
                    reason: nil, receivedAt: 0, id: nil))
        }
        #expect(log.entries().map { String($0.token) } == ["7", "8", "9", "10"])
        #expect(log.statistics.apns[200] == 11)
    }
}
