/// Which service of the simulator answered.
public enum SimulatorService: String, Sendable, CaseIterable {
    case apns
    case fcm
    /// The OAuth2 token endpoint (counted in statistics, never recorded).
    case token
}
