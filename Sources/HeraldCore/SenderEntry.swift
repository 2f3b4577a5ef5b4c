import Foundation

/// A mini-app in a user's list of senders: one that pushed to the user or that the user opted out of.
public struct SenderEntry: Sendable, Equatable {
    public let miniAppID: String
    public let displayName: String?
    /// Where the intake serves the active partner's icon (`PartnerIcon.path`), when it has one.
    public let iconPath: String?
    public let firstSentAt: Date?
    public let optedOut: Bool

    /// `hasIcon`: the mini-app's active partner has a stored icon, served at the payload size.
    public init(miniAppID: String, displayName: String?, hasIcon: Bool, firstSentAt: Date?, optedOut: Bool) {
        self.miniAppID = miniAppID
        self.displayName = displayName
        iconPath = hasIcon ? PartnerIcon.path(miniAppID: miniAppID, size: PartnerIcon.payloadSize) : nil
        self.firstSentAt = firstSentAt
        self.optedOut = optedOut
    }
}
