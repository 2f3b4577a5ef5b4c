import HeraldCore

/// How many requests each service answered, by status, since start (or `resetStatistics()`).
/// Unlike the record of received requests, statistics are never trimmed.
public struct SimulatorStatistics: Sendable, Equatable {
    public struct Counts: Sendable, Equatable {
        /// Answers by HTTP status.
        public var byStatus: [Int: Int] = [:]
        /// Requests whose connection a `drop` fault closed without an answer.
        public var dropped = 0
        /// Requests a `goaway` fault left unprocessed.
        public var goAways = 0

        public init() {}

        /// Answers with `status`.
        public subscript(status: Int) -> Int { byStatus[status] ?? 0 }

        /// Every request counted, answered or not.
        public var total: Int { byStatus.values.reduce(0, +) + dropped + goAways }
    }

    public var apns = Counts()
    public var fcm = Counts()
    /// The OAuth2 token endpoint.
    public var token = Counts()

    public init() {}

    public subscript(service: SimulatorService) -> Counts {
        switch service {
        case .apns: return apns
        case .fcm: return fcm
        case .token: return token
        }
    }

    /// Counts one answer. Mutates the stored property in place (a `switch`, not the subscript's
    /// get-then-set), so the dictionary is never copied on the hot path.
    mutating func add(_ service: SimulatorService, status: Int) {
        switch service {
        case .apns: apns.byStatus[status, default: 0] += 1
        case .fcm: fcm.byStatus[status, default: 0] += 1
        case .token: token.byStatus[status, default: 0] += 1
        }
    }

    mutating func addUnanswered(_ service: SimulatorService, goAway: Bool) {
        switch (service, goAway) {
        case (.apns, false): apns.dropped += 1
        case (.apns, true): apns.goAways += 1
        case (.fcm, false): fcm.dropped += 1
        case (.fcm, true): fcm.goAways += 1
        case (.token, false): token.dropped += 1
        case (.token, true): token.goAways += 1
        }
    }

    /// `{"apns":{"200":10,"410":1},"fcm":{...},"token":{...}}`; `"dropped"` and `"goaway"` appear
    /// beside the statuses when a fault produced them.
    var json: JSONValue {
        .object(
            SimulatorService.allCases.map { service in
                let counts = self[service]
                var members: [(key: String, value: JSONValue)] = counts.byStatus.sorted { $0.key < $1.key }
                    .map { (String($0.key), .number(Double($0.value))) }
                if counts.dropped > 0 { members.append(("dropped", .number(Double(counts.dropped)))) }
                if counts.goAways > 0 { members.append(("goaway", .number(Double(counts.goAways)))) }
                return (service.rawValue, .object(members))
            })
    }
}
