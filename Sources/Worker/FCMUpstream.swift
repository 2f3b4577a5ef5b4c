import FCM
import Foundation
import HeraldCore
import ServiceSupport
import Store

/// Sends claimed FCM deliveries: the stored message with the device's token and `android.ttl`
/// set to what is left of the delivery's TTL.
public struct FCMUpstream: DeliveryUpstream {
    public let client: FCMClient
    private let clock: any HeraldClock

    public init(client: FCMClient, clock: any HeraldClock = SystemClock()) {
        self.client = client
        self.clock = clock
    }

    static func make(_ settings: WorkerConfiguration.FCMSettings, caFile: String?, connections: Int,
                     clock: any HeraldClock) throws(ConfigurationError) -> FCMUpstream {
        let configuration = FCMConfiguration(credentialsFile: settings.credentialsFile, url: settings.url,
                                             caFile: caFile, connections: connections)
        do {
            return FCMUpstream(client: try FCMClient(configuration: configuration, clock: clock), clock: clock)
        } catch {
            throw ConfigurationError(variable: variable(error.setting), problem: error.description)
        }
    }

    public func send(_ delivery: ClaimedDelivery, completion: @escaping @Sendable (DeliveryResult) -> Void) {
        guard let token = delivery.token else {
            completion(.tokenInvalid(reason: "no_token"))
            return
        }
        // Whole seconds left, at least 1 (the claim already expired rows past their TTL).
        let ttl = delivery.expiresAt.map { max(1, Int($0.timeIntervalSince(clock.now).rounded(.up))) }
        client.send(FCMMessage(token: token, message: Array(delivery.payload.utf8), ttlSeconds: ttl),
                    completion: completion)
    }

    public func shutdown() { client.shutdown() }

    static func variable(_ setting: FCMConfigurationError.Setting) -> String {
        switch setting {
        case .url: return "HERALD_FCM_URL"
        case .credentialsFile: return "HERALD_FCM_CREDENTIALS_FILE"
        case .caFile: return "HERALD_CA_FILE"
        case .connections: return "HERALD_UPSTREAM_CONNECTIONS"
        default: return "HERALD_FCM_*"
        }
    }
}
