import APNs
import FCM
import Foundation
import HTTP2
import HeraldCore
import Synchronization

/// A transport that answers from a script instead of the network, and records what it was sent.
final class ScriptedTransport: APNsTransport, FCMTransport {
    typealias Answer = Result<HTTP2Response, HTTP2Error>

    let configuration: HTTP2ClientConfiguration
    private let responder: @Sendable (HTTP2Request, Int) -> Answer
    private let state = Mutex<(requests: [HTTP2Request], connects: Int, recycles: Int, shutdowns: Int)>(([], 0, 0, 0))

    /// `responder` gets each request and its index (0 for the first).
    init(
        configuration: HTTP2ClientConfiguration = HTTP2ClientConfiguration(url: "https://example.test"),
        responder: @escaping @Sendable (HTTP2Request, Int) -> Answer
    ) {
        self.configuration = configuration
        self.responder = responder
    }

    func send(_ request: HTTP2Request, completion: @escaping @Sendable (Answer) -> Void) {
        let index = state.withLock { state in
            state.requests.append(request)
            return state.requests.count - 1
        }
        completion(responder(request, index))
    }

    func connect() { state.withLock { $0.connects += 1 } }
    func recycleConnections() { state.withLock { $0.recycles += 1 } }
    func shutdown() { state.withLock { $0.shutdowns += 1 } }

    var requests: [HTTP2Request] { state.withLock { $0.requests } }
    var connects: Int { state.withLock { $0.connects } }
    var recycles: Int { state.withLock { $0.recycles } }
    var shutdowns: Int { state.withLock { $0.shutdowns } }
}

/// Collects the transports a client made, keyed by URL.
final class TransportRecorder: Sendable {
    private let made = Mutex<[String: ScriptedTransport]>([:])
    private let responder: @Sendable (HTTP2ClientConfiguration, HTTP2Request, Int) -> ScriptedTransport.Answer

    init(responder: @escaping @Sendable (HTTP2ClientConfiguration, HTTP2Request, Int) -> ScriptedTransport.Answer) {
        self.responder = responder
    }

    func make(_ configuration: HTTP2ClientConfiguration) -> ScriptedTransport {
        let transport = ScriptedTransport(configuration: configuration) { [responder] request, index in
            responder(configuration, request, index)
        }
        made.withLock { $0[configuration.url] = transport }
        return transport
    }

    subscript(url: String) -> ScriptedTransport? { made.withLock { $0[url] } }
    var count: Int { made.withLock { $0.count } }
}

extension HTTP2Response {
    /// A response with a JSON body.
    static func json(_ status: Int, _ body: String, headers: [HTTP2Header] = []) -> HTTP2Response {
        HTTP2Response(status: status, headers: headers, body: Array(body.utf8))
    }
}

extension HTTP2Request {
    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Bytes as JSON, failing loudly when they are not.
func parseJSON(_ bytes: [UInt8]) throws -> JSONValue { try JSONParser.parse(bytes) }

let sampleDeviceToken = String(repeating: "ab", count: 32)
let sampleAPNsID = "0192f3a4-0000-7000-8000-000000000001"
