/// Which APNs host a device's tokens belong to (devices register with one).
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox
}

/// One notification to send: the rendered body and the headers that go with it.
public struct APNsNotification: Sendable {
    /// 64 hex characters. Never logged.
    public var deviceToken: String
    public var environment: APNsEnvironment
    /// Lowercase canonical UUID: sent as `apns-id`.
    public var id: String
    /// `alert` for pushes, `liveactivity` for Live Activity updates.
    public var pushType: String
    /// `apns-topic`; nil means the configured topic (with `.push-type.liveactivity` appended for
    /// Live Activities).
    public var topic: String?
    /// `apns-priority`: 10 immediate, 5 power-aware.
    public var priority: Int
    /// `apns-expiration` in UNIX seconds; nil omits the header (APNs' own storage policy). The worker
    /// always sets it from the delivery's expiry.
    public var expiration: Int?
    /// `apns-collapse-id` (at most 64 bytes).
    public var collapseID: String?
    /// The JSON body (at most 4,096 bytes).
    public var payload: [UInt8]

    public init(
        deviceToken: String, environment: APNsEnvironment, id: String, pushType: String = "alert",
        topic: String? = nil, priority: Int = 10, expiration: Int? = nil, collapseID: String? = nil,
        payload: [UInt8]
    ) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.id = id
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
    }
}
