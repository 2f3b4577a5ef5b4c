import Foundation
import HeraldCore

/// How a command's result is printed: one JSON document (`--json`), or text for a person at a
/// terminal (aligned tables, relative times), or plain lines for a pipe (tab-separated fields,
/// ISO 8601 times, no header), so `heraldctl stats | grep bulk` and `cut -f2` work.
public enum OutputStyle: Sendable {
    case json, terminal, plain

    /// `--json` wins; otherwise a terminal on standard output gets the human form.
    static func choose(json: Bool, standardOutputIsTerminal: Bool) -> OutputStyle {
        json ? .json : (standardOutputIsTerminal ? .terminal : .plain)
    }
}

/// Prints a result as JSON or text.
struct Printer {
    let style: OutputStyle
    let output: (String) -> Void
    let now: Date

    var text: TextFormat { TextFormat(style: style, now: now) }

    func emit(_ value: JSONValue, text render: (TextFormat) -> String) {
        output(style == .json ? JSONWriter.string(value) : render(text))
    }

    func emit(_ value: JSONValue, text render: () -> String) {
        emit(value) { _ in render() }
    }
}

/// The text forms of values, for a terminal or a pipe.
struct TextFormat {
    let style: OutputStyle
    let now: Date

    var isTerminal: Bool { style == .terminal }

    /// "3 min ago" on a terminal, the exact time when piped.
    func time(_ date: Date?) -> String {
        guard let date else { return "-" }
        return isTerminal ? RelativeTime.describe(date, now: now) : ISO8601.format(date)
    }

    /// A table: padded columns under a header on a terminal; one tab-separated line per row when
    /// piped. Numeric columns (every cell a number) are right-aligned.
    func table(_ headers: [String], _ rows: [[String]]) -> String {
        guard isTerminal else { return rows.map { $0.joined(separator: "\t") }.joined(separator: "\n") }
        let all = [headers] + rows
        let widths = headers.indices.map { column in
            all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        let numeric = headers.indices.map { column in
            !rows.isEmpty && rows.allSatisfy { $0.indices.contains(column) && Double($0[column]) != nil }
        }
        return all.map { row in
            row.indices.map { column in
                let cell = row[column]
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return numeric[column] ? pad + cell : cell + pad
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }

    /// `name value` lines: aligned on a terminal, tab-separated when piped.
    func fields(_ pairs: [(String, String)]) -> String {
        table(["", ""], pairs.map { [$0.0, $0.1] }).split(separator: "\n", omittingEmptySubsequences: false)
            .dropFirst(isTerminal ? 1 : 0).joined(separator: "\n")
    }
}

/// "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago", "in 5 min".
enum RelativeTime {
    static func describe(_ date: Date, now: Date) -> String {
        let seconds = now.timeIntervalSince(date)
        let magnitude = abs(seconds)
        if magnitude < 1 { return "just now" }
        let amount: String
        switch magnitude {
        case ..<60: amount = "\(Int(magnitude)) s"
        case ..<3_600: amount = "\(Int(magnitude / 60)) min"
        case ..<86_400: amount = "\(Int(magnitude / 3_600)) h"
        default: amount = "\(Int(magnitude / 86_400)) d"
        }
        return seconds >= 0 ? "\(amount) ago" : "in \(amount)"
    }

    /// A duration for a person: "45 s", "12 min", "3 h 5 min".
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        switch whole {
        case ..<60: return "\(whole) s"
        case ..<3_600: return "\(whole / 60) min \(whole % 60) s"
        default: return "\(whole / 3_600) h \(whole % 3_600 / 60) min"
        }
    }
}
