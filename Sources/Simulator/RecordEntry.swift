import Foundation
import HTTP2

/// What the request log keeps per answered request: the request's own arrays and strings,
/// shared rather than copied (the token is a slice of the path), so recording costs no
/// allocation on the hot path. Redaction and JSON happen when someone reads the log.
struct RecordEntry: Sendable {
    var service: SimulatorService
    var token: Substring
    var headers: [HTTP2Header]
    var body: [UInt8]
    var status: Int
    var reason: String?
    var receivedAt: Double
    var id: String?
    /// Which rule a refused request broke, when the reason does not say (a string literal: no allocation).
    var detail: String? = nil

    var record: SimulatorRecord {
        SimulatorRecord(
            service: service, token: String(token),
            headers: headers.map { $0.name == "authorization" ? HTTP2Header($0.name, "<redacted>") : $0 },
            body: body, status: status, reason: reason,
            receivedAt: Date(timeIntervalSince1970: receivedAt), id: id, detail: detail)
    }
}
