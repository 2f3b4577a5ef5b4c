/// One FCM v1 data message to send.
public struct FCMMessage: Sendable {
    /// The registration token. Never logged.
    public var token: String
    /// The stored message: a JSON object without `token` and without `android.ttl`
    /// (`{"android":{"priority":"HIGH"},"data":{...}}`, see HeraldCore.PushPayload).
    public var message: [UInt8]
    /// `android.ttl` in whole seconds; nil leaves FCM's default (4 weeks).
    public var ttlSeconds: Int?
    /// `android.collapse_key`: a newer message with the same key replaces one FCM still holds for an offline device.
    public var collapseKey: String?

    public init(token: String, message: [UInt8], ttlSeconds: Int? = nil, collapseKey: String? = nil) {
        self.token = token
        self.message = message
        self.ttlSeconds = ttlSeconds
        self.collapseKey = collapseKey
    }
}
