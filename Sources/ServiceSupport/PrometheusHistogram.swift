/// A Prometheus histogram's state (cumulative buckets, count, sum) and its exposition lines.
/// A value type: the owner keeps it under its own lock.
public struct PrometheusHistogram: Sendable {
    public let bounds: [Double]
    private var counts: [Int]
    public private(set) var count = 0
    public private(set) var sum = 0.0

    public init(bounds: [Double]) {
        self.bounds = bounds
        counts = [Int](repeating: 0, count: bounds.count)
    }

    public mutating func observe(_ value: Double) {
        count += 1
        sum += value
        for (index, bound) in bounds.enumerated() where value <= bound {
            counts[index] += 1
        }
    }

    /// The `_bucket`, `_sum` and `_count` lines of metric `name`; `labels` like `route="/x"` (or empty).
    public func render(_ name: String, labels: String = "") -> String {
        let prefix = labels.isEmpty ? "" : labels + ","
        var out = ""
        for (index, bound) in bounds.enumerated() {
            out += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(counts[index])\n"
        }
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)\n"
        let braces = labels.isEmpty ? "" : "{\(labels)}"
        out += "\(name)_sum\(braces) \(sum)\n"
        out += "\(name)_count\(braces) \(count)\n"
        return out
    }
}
