import Foundation
import HeraldCore

/// The `wait` preference of a `Prefer` header (RFC 7240), as the push endpoint honours it.
enum PreferWait {
    /// The longest wait the intake grants; a larger request is shortened to it (RFC 7240 lets a
    /// server apply a preference partly; `Preference-Applied` says what was applied).
    static let maximum = Duration.seconds(30)

    /// nil when there is no `wait` preference or it is 0. Other preferences are ignored.
    static func parse(_ header: String?) throws(HeraldError) -> Duration? {
        guard let header else { return nil }
        for preference in header.split(separator: ",") {
            let parts = preference.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first?.lowercased() == "wait" else { continue }
            guard parts.count == 2, let seconds = Int(parts[1]), seconds >= 0 else {
                throw HeraldError.invalidField("Prefer", "Prefer: wait must be a whole number of seconds (at most 30).")
            }
            if seconds == 0 { return nil }
            return min(.seconds(seconds), maximum)
        }
        return nil
    }
}
