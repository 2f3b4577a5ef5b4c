/// Who a push's identifiers resolved to, inside one tenant (read by Sources/Store/PushStore.swift).
public struct RecipientResolution: Sendable {
    public struct User: Sendable {
        public let id: String
        public let optedOut: Bool
        /// The user's `locale` (a canonical BCP 47 tag), when the host set one and the resolution was asked for it.
        public let locale: String?

        public init(id: String, optedOut: Bool, locale: String? = nil) {
            self.id = id
            self.optedOut = optedOut
            self.locale = locale
        }
    }

    public struct Device: Sendable {
        public let userID: String
        public let deviceID: String
        public let service: PushService
        public let environment: String

        public init(userID: String, deviceID: String, service: PushService, environment: String) {
            self.userID = userID
            self.deviceID = deviceID
            self.service = service
            self.environment = environment
        }
    }

    public var matchedEmails: Set<String> = []
    public var matchedWallets: Set<String> = []
    public var users: [User] = []
    /// Devices with a live token, of users who have not opted out.
    public var devices: [Device] = []

    /// The users' locales, by user (users without one are absent).
    public var locales: [String: String] {
        var locales: [String: String] = [:]
        for user in users { if let locale = user.locale { locales[user.id] = locale } }
        return locales
    }

    /// Nothing matched yet.
    public init() {}

    /// Users by id, devices by (user, device): the order the intake gives a push's deliveries their slots.
    public mutating func sort() {
        users.sort { $0.id < $1.id }
        devices.sort { ($0.userID, $0.deviceID) < ($1.userID, $1.deviceID) }
    }
}
