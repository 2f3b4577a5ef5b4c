import APNs
import FCM
import Foundation
import HeraldCore
import ServiceSupport

/// Builds the upstream clients the configuration asks for. Configuration errors name the
/// environment variable, as every start-up error does.
public enum WorkerUpstreams {
    public static func make(_ configuration: WorkerConfiguration, clock: any HeraldClock = SystemClock())
        throws(ConfigurationError) -> [PushService: any DeliveryUpstream]
    {
        var upstreams: [PushService: any DeliveryUpstream] = [:]
        if let apns = configuration.apns {
            let settings = APNsConfiguration(
                keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID, topic: apns.topic,
                productionURL: apns.productionURL, sandboxURL: apns.sandboxURL, caFile: configuration.caFile,
                connectionsPerEnvironment: configuration.upstreamConnections)
            do {
                upstreams[.apns] = APNsUpstream(client: try APNsClient(configuration: settings, clock: clock))
            } catch {
                throw ConfigurationError(variable: apnsVariable(error.setting), problem: error.description)
            }
        }
        if let fcm = configuration.fcm {
            upstreams[.fcm] = try FCMUpstream.make(fcm, caFile: configuration.caFile,
                                                   connections: configuration.upstreamConnections, clock: clock)
        }
        return upstreams
    }

    static func apnsVariable(_ setting: APNsConfigurationError.Setting) -> String {
        switch setting {
        case .productionURL: return "HERALD_APNS_URL"
        case .sandboxURL: return "HERALD_APNS_SANDBOX_URL"
        case .keyFile: return "HERALD_APNS_KEY_FILE"
        case .keyID: return "HERALD_APNS_KEY_ID"
        case .teamID: return "HERALD_APNS_TEAM_ID"
        case .topic: return "HERALD_APNS_TOPIC"
        case .caFile: return "HERALD_CA_FILE"
        case .connectionsPerEnvironment: return "HERALD_UPSTREAM_CONNECTIONS"
        case .requestTimeout, .connectTimeout: return "HERALD_APNS_*"
        }
    }
}
