import HeraldCore

/// `errorCode` of an FCM v1 error's `FcmError` detail. Codes Google
/// adds later arrive as `unknown` with their text.
public enum FCMErrorCode: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    case unspecifiedError
    case invalidArgument
    case unregistered
    case senderIDMismatch
    case quotaExceeded
    case unavailable
    case `internal`
    case thirdPartyAuthError
    case unknown(String)

    /// Every documented code.
    public static let allKnown: [FCMErrorCode] = [
        .unspecifiedError, .invalidArgument, .unregistered, .senderIDMismatch, .quotaExceeded, .unavailable,
        .internal, .thirdPartyAuthError,
    ]

    private static let byName: [String: FCMErrorCode] =
        Dictionary(uniqueKeysWithValues: allKnown.map { ($0.rawValue, $0) })

    public init(rawValue: String) {
        self = Self.byName[rawValue] ?? .unknown(rawValue)
    }

    /// Google's spelling (`UNREGISTERED`), or the unknown text. (Equality and hashing go through
    /// this, as for every `RawRepresentable`: so it must not compare cases itself.)
    public var rawValue: String {
        switch self {
        case .unspecifiedError: return "UNSPECIFIED_ERROR"
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .unregistered: return "UNREGISTERED"
        case .senderIDMismatch: return "SENDER_ID_MISMATCH"
        case .quotaExceeded: return "QUOTA_EXCEEDED"
        case .unavailable: return "UNAVAILABLE"
        case .internal: return "INTERNAL"
        case .thirdPartyAuthError: return "THIRD_PARTY_AUTH_ERROR"
        case .unknown(let text): return text
        }
    }

    public var description: String { rawValue }
}

/// The parts of an FCM v1 error body the classifier reads:
/// `{"error":{"code":404,"message":"...","status":"NOT_FOUND","details":[{"@type":
/// "type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`, and for an invalid
/// argument the fields it names (`{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":
/// [{"field":"message.token","description":"..."}]}`).
public struct FCMErrorResponse: Sendable, Equatable {
    public static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    public static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    /// From the `FcmError` detail, when there is one.
    public var errorCode: FCMErrorCode?
    /// The canonical gRPC status name (`NOT_FOUND`, `UNAUTHENTICATED`, ...).
    public var status: String?
    /// `error.message`: read to recognise an answer about the registration token, never recorded (it may quote
    /// the request).
    public var message: String?
    /// The `field`s of every `BadRequest` detail's `fieldViolations` (`message.token`, `message.data`).
    public var fieldViolations: [String] = []

    /// FCM says the registration token itself is invalid: a `BadRequest` field violation on `message.token`, or
    /// the message FCM gives for a malformed or stale token ("The registration token is not a valid FCM
    /// registration token"). Other invalid arguments (a bad data key, a TTL out of range) are about the message.
    public var isAboutRegistrationToken: Bool {
        if fieldViolations.contains("message.token") { return true }
        guard let message else { return false }
        return message.lowercased().contains("registration token is not a valid")
    }

    /// The reason recorded for the delivery: the FCM error code, else the status, else nil.
    /// Only upper-case letters and underscores pass, so nothing from the message text leaks.
    var reason: String? {
        for candidate in [errorCode?.rawValue, status] {
            if let candidate, candidate.utf8.count <= 64,
                candidate.utf8.allSatisfy({ (0x41...0x5A).contains($0) || $0 == UInt8(ascii: "_") })
            {
                return candidate
            }
        }
        return nil
    }
}

extension FCMErrorResponse {
    /// Parses a response body; anything unexpected leaves the fields nil.
    public init(body: [UInt8]) {
        guard !body.isEmpty, let json = try? JSONParser.parse(body), let error = json["error"] else {
            self.init(errorCode: nil, status: nil)
            return
        }
        let details = error["details"]?.arrayValue ?? []
        let detail = details.first { $0["@type"]?.stringValue == Self.fcmErrorType }
        let code = detail?["errorCode"]?.stringValue.flatMap { $0.isEmpty ? nil : FCMErrorCode(rawValue: $0) }
        let status = error["status"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let fields = details.filter { $0["@type"]?.stringValue == Self.badRequestType }
            .flatMap { $0["fieldViolations"]?.arrayValue ?? [] }
            .compactMap { $0["field"]?.stringValue }
        self.init(errorCode: code, status: status, message: error["message"]?.stringValue, fieldViolations: fields)
    }
}
