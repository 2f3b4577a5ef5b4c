import HeraldCore
import Store

/// The handlers the routes answer with, built once by `IntakeServer`; a route's closure picks its handler here.
struct IntakeHandlers: Sendable {
    let push: PushHandler
    let activity: ActivityHandler
    let admin: AdminHandler
    let host: HostHandler
    let deliveryEvents: DeliveryEventHandler
    let reminder: ReminderHandler
    let icon: IconHandler
    let media: MediaHandler
    let console: ConsoleHandler
    let probe: ProbeHandler

    /// An admin change's author for the audit trail (sql/047_admin_audit.sql).
    func actor(_ caller: AdminCaller, _ request: RoutedRequest) -> AdminActor {
        caller.actor(client: console.proxies.client(of: request.http))
    }
}
