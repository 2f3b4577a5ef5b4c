import Foundation

/// The Live Activity budgets every mini-app of the host app shares. Apple budgets
/// push-to-start and priority-10 pushes per app and device, and the host app is one app for all its
/// mini-apps: without a gateway budget one partner could spend what every other partner needs, and
/// APNs answers 200 to a throttled push, so nothing else would tell. Each default is written once,
/// here; `IntakeConfiguration` reads the overrides (`HERALD_LA_*`), `herald_activity_start` and
/// `herald_activity_update` enforce them under their locks.
public struct LiveActivityBudgets: Sendable, Equatable {
    /// Active activities a user may have across every mini-app (`HERALD_LA_MAX_ACTIVE_PER_USER`);
    /// a start beyond is 409 `too_many_activities`. iOS shows only a few per app at once.
    public var maxActivePerUser = 3
    /// Starts, replacements included, per user per hour (`HERALD_LA_STARTS_PER_USER_HOUR`), and per
    /// user and mini-app (`HERALD_LA_STARTS_PER_USER_APP_HOUR`); beyond, 429 `live_activity_budget`.
    public var startsPerUserHour = 6
    public var startsPerUserAppHour = 3
    /// Priority-10 pushes per activity per hour (`HERALD_LA_ALERTED_UPDATES_PER_HOUR`): an alerted update
    /// beyond goes out silent, at priority 5, answered `"alert":"dropped_budget"`. 0: every update is silent.
    public var alertedUpdatesPerHour = 10
    /// Broadcast channels one mini-app may have opening or open (`HERALD_LA_OPEN_CHANNELS_PER_MINI_APP`); one more
    /// is 409 `too_many_channels`. APNs holds 10,000 channels per app and environment, shared by every mini-app.
    public var openChannelsPerMiniApp = 100
    // The hourly windows slide over the last hour, in SQL (herald_activity_start, herald_activity_alert_spend).

    /// What each setting may be (the configuration refuses anything else, naming the variable).
    public static let maxActiveRange = 1...100
    public static let startsRange = 1...10_000
    public static let alertedUpdatesRange = 0...10_000
    public static let openChannelsRange = 1...10_000

    public init() {}

    public init(maxActivePerUser: Int, startsPerUserHour: Int, startsPerUserAppHour: Int, alertedUpdatesPerHour: Int) {
        self.maxActivePerUser = maxActivePerUser
        self.startsPerUserHour = startsPerUserHour
        self.startsPerUserAppHour = startsPerUserAppHour
        self.alertedUpdatesPerHour = alertedUpdatesPerHour
    }
}

/// Why the gateway refused a Live Activity start or downgraded a push (the `reason` label of
/// `herald_intake_live_activity_budget_total`).
public enum LiveActivityBudgetReason: String, CaseIterable, Sendable, Decodable {
    /// 409 `too_many_activities`.
    case activePerUser = "active_per_user"
    /// 429 `live_activity_budget`: the user's starts of the hour.
    case startsPerUser = "starts_per_user"
    /// 429 `live_activity_budget`: the user's starts of the hour with this mini-app.
    case startsPerUserApp = "starts_per_user_app"
    /// An alerted update sent silent, or a replaced activity's end sent at priority 5.
    case alertedUpdates = "alerted_updates"
    /// 409 `too_many_channels`: the mini-app's broadcast channels.
    case openChannels = "open_channels"

    /// The partner's error, for the refusals (nil for a downgrade, which is no error).
    public func error(retryAfter: Int?, budgets: LiveActivityBudgets) -> HeraldError? {
        switch self {
        case .activePerUser:
            return HeraldError(
                status: 409, code: "too_many_activities",
                message:
                    "The user already has \(budgets.maxActivePerUser) active Live Activities, the most the host app shows; end one first.",
                field: "recipient")
        case .startsPerUser, .startsPerUserApp:
            let message =
                self == .startsPerUser
                ? "The user was shown \(budgets.startsPerUserHour) Live Activity starts in the last hour, the most the host app allows."
                : "This mini-app started \(budgets.startsPerUserAppHour) Live Activities for the user in the last hour, the most allowed."
            return HeraldError(
                status: 429, code: "live_activity_budget", message: message, field: "recipient",
                retryAfter: max(1, retryAfter ?? 1))
        case .openChannels:
            return HeraldError(
                status: 409, code: "too_many_channels",
                message:
                    "This mini-app has \(budgets.openChannelsPerMiniApp) broadcast channels open, the most allowed; end one first."
            )
        case .alertedUpdates:
            return nil
        }
    }
}
