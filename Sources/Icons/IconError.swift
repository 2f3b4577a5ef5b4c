import HeraldCore

/// Why an icon could not be turned into PNGs. `code` is stable; `message` is safe to show the uploader: it names
/// the rule that failed, never a decoder's own words (those can quote internals).
public typealias IconError = CodedError<IconErrorCode>

/// The stable codes of `IconError`.
public enum IconErrorCode: String, FailureCode {
    /// Not a PNG, JPEG or SVG; one that does not decode or render; over the pixel limits; or one that took
    /// longer than the time budget (422).
    case invalidIcon = "invalid_icon"
    /// More bytes than `IconLimits.maxInputBytes` (413).
    case iconTooLarge = "icon_too_large"
    /// No render slot came free within the time budget, or the process could not get a thread or memory for
    /// the work (503: retry later).
    case unavailable = "icon_unavailable"
}

extension IconError {
    static let empty = IconError(.invalidIcon, "The icon is empty.")

    static func tooManyBytes(limit: Int) -> IconError {
        IconError(.iconTooLarge, "The icon is larger than \(limit) bytes.")
    }

    /// The bytes are none of the three formats. `declaredType` is quoted only when it is one Herald knows, so a
    /// client's header is never echoed verbatim.
    static func unrecognised(declaredType: String?) -> IconError {
        let known = ["image/png", "image/jpeg", "image/svg+xml"]
        let declared = declaredType.map { $0.lowercased() }.flatMap { type in known.first { type.hasPrefix($0) } }
        let prefix = declared.map { "The icon was sent as \($0) but is" } ?? "The icon is"
        return IconError(.invalidIcon, "\(prefix) not a PNG, JPEG or SVG image.")
    }

    static func undecodable(_ format: IconFormat) -> IconError { undecodable(format.name) }

    /// `formatName`: the format the bytes start as (PNG, JPEG, GIF).
    static func undecodable(_ formatName: String) -> IconError {
        IconError(.invalidIcon, "The file is not a valid \(formatName) image.")
    }

    static func sourceTooLarge(_ limits: IconLimits) -> IconError {
        IconError(
            .invalidIcon,
            "The image is larger than \(limits.maxSourceSide) pixels on a side "
                + "or \(limits.maxSourcePixels) pixels in all.")
    }

    static let noSize = IconError(.invalidIcon, "The SVG has neither a width and height nor a viewBox.")

    static let tooSlow = IconError(.invalidIcon, "The image took too long to render.")

    static let unavailable = IconError(.unavailable, "Icons cannot be rendered right now; retry shortly.")
}
