/// A request stream on a server connection: the request while it arrives, then the response body while it leaves.
final class ServerStream {
    var method = ""
    var path = ""
    var authority: String?
    var scheme = ""
    var headers: [HTTP2Header] = []
    var body: [UInt8] = []
    /// The body outgrew `maxBodyBytes`: the rest is dropped and the answer is 413.
    var isTooLarge = false
    /// The handler was called (the request was complete).
    var isDispatched = false
    var isAnswered = false
    var responseBody: [UInt8] = []
    var responseOffset = 0
}
