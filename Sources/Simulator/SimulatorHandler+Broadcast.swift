import Dispatch
import HTTP2

extension SimulatorHandler {
    /// `POST /4/broadcasts/apps/{bundleId}`: checked by `BroadcastRequestValidator`, then answered 200, or as the
    /// fault set for the channel id says (`PUT /sim/faults/{channelId}`), and recorded with kind `broadcast` and the
    /// channel id as its token.
    ///
    /// Every answer carries `apns-request-id` (the request's when well formed, else a new UUID); a 200 of the
    /// sandbox host also carries `apns-unique-id`, as device pushes do.
    func handleBroadcast(_ request: HTTP2ServerRequest, arrival: DispatchTime, responder: HTTP2ServerResponder) {
        let now = clock.now.timeIntervalSince1970
        let sent = request.headers.first { $0.name == "apns-request-id" }?.value
        let requestID = sent.flatMap { Identifiers.isLowercaseUUID($0) ? $0 : nil } ?? identifiers.uuid()
        let channelID = request.headers.first { $0.name == "apns-channel-id" }?.value ?? ""
        var entry = RecordEntry(
            service: .apns, token: channelID[...], headers: request.headers, body: request.body,
            status: 200, reason: nil, receivedAt: now, id: requestID, kind: .broadcast)
        switch broadcast.validate(request) {
        case .failure(let rejection):
            entry.status = rejection.status
            entry.reason = rejection.reason
            entry.detail = rejection.detail
            answers.finish(
                .answer(entry, rejection.response(requestID: requestID)), arrival: arrival,
                responder: responder)
        case .success:
            guard let fault = faults.take(token: channelID) else {
                let response = HTTP2Response(status: 200, headers: successHeaders("apns-request-id", requestID))
                answers.finish(.answer(entry, response), arrival: arrival, responder: responder)
                return
            }
            let outcome = apnsOutcome(
                fault, &entry, success: { successHeaders("apns-request-id", requestID) },
                defaultReason: APNsRejection.defaultBroadcastReason(status:)
            ) { rejection in
                rejection.response(requestID: requestID, retryAfter: fault.retryAfter)
            }
            answers.finish(outcome, arrival: arrival, faultDelayMs: fault.delayMs, responder: responder)
        }
    }
}
