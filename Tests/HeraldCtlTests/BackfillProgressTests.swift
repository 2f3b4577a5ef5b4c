import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldCtl

/// The progress display of `heraldctl backfill` as plain values (no database).
@Suite("backfill progress")
struct BackfillProgressTests {
    final class Captured: Sendable {
        let text = Mutex("")
        func append(_ piece: String) { text.withLock { $0 += piece } }
    }

    @Test("on a terminal: one line redrawn with \\r, a bar with percentage, rate and ETA, then a newline at the end")
    func terminal() {
        let captured = Captured()
        let clock = TestClock()
        let progress = Progress(label: "backfill sends", totalBytes: 1_000, terminal: true, clock: clock) {
            captured.append($0)
        }
        clock.advance(.milliseconds(50))
        progress.update(lines: 1, bytes: 10)  // within 100 ms of the start: not drawn
        #expect(captured.text.withLock { $0 }.isEmpty)
        clock.advance(.milliseconds(100))
        progress.update(lines: 500, bytes: 500)
        progress.finish(lines: 1_000, bytes: 1_000, interrupted: false)
        let text = captured.text.withLock { $0 }
        let draws = text.components(separatedBy: "\r\u{1B}[K").filter { !$0.isEmpty }
        #expect(draws.count == 2)
        #expect(draws[0].hasPrefix("backfill sends [###############---------------] 50%  500 lines  "), "\(draws)")
        #expect(draws[0].contains("lines/s  ETA "))
        #expect(!draws[0].contains("\n"))
        #expect(draws[1].hasPrefix("backfill sends [##############################] 100%  1,000 lines"))
        #expect(draws[1].hasSuffix("\n"))
    }

    @Test("piped: whole lines every N lines, the last one marked when interrupted")
    func plain() {
        let captured = Captured()
        let progress = Progress(
            label: "backfill users", totalBytes: nil, terminal: false, plainEvery: 100,
            plainSeconds: 3_600
        ) { captured.append($0) }
        progress.update(lines: 50, bytes: 0)
        progress.update(lines: 120, bytes: 0)
        progress.update(lines: 150, bytes: 0)
        progress.update(lines: 230, bytes: 0)
        progress.finish(lines: 240, bytes: 0, interrupted: true)
        let lines = captured.text.withLock { $0 }.split(separator: "\n")
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].hasPrefix("backfill users: 120 lines, -, "))
        #expect(lines[1].hasPrefix("backfill users: 230 lines, "))
        #expect(lines[2].hasPrefix("backfill users: 240 lines, ") && lines[2].hasSuffix("(interrupted)"))
        #expect(Progress.grouped(1_234_567) == "1,234,567" && Progress.grouped(999) == "999")
    }
}
