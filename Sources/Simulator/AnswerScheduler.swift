import Dispatch
import HTTP2
import HeraldCore

/// Sends each APNs, FCM and token-endpoint answer once its wait is over: the configured latency
/// (`SimulatorConfiguration.latency`, drawn per request) plus a fault's `delayMs`, counted from the request's arrival.
///
/// Nothing blocks: a wait is a timer of the server's event loop (`HTTP2ServerResponder.after`), so the loop goes on
/// reading and answering the connection's other streams, each waiting on its own, and the answers due in one loop
/// iteration are written together, as a busy APNs writes them. (A Dispatch timer per answer, and the hop back to the
/// loop, cost the simulator more than answering.) Without a wait the answer goes out inline. The control API does
/// not come through here: it is answered at once.
struct AnswerScheduler: Sendable {
    let latency: SimulatorLatency
    let log: RequestLog

    /// What to do with a request once its answer is decided.
    enum Outcome: Sendable {
        /// Record, then answer (recording first: a client that got its answer finds it in `/sim/received`).
        case answer(RecordEntry, HTTP2Response)
        /// Answer without a record: the token endpoint's answers (counted under `countedAs`) and unknown paths.
        case reply(HTTP2Response, countedAs: SimulatorService?)
        /// Close the connection without answering.
        case drop(SimulatorService)
        /// GOAWAY: this stream and later ones were not processed.
        case goAway(SimulatorService, reason: String)
    }

    /// Carries out `outcome` when the latency plus `faultDelayMs` has passed since `arrival`.
    func finish(_ outcome: Outcome, arrival: DispatchTime, faultDelayMs: Int = 0, responder: HTTP2ServerResponder) {
        let wait = latency.sample() + faultDelayMs
        guard wait > 0 else {
            Self.perform(outcome, log: log, responder: responder)
            return
        }
        let log = self.log
        // Counted from the arrival: the validation and the record before this took part of the wait already.
        let spent = DispatchTime.now().uptimeNanoseconds &- arrival.uptimeNanoseconds
        let left = max(0, wait * 1_000_000 - Int(clamping: spent))
        log.held()
        responder.after(.nanoseconds(left)) {
            log.released()
            Self.perform(outcome, log: log, responder: responder)
        }
    }

    private static func perform(_ outcome: Outcome, log: RequestLog, responder: HTTP2ServerResponder) {
        switch outcome {
        case .answer(let entry, let response):
            log.append(entry)
            responder.respond(response)
        case .reply(let response, let service):
            if let service { log.count(service, status: response.status) }
            responder.respond(response)
        case .drop(let service):
            log.countUnanswered(service, goAway: false)
            responder.closeConnection()
        case .goAway(let service, let reason):
            log.countUnanswered(service, goAway: true)
            var debugData = Array(#"{"reason":"#.utf8)
            JSONWriter.writeString(reason, into: &debugData)
            debugData.append(UInt8(ascii: "}"))
            responder.goAway(debugData: debugData)
        }
    }
}
