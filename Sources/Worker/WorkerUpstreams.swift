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
            do {
                upstreams[.apns] = APNsUpstream(
                    client: try APNsClient(configuration: apns, clock: clock),
                    defaultTopic: apns.topic, clock: clock)
            } catch {
                throw ConfigurationError(variable: WorkerConfiguration.variable(error.setting), problem: error.message)
            }
        }
        if let fcm = configuration.fcm {
            do {
                upstreams[.fcm] = FCMUpstream(client: try FCMClient(configuration: fcm, clock: clock), clock: clock)
            } catch {
                throw ConfigurationError(variable: WorkerConfiguration.variable(error.setting), problem: error.message)
            }
        }
        return upstreams
    }
}
