import Foundation
import HTTPServer
import HeraldCore

/// Helpers to build the intake's JSON responses.
enum Reply {
    static func json(_ status: Int, _ value: JSONValue, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        json(status, JSONWriter.bytes(value), headers: headers)
    }

    static func json(_ status: Int, _ body: [UInt8], headers: [(name: String, value: String)] = []) -> HTTPResponse {
        var all: [(name: String, value: String)] = [("Content-Type", "application/json")]
        all.append(contentsOf: headers)
        return HTTPResponse(status: status, headers: all, body: body)
    }

    static func noContent() -> HTTPResponse { HTTPResponse(status: 204) }

    static func error(_ error: HeraldError) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if let retryAfter = error.retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        if error.status == 401 { headers.append(("WWW-Authenticate", "Bearer")) }
        return json(error.status, error.json, headers: headers)
    }
}

/// A request after routing: the raw request and its path parameters, checked against their kinds.
struct RoutedRequest {
    let http: HTTPRequest
    let parameters: PathParameters

    /// A path parameter's text as sent.
    func parameter(_ name: String) -> String { parameters.text(name) }

    /// A UUID path parameter, parsed by the router (`PathParameter.Kind.uuid`).
    func uuid(_ name: String) throws(HeraldError) -> UUID { try parameters.uuid(name) }

    /// The Content-Type's media type, lowercased and without parameters ("" when absent).
    var mediaType: String {
        let contentType = http.header("content-type")?.lowercased() ?? ""
        return contentType.split(separator: ";").first.map { $0.trimmingASCIIWhitespace() } ?? ""
    }

    /// The JSON body; 415 unless the content type is JSON, 400 when it does not parse.
    func jsonBody() throws(HeraldError) -> JSONValue {
        guard mediaType == "application/json" else { throw .unsupportedMediaType }
        do {
            return try JSONParser.parse(http.body)
        } catch {
            throw .invalidJSON("\(error.message) at byte \(error.offset)")
        }
    }
}
