import HTTP2
import HeraldCore

/// An FCM HTTP v1 error answer:
/// `{"error":{"code":404,"message":"...","status":"NOT_FOUND","details":[{"@type":
/// "type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`.
/// Authentication and permission errors come from Google's front end and carry no FcmError
/// detail (`errorCode` nil), as the real service answers them; SENDER_ID_MISMATCH comes from FCM itself and
/// carries one.
struct FCMRejection: Error, Sendable, Equatable {
    var status: Int
    var message: String
    var errorCode: String?

    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"

    static func invalidArgument(_ message: String) -> FCMRejection {
        FCMRejection(status: 400, message: message, errorCode: "INVALID_ARGUMENT")
    }

    static let unauthenticated = FCMRejection(
        status: 401,
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
            + "other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        errorCode: nil)

    /// A valid token whose scopes include neither `firebase.messaging` nor `cloud-platform`.
    static let insufficientScopes = FCMRejection(
        status: 403, message: "Request had insufficient authentication scopes.", errorCode: nil)

    static func permissionDenied(project: String) -> FCMRejection {
        FCMRejection(
            status: 403,
            message: "Permission 'cloudmessaging.messages.create' denied on resource "
                + "'//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).", errorCode: nil)
    }

    /// A registration token issued to another project's app than the one whose `messages:send` was called: FCM's
    /// own 403, with the FcmError detail (status PERMISSION_DENIED, as every 403).
    static let senderIDMismatch = FCMRejection(
        status: 403, message: defaultMessage(errorCode: "SENDER_ID_MISMATCH"), errorCode: "SENDER_ID_MISMATCH")

    static let notFound = FCMRejection(status: 404, message: "The requested URL was not found.", errorCode: nil)
    static let methodNotAllowed = FCMRejection(status: 405, message: "Method not allowed: use POST.", errorCode: nil)

    /// The rejection a fault with this status answers with; `reason`, if given, is the errorCode.
    static func fault(status: Int, reason: String?) -> FCMRejection {
        let errorCode = reason ?? defaultErrorCode(status: status)
        return FCMRejection(status: status, message: defaultMessage(errorCode: errorCode), errorCode: errorCode)
    }

    static func defaultErrorCode(status: Int) -> String {
        switch status {
        case 400: return "INVALID_ARGUMENT"
        case 401: return "THIRD_PARTY_AUTH_ERROR"
        case 403: return "SENDER_ID_MISMATCH"
        case 404: return "UNREGISTERED"
        case 429: return "QUOTA_EXCEEDED"
        case 503: return "UNAVAILABLE"
        default: return status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT"
        }
    }

    static func defaultMessage(errorCode: String) -> String {
        switch errorCode {
        case "UNREGISTERED": return "Requested entity was not found."
        case "INVALID_ARGUMENT": return "The registration token is not a valid FCM registration token"
        case "THIRD_PARTY_AUTH_ERROR": return "Auth error from APNS or Web Push Service"
        case "SENDER_ID_MISMATCH": return "SenderId mismatch"
        case "QUOTA_EXCEEDED": return "Quota exceeded for quota metric 'Messages sent' of service 'fcm.googleapis.com'."
        case "UNAVAILABLE": return "The service is currently unavailable."
        default: return "Internal error encountered."
        }
    }

    /// The canonical gRPC status name Google writes beside the HTTP status.
    static func statusName(_ status: Int) -> String {
        switch status {
        case 400: return "INVALID_ARGUMENT"
        case 401: return "UNAUTHENTICATED"
        case 403: return "PERMISSION_DENIED"
        case 404: return "NOT_FOUND"
        case 405: return "UNIMPLEMENTED"
        case 409: return "ABORTED"
        case 429: return "RESOURCE_EXHAUSTED"
        case 501: return "UNIMPLEMENTED"
        case 503: return "UNAVAILABLE"
        case 504: return "DEADLINE_EXCEEDED"
        default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION"
        }
    }

    func response(retryAfter: Int? = nil) -> HTTP2Response {
        var error: [(key: String, value: JSONValue)] = [
            ("code", .number(Double(status))), ("message", .string(message)),
            ("status", .string(Self.statusName(status))),
        ]
        if let errorCode {
            error.append(
                (
                    "details",
                    .array([.object([("@type", .string(Self.fcmErrorType)), ("errorCode", .string(errorCode))])])
                ))
        }
        var body: [UInt8] = []
        JSONWriter.write(.object([("error", .object(error))]), into: &body)
        var headers = [HTTP2Header("content-type", "application/json; charset=UTF-8")]
        if let retryAfter { headers.append(HTTP2Header("retry-after", String(retryAfter))) }
        return HTTP2Response(status: status, headers: headers, body: body)
    }
}
