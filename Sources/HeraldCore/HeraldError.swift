/// An error a client can act on: a stable machine code, an HTTP status, a human message and the
/// offending field. Rendered as `{"error":{"code","message","field"}}`.
public struct HeraldError: Error, Equatable, Sendable {
    public let status: Int
    public let code: String
    public let message: String
    public let field: String?
    /// Seconds for the `Retry-After` header (429, 503).
    public let retryAfter: Int?

    public init(status: Int, code: String, message: String, field: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retryAfter = retryAfter
    }

    public static func invalidJSON(_ detail: String) -> HeraldError {
        HeraldError(status: 400, code: "invalid_json", message: "The body is not valid JSON: \(detail).")
    }
    public static func invalidField(_ field: String, _ message: String) -> HeraldError {
        HeraldError(status: 400, code: "invalid_field", message: message, field: field)
    }
    public static func missingField(_ field: String) -> HeraldError {
        HeraldError(status: 400, code: "missing_field", message: "\(field) is required.", field: field)
    }
    public static func unknownField(_ field: String) -> HeraldError {
        HeraldError(status: 400, code: "unknown_field", message: "\(field) is not a recognised field.", field: field)
    }
    public static func ruleViolated(_ code: String, _ message: String, field: String? = nil) -> HeraldError {
        HeraldError(status: 422, code: code, message: message, field: field)
    }
    public static let unauthorized = HeraldError(
        status: 401, code: "unauthorized", message: "A valid bearer token is required.")
    public static let notFound = HeraldError(status: 404, code: "not_found", message: "No such resource.")
    public static let methodNotAllowed = HeraldError(
        status: 405, code: "method_not_allowed", message: "This method is not allowed on this resource.")
    public static let bodyTooLarge = HeraldError(
        status: 413, code: "body_too_large", message: "The request body is larger than the limit.")
    public static let unsupportedMediaType = HeraldError(
        status: 415, code: "unsupported_media_type", message: "Content-Type must be application/json.")
    public static let databaseUnavailable = HeraldError(
        status: 503, code: "database_unavailable", message: "The database is unavailable; retry shortly.",
        retryAfter: 1)
    /// A transaction pooler lost a prepared statement (PostgresError.isPreparedStatementMismatch): the retry runs on
    /// a connection that detects the pooler and runs unnamed statements; the operator's fix is the setting named.
    public static let databasePooler = HeraldError(
        status: 503, code: "database_pooler",
        message: "A connection pooler in transaction mode lost a prepared statement; retry shortly"
            + " (the operator sets HERALD_DB_PREPARED=0).",
        retryAfter: 1)
    public static let internalError = HeraldError(
        status: 500, code: "internal_error", message: "An internal error occurred.")

    /// The JSON body of the error response.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("code", .string(code)), ("message", .string(message))]
        members.append(("field", field.map { .string($0) } ?? .null))
        return .object([("error", .object(members))])
    }
}
