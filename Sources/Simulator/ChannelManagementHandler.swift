import Dispatch
import Foundation
import HTTP2
import HeraldCore

/// Answers Apple's channel management API on the channel port (`--channel-port`; Apple serves it on ports of
/// its own, 2195 development and 2196 production): create, read, list and delete broadcast channels, with the
/// checks of `ChannelRequestValidator`, and records each request as an APNs record with its `kind`.
///
/// Answers (Apple's "Sending channel management requests to APNs"): create 201 with the new id in
/// `apns-channel-id`; read 200 `{"message-storage-policy":N,"push-type":"LiveActivity"}`; list 200
/// `{"channels":[ids]}`; delete 204; errors `{"reason":...}`. Every answer carries `apns-request-id`: the
/// request's, else a new UUID. Nothing here blocks: answers wait out the configured latency on a timer
/// (`AnswerScheduler`), and take no faults (faults apply to broadcasts, not to channel management).
struct ChannelManagementHandler: HTTP2ServerHandler {
    let clock: any HeraldClock
    let validator: ChannelRequestValidator
    let channels: BroadcastChannels
    let answers: AnswerScheduler
    let identifiers: Identifiers

    func handle(_ request: HTTP2ServerRequest, responder: HTTP2ServerResponder) {
        let arrival = DispatchTime.now()
        let now = clock.now
        // Echoed when well formed (even on an error, as APNs echoes apns-id); otherwise a new one.
        let sent = request.headers.first { $0.name == "apns-request-id" }?.value
        let requestID = sent.flatMap { Identifiers.isLowercaseUUID($0) ? $0 : nil } ?? identifiers.uuid()
        let kind = ChannelRequestValidator.kind(of: request)
        let sentChannel = request.headers.first { $0.name == "apns-channel-id" }?.value ?? ""

        let answer: (channel: String, response: HTTP2Response, rejection: APNsRejection?)
        switch validator.validate(request) {
        case .failure(let rejection):
            answer = (sentChannel, rejection.response(requestID: requestID), rejection)
        case .success(let accepted):
            answer = perform(accepted, requestID: requestID, now: now)
        }
        let entry = RecordEntry(
            service: .apns, token: answer.channel[...], headers: request.headers,
            body: request.body, status: answer.response.status, reason: answer.rejection?.reason,
            receivedAt: now.timeIntervalSince1970, id: requestID, kind: kind)
        answers.finish(.answer(entry, answer.response), arrival: arrival, responder: responder)
    }

    private func perform(
        _ accepted: ChannelRequestValidator.Accepted, requestID: String,
        now: Date
    ) -> (channel: String, response: HTTP2Response, rejection: APNsRejection?) {
        let idHeader = HTTP2Header("apns-request-id", requestID, neverIndexed: true)
        switch accepted.operation {
        case .create(let policy):
            let id = BroadcastChannels.newID(identifiers)
            guard channels.create(bundleID: accepted.bundleID, messageStoragePolicy: policy, id: id, at: now) != nil
            else {
                return (
                    "", APNsRejection.cannotCreateChannelConfig.response(requestID: requestID),
                    .cannotCreateChannelConfig
                )
            }
            let headers = [idHeader, HTTP2Header("apns-channel-id", id, neverIndexed: true)]
            return (id, HTTP2Response(status: 201, headers: headers), nil)
        case .read(let id):
            guard let channel = channels.channel(bundleID: accepted.bundleID, id: id) else {
                return (id, APNsRejection.channelNotRegistered.response(requestID: requestID), .channelNotRegistered)
            }
            let body = JSONWriter.bytes(
                .object([
                    ("message-storage-policy", .number(Double(channel.messageStoragePolicy))),
                    ("push-type", .string(channel.pushType)),
                ]))
            return (id, Self.json(body, requestID: idHeader), nil)
        case .list:
            let ids = channels.ids(bundleID: accepted.bundleID)
            let body = JSONWriter.bytes(.object([("channels", .array(ids.map { .string($0) }))]))
            return ("", Self.json(body, requestID: idHeader), nil)
        case .delete(let id):
            guard channels.delete(bundleID: accepted.bundleID, id: id) else {
                return (id, APNsRejection.channelNotRegistered.response(requestID: requestID), .channelNotRegistered)
            }
            return (id, HTTP2Response(status: 204, headers: [idHeader]), nil)
        }
    }

    private static func json(_ body: [UInt8], requestID: HTTP2Header) -> HTTP2Response {
        HTTP2Response(status: 200, headers: [requestID, HTTP2Header("content-type", "application/json")], body: body)
    }
}
