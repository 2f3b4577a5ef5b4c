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
            let outcome: AnswerScheduler.Outcome
            if fault.drop {
                outcome = .drop(.apns)
            } else if fault.goAway {
                outcome = .goAway(.apns, reason: fault.reason ?? "Shutdown")
            } else if let status = fault.status, status != 200 {
                let reason = fault.reason ?? APNsRejection.defaultBroadcastReason(status: status)
                let rejection = APNsRejection(status: status, reason: reason)
                entry.status = status
                entry.reason = rejection.reason
                outcome = .answer(entry, rejection.response(requestID: requestID, retryAfter: fault.retryAfter))
            } else {
                var headers = successHeaders("apns-request-id", requestID)
                if let retryAfter = fault.retryAfter { headers.append(HTTP2Header("retry-after", String(retryAfter))) }
                outcome = .answer(entry, HTTP2Response(status: 200, headers: headers))
            }
            answers.finish(outcome, arrival: arrival, faultDelayMs: fault.delayMs, responder: responder)
        }
    }
}
