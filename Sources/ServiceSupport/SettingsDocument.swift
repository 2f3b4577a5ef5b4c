import Foundation

/// docs/configuration.md, written from `Settings.all`: one table per topic. `heraldctl settings` prints it and
/// SettingsCatalogTests compares it with the committed file.
public enum SettingsDocument {
    /// The command that rewrites docs/configuration.md.
    public static let regenerateCommand = "swift run heraldctl settings > docs/configuration.md"

    public static func markdown(_ settings: [Setting] = Settings.all) -> String {
        var lines = [
            "# Configuration",
            "",
            "<!-- Generated from Sources/ServiceSupport/Settings*.swift: edit those, then run",
            "     `\(regenerateCommand)`. -->",
            "",
            "Every process reads its settings from environment variables, and an empty value counts as unset.",
            "herald-intake and herald-worker check every variable at start-up; on a bad value they print",
            "`<process>: configuration error: <VARIABLE>: <problem>` to stderr and exit with status 2. heraldctl",
            "checks the variables a command needs and stops with status 1, naming the variable. The message never",
            "includes the value. herald-sim takes command-line flags instead (`herald-sim --help`).",
            "",
            "`heraldctl settings` prints this page.",
        ]
        for topic in SettingTopic.allCases {
            let rows = settings.filter { $0.topic == topic }
            guard !rows.isEmpty else { continue }
            lines += [
                "", "## \(topic.rawValue)", "", "| variable | read by | default | values | meaning |",
                "|---|---|---|---|---|",
            ]
            lines += rows.map(row)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func row(_ setting: Setting) -> String {
        let cells = [
            "`\(setting.name)`",
            setting.readers.map(\.rawValue).joined(separator: ", "),
            defaultText(setting),
            valuesText(setting),
            setting.summary,
        ]
        return "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
    }

    static func defaultText(_ setting: Setting) -> String {
        switch setting.defaultValue {
        case .required: return "required"
        case .requiredWith(let other): return "required with `\(other)`"
        case .unset: return "unset"
        case .integer(let value): return "`\(value)`"
        case .flag(let value): return value ? "`1`" : "`0`"
        case .text(let value): return "`\(value)`"
        case .derived(let text): return text
        }
    }

    static func valuesText(_ setting: Setting) -> String {
        var parts: [String] = []
        if let range = setting.range {
            let unit = setting.unit == .none ? "" : " \(setting.unit.rawValue)"
            parts.append("\(grouped(range.lowerBound))-\(grouped(range.upperBound))\(unit)")
        }
        if let format = setting.format { parts.append(format) }
        return parts.joined(separator: "; ")
    }

    /// `1234567` as `1,234,567`, whatever the machine's locale.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return value < 0 ? "-" + out : out
    }
}
