import Foundation
import HeraldCore

#if canImport(Glibc)
    import Glibc
#endif

/// Progress of a long command on standard error, so standard output stays the result: on a
/// terminal a bar with the rate and ETA, redrawn in place on one line (`\r`) at most every 100 ms;
/// otherwise (a pipe, a log file) one plain line every `plainEvery` lines or `plainSeconds`.
final class Progress {
    private let label: String
    private let totalBytes: Int?
    private let terminal: Bool
    private let write: (String) -> Void
    private let clock: any HeraldClock
    private let started: Date
    private var lastDraw: Date
    private var lastPlainLines = 0
    private var drewBar = false
    let plainEvery: Int
    let plainSeconds: Double

    init(
        label: String, totalBytes: Int?, terminal: Bool = isatty(2) == 1, plainEvery: Int = 50_000,
        plainSeconds: Double = 5, clock: any HeraldClock = SystemClock(),
        write: @escaping (String) -> Void = Progress.standardError
    ) {
        self.clock = clock
        started = clock.now
        lastDraw = started
        self.label = label
        self.totalBytes = totalBytes
        self.terminal = terminal
        self.plainEvery = plainEvery
        self.plainSeconds = plainSeconds
        self.write = write
    }

    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Called after each batch with the lines and bytes read so far.
    func update(lines: Int, bytes: Int) {
        let now = clock.now
        if terminal {
            guard now.timeIntervalSince(lastDraw) >= 0.1 else { return }
            lastDraw = now
            write("\r\u{1B}[K" + bar(lines: lines, bytes: bytes, now: now))
            drewBar = true
        } else if lines - lastPlainLines >= plainEvery || now.timeIntervalSince(lastDraw) >= plainSeconds {
            lastDraw = now
            lastPlainLines = lines
            write(plain(lines: lines, bytes: bytes, now: now) + "\n")
        }
    }

    /// The last state, then the line ends (the result follows on standard output).
    func finish(lines: Int, bytes: Int, interrupted: Bool) {
        let now = clock.now
        let suffix = interrupted ? " (interrupted)" : ""
        if terminal {
            write("\r\u{1B}[K" + bar(lines: lines, bytes: bytes, now: now) + suffix + "\n")
        } else {
            write(plain(lines: lines, bytes: bytes, now: now) + suffix + "\n")
        }
    }

    private func seconds(_ now: Date) -> Double {
        now.timeIntervalSince(started)
    }

    private func rate(lines: Int, now: Date) -> Double {
        let elapsed = seconds(now)
        return elapsed > 0 ? Double(lines) / elapsed : 0
    }

    /// The fraction done by bytes (lines differ in length, bytes are what is known in advance).
    private func fraction(bytes: Int) -> Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytes) / Double(totalBytes))
    }

    private func eta(bytes: Int, now: Date) -> String {
        guard let fraction = fraction(bytes: bytes), fraction > 0 else { return "-" }
        return RelativeTime.duration(seconds(now) * (1 - fraction) / fraction)
    }

    func bar(lines: Int, bytes: Int, now: Date) -> String {
        let width = 30
        let done = fraction(bytes: bytes) ?? 0
        let filled = Int(done * Double(width))
        let percent = Int((done * 100).rounded(.down))
        return "\(label) [\(String(repeating: "#", count: filled))\(String(repeating: "-", count: width - filled))] "
            + "\(percent)%  \(Self.grouped(lines)) lines  \(Self.grouped(Int(rate(lines: lines, now: now)))) lines/s  "
            + "ETA \(eta(bytes: bytes, now: now))"
    }

    func plain(lines: Int, bytes: Int, now: Date) -> String {
        let percent = fraction(bytes: bytes).map { "\(Int(($0 * 100).rounded(.down)))%" } ?? "-"
        return "\(label): \(lines) lines, \(percent), \(Int(rate(lines: lines, now: now))) lines/s, "
            + "ETA \(eta(bytes: bytes, now: now))"
    }

    /// 1234567 -> "1,234,567".
    static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }
}
