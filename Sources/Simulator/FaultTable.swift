/// The faults in force, by device token (APNs) or FCM target.
typealias FaultTable = TokenTable<SimulatorFault>

extension TokenTable where Value == SimulatorFault {
    /// The fault for `token`, counting this use: a fault with `times` left at 1 is removed.
    func take<S: StringProtocol>(token: S) -> SimulatorFault? {
        guard !isEmpty else { return nil }
        let key = String(token)
        return withLock { table -> SimulatorFault? in
            guard let fault = table[key] else { return nil }
            if let times = fault.times {
                if times <= 1 {
                    table.removeValue(forKey: key)
                } else {
                    table[key]?.times = times - 1
                }
            }
            return fault
        }
    }
}
