import Foundation

/// One environment variable a Herald process reads: its name, the processes that read it, its default, the values
/// it takes and what it means. `Settings.all` lists every one (Settings+*.swift); the configuration readers take
/// each name, default and range from there, and docs/configuration.md is generated from it (`heraldctl settings`).
public struct Setting: Sendable, Equatable {
    /// A process that reads settings from its environment (herald-sim takes command-line flags instead).
    public enum Process: String, Sendable, Equatable, CaseIterable {
        case intake = "herald-intake"
        case worker = "herald-worker"
        case heraldctl
    }

    /// What a process uses when the variable is unset or empty.
    public enum Default: Sendable, Equatable {
        /// The process refuses to start without it.
        case required
        /// The process refuses to start without it when the named setting is set.
        case requiredWith(String)
        /// Nothing: the feature it configures is off, or another setting decides.
        case unset
        case integer(Int)
        /// A switch written `0` or `1`.
        case flag(Bool)
        case text(String)
        /// Worked out at start-up, as the text says.
        case derived(String)
    }

    /// The unit of a whole-number setting, which its name ends with.
    public enum Unit: String, Sendable, Equatable {
        case none = ""
        case microseconds = "µs"
        case milliseconds = "ms"
        case seconds = "s"
        case minutes = "min"
        case hours = "h"
        case days = "days"
    }

    public let name: String
    public let topic: SettingTopic
    public let readers: [Process]
    public let defaultValue: Default
    /// The whole numbers allowed, for a numeric setting.
    public let range: ClosedRange<Int>?
    public let unit: Unit
    /// The form of a value that is not a number in `range` (a URL, a list, one of some words).
    public let format: String?
    /// What it does, in a sentence or a few.
    public let summary: String

    public init(
        _ name: String, _ topic: SettingTopic, readers: [Process], default defaultValue: Default,
        range: ClosedRange<Int>? = nil, unit: Unit = .none, format: String? = nil, summary: String
    ) {
        self.name = name
        self.topic = topic
        self.readers = readers
        self.defaultValue = defaultValue
        self.range = range
        self.unit = unit
        self.format = format
        self.summary = summary
    }
}

extension Setting {
    /// The whole-number default; a setting without one is a mistake in the catalog.
    public var integer: Int {
        guard case .integer(let value) = defaultValue else {
            preconditionFailure("\(name) has no whole-number default")
        }
        return value
    }

    /// The default of a `0`/`1` switch.
    public var flag: Bool {
        guard case .flag(let value) = defaultValue else { preconditionFailure("\(name) has no 0/1 default") }
        return value
    }

    /// The text default.
    public var text: String {
        guard case .text(let value) = defaultValue else { preconditionFailure("\(name) has no text default") }
        return value
    }

    /// The whole numbers allowed.
    public var bounds: ClosedRange<Int> {
        guard let range else { preconditionFailure("\(name) has no range") }
        return range
    }

    /// The default of a time setting, in its unit.
    public var duration: Duration { duration(integer) }

    /// The allowed times of a time setting.
    public var durationBounds: ClosedRange<Duration> { duration(bounds.lowerBound)...duration(bounds.upperBound) }

    /// `count` of this setting's unit.
    public func duration(_ count: Int) -> Duration {
        switch unit {
        case .microseconds: return .microseconds(count)
        case .milliseconds: return .milliseconds(count)
        case .seconds: return .seconds(count)
        case .minutes: return .seconds(count * 60)
        case .hours: return .seconds(count * 3_600)
        case .days: return .seconds(count * 86_400)
        case .none: preconditionFailure("\(name) is not a time")
        }
    }
}

/// The sections of docs/configuration.md, in order.
public enum SettingTopic: String, Sendable, Equatable, CaseIterable {
    case database = "Database and logs"
    case intakeServer = "Intake: listening and connections"
    case credentials = "Intake: credentials"
    case pushes = "Pushes: payloads and signing"
    case partners = "Partners: defaults"
    case liveActivities = "Intake: Live Activities and reminders"
    case console = "Intake: operator console"
    case outbound = "Outbound HTTPS: icons and webhooks"
    case upstreams = "Worker: APNs and FCM"
    case claims = "Worker: claiming and recording"
    case retries = "Worker: retries, pauses and token health"
    case services = "Worker: background services"
    case webhooks = "Worker: delivery webhooks"
    case channels = "Worker: broadcast channels"
    case heraldctl = "heraldctl"
}

extension EnvironmentReader {
    /// `setting` as a whole number in its range, or its default.
    public func integer(_ setting: Setting) throws(ConfigurationError) -> Int {
        try integer(setting.name, default: setting.integer, range: setting.bounds)
    }

    /// `setting` as a time: a whole number of its unit in its range, or its default.
    public func duration(_ setting: Setting) throws(ConfigurationError) -> Duration {
        setting.duration(try integer(setting))
    }

    /// `setting` as a `0`/`1` switch, or its default.
    public func flag(_ setting: Setting) throws(ConfigurationError) -> Bool {
        try flag(setting.name, default: setting.flag)
    }

    /// `setting`'s value, nil when unset or empty.
    public func optional(_ setting: Setting) -> String? { optional(setting.name) }

    /// `setting` read by `parse`, nil when unset or empty; a value `parse` refuses (nil) is `problem`.
    public func parsed<Value>(_ setting: Setting, problem: String, _ parse: (String) -> Value?)
        throws(ConfigurationError) -> Value?
    {
        guard let text = optional(setting) else { return nil }
        guard let value = parse(text) else { throw ConfigurationError(variable: setting.name, problem: problem) }
        return value
    }

    /// `setting` as one of `Choice`'s words, nil when unset or empty; `problem` lists the words.
    public func choice<Choice: RawRepresentable<String>>(_ setting: Setting, problem: String)
        throws(ConfigurationError) -> Choice?
    {
        try parsed(setting, problem: problem) { Choice(rawValue: $0) }
    }

    /// HERALD_LOG_LEVEL, or `fallback` when unset.
    public func logLevel(default fallback: LogLevel) throws(ConfigurationError) -> LogLevel {
        try choice(Settings.logLevel, problem: "must be debug, info, warning or error") ?? fallback
    }

    public func required(_ setting: Setting) throws(ConfigurationError) -> String { try required(setting.name) }

    public func secret(_ setting: Setting) throws(ConfigurationError) -> String { try secret(setting.name) }

    public func optionalSecret(_ setting: Setting) throws(ConfigurationError) -> String? {
        try optionalSecret(setting.name)
    }
}
