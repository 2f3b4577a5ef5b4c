/// A configuration property one setting fills, for the tables the configuration readers walk
/// (IntakeConfiguration+Settings.swift, WorkerConfiguration+Overrides.swift).
public enum SettingField<Root>: Sendable {
    case wholeNumber(WritableKeyPath<Root, Int> & Sendable)
    /// A whole number of the setting's unit.
    case time(WritableKeyPath<Root, Duration> & Sendable)
    /// A `0`/`1` switch.
    case flag(WritableKeyPath<Root, Bool> & Sendable)
}

extension EnvironmentReader {
    /// Fills `field` of `root` as the catalog says: `setting`'s default, range and unit.
    public func read<Root>(_ setting: Setting, into field: SettingField<Root>, of root: inout Root)
        throws(ConfigurationError)
    {
        switch field {
        case .wholeNumber(let path): root[keyPath: path] = try integer(setting)
        case .time(let path): root[keyPath: path] = try duration(setting)
        case .flag(let path): root[keyPath: path] = try flag(setting)
        }
    }

    /// Fills `field` of `root` over the value it has in code, without `setting`'s range: the part's own
    /// `validate()` checks it, for values set in code too. A switch is read as a whole number that must be 0 or 1.
    public func override<Root>(_ setting: Setting, into field: SettingField<Root>, of root: inout Root)
        throws(ConfigurationError)
    {
        switch field {
        case .wholeNumber(let path):
            root[keyPath: path] = try integer(setting.name, default: root[keyPath: path])
        case .time(let path):
            let count = Int(root[keyPath: path] / setting.duration(1))
            root[keyPath: path] = setting.duration(try integer(setting.name, default: count))
        case .flag(let path):
            let value = try integer(setting.name, default: root[keyPath: path] ? 1 : 0)
            guard value == 0 || value == 1 else {
                throw ConfigurationError(variable: setting.name, problem: "must be 0 or 1")
            }
            root[keyPath: path] = value == 1
        }
    }
}
