/// How long every APNs, FCM and token-endpoint answer waits after its request arrived (`--latency-ms N[,JITTER]`):
/// `milliseconds`, plus a uniformly random 0...`jitterMilliseconds` drawn for each request on its own. A fault's
/// `delayMs` adds to it; control-API answers never wait.
///
/// It stands for the network and the service between a client and Apple or Google, so a benchmark can see how a
/// client behaves when answers take as long as they do in production rather than a loopback's microseconds.
public struct SimulatorLatency: Sendable, Equatable, CustomStringConvertible {
    /// The fixed part, in milliseconds.
    public var milliseconds: Int
    /// The random part's upper bound, in milliseconds (0: none).
    public var jitterMilliseconds: Int = 0

    /// Answers at once.
    public static let zero = SimulatorLatency(milliseconds: 0)

    /// What each part may be: a minute is beyond any client's timeout worth testing, and a typo cannot park
    /// streams for hours.
    public static let range = 0...60_000
}

extension SimulatorLatency {
    /// Reads `N` or `N,JITTER` (whole numbers in `range`); nil for anything else.
    public init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        var values: [Int] = []
        for part in parts {
            // Digits only: Int("+5") would take a sign, and a number of many digits must not overflow first.
            guard !part.isEmpty, part.utf8.count <= 6, part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(part), Self.range.contains(value)
            else { return nil }
            values.append(value)
        }
        self.init(milliseconds: values[0], jitterMilliseconds: values.count == 2 ? values[1] : 0)
    }

    /// Why the latency cannot be used, or nil when it can.
    var problem: String? {
        guard Self.range.contains(milliseconds), Self.range.contains(jitterMilliseconds) else {
            return "the latency and its jitter must each be 0-\(Self.range.upperBound) ms (got \(self))"
        }
        return nil
    }

    /// One request's wait: `milliseconds` plus a uniform draw from 0...`jitterMilliseconds`.
    func sample() -> Int {
        jitterMilliseconds == 0 ? milliseconds : milliseconds + Int.random(in: 0...jitterMilliseconds)
    }

    /// As the flag takes it: `N` or `N,JITTER`.
    public var description: String {
        jitterMilliseconds == 0 ? String(milliseconds) : "\(milliseconds),\(jitterMilliseconds)"
    }
}
