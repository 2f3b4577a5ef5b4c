import APNs
import Dispatch
import HTTP2
import HeraldCore

/// Routes each complete request (on the server's loop thread) to APNs (device pushes and broadcasts), FCM, the
/// token endpoint or the control API, applies faults, records what was answered, and answers.
///
/// Nothing here blocks: every answer but the control API's goes through `AnswerScheduler`, which waits out the
/// configured latency and a fault's delay on a timer, from the request's arrival.
final class SimulatorHandler: HTTP2ServerHandler {
    let clock: any HeraldClock
    let apns: APNsRequestValidator
    let broadcast: BroadcastRequestValidator
    let fcm: FCMRequestValidator
    let oauth: OAuthTokenEndpoint
    let control: ControlAPI
    let faults: FaultTable
    let log: RequestLog
    let answers: AnswerScheduler
    let identifiers: Identifiers
    /// Sandbox answers carry `apns-unique-id` (SimulatorConfiguration.apnsEnvironment).
    let sendsUniqueID: Bool
    /// Where the token endpoint is served (usually one path).
    private let tokenPaths: [String]

    init(
        clock: any HeraldClock, apns: APNsRequestValidator, broadcast: BroadcastRequestValidator,
        fcm: FCMRequestValidator, oauth: OAuthTokenEndpoint, faults: FaultTable, owners: TokenOwners,
        fcmTokenProjects: FCMTokenProjects, log: RequestLog, identifiers: Identifiers,
        apnsEnvironment: APNsEnvironment, latency: SimulatorLatency
    ) {
        self.clock = clock
        self.apns = apns
        self.broadcast = broadcast
        self.fcm = fcm
        self.oauth = oauth
        self.faults = faults
        self.log = log
        self.answers = AnswerScheduler(latency: latency, log: log)
        self.identifiers = identifiers
        self.sendsUniqueID = apnsEnvironment == .sandbox
        self.control = ControlAPI(
            log: log, faults: faults, owners: owners, fcmProjects: fcmTokenProjects,
            channels: broadcast.channels)
        self.tokenPaths = oauth.paths
    }

    func handle(_ request: HTTP2ServerRequest, responder: HTTP2ServerResponder) {
        // The latency counts from here: the request is complete.
        let arrival = DispatchTime.now()
        let path = request.path
        if path.hasPrefix("/3/") {
            handleAPNs(request, arrival: arrival, responder: responder)
        } else if path.hasPrefix("/4/") {
            handleBroadcast(request, arrival: arrival, responder: responder)
        } else if path.hasPrefix(FCMRequestValidator.pathPrefix) {
            handleFCM(request, arrival: arrival, responder: responder)
        } else if path.hasPrefix(ControlAPI.prefix) {
            // Never delayed: tests and scripts read the state between requests.
            responder.respond(control.respond(to: request))
        } else if isTokenPath(path) {
            let response = oauth.respond(to: request, now: clock.now.timeIntervalSince1970)
            answers.finish(.reply(response, countedAs: .token), arrival: arrival, responder: responder)
        } else {
            // Anything else is answered as APNs answers an unknown path.
            let response = APNsRejection.badPath.response(apnsID: identifiers.uuid(), timestampMillis: 0)
            answers.finish(.reply(response, countedAs: nil), arrival: arrival, responder: responder)
        }
    }

    private func isTokenPath(_ target: String) -> Bool {
        let path = ControlAPI.split(target).path
        return tokenPaths.contains { $0 == path }
    }

    // MARK: APNs

    private func handleAPNs(_ request: HTTP2ServerRequest, arrival: DispatchTime, responder: HTTP2ServerResponder) {
        let now = clock.now.timeIntervalSince1970
        switch apns.validate(request) {
        case .failure(let rejection):
            // APNs echoes a well-formed apns-id even on errors.
            let clientID = request.headers.first { $0.name == "apns-id" }?.value
            let apnsID = clientID.flatMap { Identifiers.isLowercaseUUID($0) ? $0 : nil } ?? identifiers.uuid()
            let entry = RecordEntry(
                service: .apns, token: APNsRequestValidator.token(inPath: request.path),
                headers: request.headers, body: request.body, status: rejection.status,
                reason: rejection.reason, receivedAt: now, id: apnsID, detail: rejection.detail)
            answers.finish(
                .answer(entry, rejection.response(apnsID: apnsID, timestampMillis: Self.millis(now))),
                arrival: arrival, responder: responder)
        case .success(let accepted):
            let apnsID = accepted.apnsID ?? identifiers.uuid()
            var entry = RecordEntry(
                service: .apns, token: accepted.token, headers: request.headers,
                body: request.body, status: 200, reason: nil, receivedAt: now, id: apnsID)
            guard let fault = faults.take(token: accepted.token) else {
                answers.finish(
                    .answer(entry, HTTP2Response(status: 200, headers: successHeaders("apns-id", apnsID))),
                    arrival: arrival, responder: responder)
                return
            }
            let outcome = apnsOutcome(
                fault, &entry, success: { successHeaders("apns-id", apnsID) },
                defaultReason: APNsRejection.defaultReason(status:)
            ) { rejection in
                rejection.response(apnsID: apnsID, timestampMillis: Self.millis(now), retryAfter: fault.retryAfter)
            }
            answers.finish(outcome, arrival: arrival, faultDelayMs: fault.delayMs, responder: responder)
        }
    }

    /// What an APNs request (a device push, a broadcast) answers under `fault`: nothing (dropped), a GOAWAY, the
    /// fault's rejection (recorded in `entry`, worded with `defaultReason` when the fault names none), or a 200 with
    /// the `success` headers and the fault's retry-after.
    func apnsOutcome(
        _ fault: SimulatorFault, _ entry: inout RecordEntry, success: () -> [HTTP2Header],
        defaultReason: (_ status: Int) -> String, rejected: (APNsRejection) -> HTTP2Response
    ) -> AnswerScheduler.Outcome {
        if fault.drop { return .drop(.apns) }
        if fault.goAway { return .goAway(.apns, reason: fault.reason ?? "Shutdown") }
        if let status = fault.status, status != 200 {
            let rejection = APNsRejection(status: status, reason: fault.reason ?? defaultReason(status))
            entry.status = status
            entry.reason = rejection.reason
            return .answer(entry, rejected(rejection))
        }
        var headers = success()
        if let retryAfter = fault.retryAfter { headers.append(HTTP2Header("retry-after", String(retryAfter))) }
        return .answer(entry, HTTP2Response(status: 200, headers: headers))
    }

    /// A 200 answer's headers: the request's id under `idHeader` (`apns-id` for a device push, `apns-request-id`
    /// for a broadcast), and in the sandbox `apns-unique-id`. Both ids are new for every answer: never indexed (see
    /// HTTP2Header.neverIndexed).
    func successHeaders(_ idHeader: String, _ id: String) -> [HTTP2Header] {
        var headers = [HTTP2Header(idHeader, id, neverIndexed: true)]
        if sendsUniqueID { headers.append(HTTP2Header("apns-unique-id", identifiers.uuid(), neverIndexed: true)) }
        return headers
    }

    // MARK: FCM

    private func handleFCM(_ request: HTTP2ServerRequest, arrival: DispatchTime, responder: HTTP2ServerResponder) {
        let now = clock.now.timeIntervalSince1970
        switch fcm.validate(request, now: now) {
        case .failure(let rejection):
            let entry = RecordEntry(
                service: .fcm, token: Self.fcmTarget(of: request.body)[...], headers: request.headers,
                body: request.body, status: rejection.status,
                reason: rejection.errorCode ?? FCMRejection.statusName(rejection.status),
                receivedAt: now, id: nil)
            answers.finish(.answer(entry, rejection.response()), arrival: arrival, responder: responder)
        case .success(let accepted):
            let name =
                "projects/\(accepted.project)/messages/"
                + (accepted.validateOnly ? "fake_message_id" : "0:\(Self.millis(now))%\(identifiers.hex(bytes: 8))")
            var entry = RecordEntry(
                service: .fcm, token: accepted.target[...], headers: request.headers,
                body: request.body, status: 200, reason: nil, receivedAt: now, id: name)
            let fault = faults.take(token: accepted.target)
            let outcome: AnswerScheduler.Outcome
            if fault?.drop == true {
                outcome = .drop(.fcm)
            } else if fault?.goAway == true {
                outcome = .goAway(.fcm, reason: fault?.reason ?? "Shutdown")
            } else if let fault, let status = fault.status, status != 200 {
                let rejection = FCMRejection.fault(status: status, reason: fault.reason)
                entry.status = status
                entry.reason = rejection.errorCode
                entry.dropID()
                outcome = .answer(entry, rejection.response(retryAfter: fault.retryAfter))
            } else {
                var headers = [HTTP2Header("content-type", "application/json; charset=UTF-8")]
                if let retryAfter = fault?.retryAfter { headers.append(HTTP2Header("retry-after", String(retryAfter))) }
                var body: [UInt8] = []
                JSONWriter.write(.object([("name", .string(name))]), into: &body)
                outcome = .answer(entry, HTTP2Response(status: 200, headers: headers, body: body))
            }
            answers.finish(outcome, arrival: arrival, faultDelayMs: fault?.delayMs ?? 0, responder: responder)
        }
    }

    /// The target of an FCM body that failed validation, when it can still be read.
    private static func fcmTarget(of body: [UInt8]) -> String {
        guard let message = (try? JSONParser.parse(body))?["message"] else { return "" }
        if let token = message["token"]?.stringValue { return token }
        if let topic = message["topic"]?.stringValue { return topic.hasPrefix("/topics/") ? topic : "/topics/" + topic }
        return message["condition"]?.stringValue ?? ""
    }

    static func millis(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded(.down)) }
}
