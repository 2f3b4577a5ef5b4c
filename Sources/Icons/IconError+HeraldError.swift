import HeraldCore

extension IconError {
    /// The HTTP status: 422 for an icon that cannot be used, 413 over the byte limit, 503 when out of capacity.
    public var status: Int {
        switch code {
        case .invalidIcon: 422
        case .iconTooLarge: 413
        case .unavailable: 503
        }
    }

    /// The error as the API answers it.
    public var heraldError: HeraldError {
        HeraldError(
            status: status, code: code.rawValue, message: message,
            retryAfter: code == .unavailable ? 1 : nil)
    }
}
