/// How urgently iOS presents a push (APNs `aps.interruption-level`, the push body's `interruptionLevel`).
///
/// Apple defines `passive`, `active`, `time-sensitive` and `critical`. A partner may ask for the first
/// three; `time-sensitive` only when an admin allowed it on the partner row (`allowTimeSensitive`), since
/// it breaks through Focus and a scheduled summary. `critical` needs an entitlement Apple grants to the
/// host app for health and safety alerts, which no partner push is, so it is not a value here.
public enum InterruptionLevel: String, Sendable, CaseIterable {
    case passive
    case active
    case timeSensitive = "time-sensitive"

    /// What a push gets without `interruptionLevel`; APNs' own default, so the key is left out for it.
    public static let `default` = InterruptionLevel.active

    /// Refuses `time-sensitive` for a partner the admin did not allow it (403, nothing written).
    public func authorize(for partner: PartnerProfile) throws(HeraldError) {
        guard self == .timeSensitive, !partner.allowTimeSensitive else { return }
        throw HeraldError(
            status: 403, code: "time_sensitive_not_allowed",
            message: "interruptionLevel time-sensitive is not allowed for this partner; an admin can allow it.",
            field: "interruptionLevel")
    }
}
