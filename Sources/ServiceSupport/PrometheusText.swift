/// Prometheus text exposition, written one metric family at a time: its `# HELP` and `# TYPE` lines, then its
/// samples. The one writer of the intake's and the worker's `GET /metrics` text.
public struct PrometheusText: Sendable {
    public enum MetricType: String, Sendable {
        case counter, gauge, histogram
    }

    public private(set) var text = ""

    public init() {}

    /// Opens family `name`: its `# HELP` and `# TYPE` lines.
    public mutating func family(_ name: String, _ type: MetricType, help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type.rawValue)\n"
    }

    /// One sample: `name{labels} value`, or `name value` when `labels` is empty.
    public mutating func sample(_ name: String, labels: String = "", _ value: some CustomStringConvertible) {
        text += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(labels)} \(value)\n"
    }

    /// A family with one unlabelled sample.
    public mutating func single(
        _ name: String, _ type: MetricType, help: String,
        _ value: some CustomStringConvertible
    ) {
        family(name, type, help: help)
        sample(name, value)
    }

    /// The `_bucket`, `_sum` and `_count` samples of a histogram family.
    public mutating func histogram(_ name: String, labels: String = "", _ histogram: PrometheusHistogram) {
        text += histogram.render(name, labels: labels)
    }

    /// A label value as the exposition format wants it: backslash, double quote and line feed escaped, so no
    /// value (an upstream's reason, a partner id) can break the text.
    public static func escaped(_ value: some StringProtocol) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
