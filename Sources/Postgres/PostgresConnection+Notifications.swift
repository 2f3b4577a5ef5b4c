import CLibPQ
import Foundation

extension PostgresConnection {
    /// Waits up to `timeout` for NOTIFY messages on the channels this connection LISTENs to and
    /// returns their channel names (empty on timeout). Returns at once with what already arrived.
    /// The connection must not be used for anything else meanwhile (a dedicated listener).
    public func waitForNotifications(timeout: Duration) throws -> [String] {
        var channels = drainNotifications()
        if !channels.isEmpty { return channels }
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw PostgresError(code: .connectionLost, serverMessage: "no socket") }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: Int(timeout / .milliseconds(1)))
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 {
            if errno == EINTR { return [] }
            throw PostgresError(code: .connectionLost, serverMessage: "poll failed: errno \(errno)")
        }
        if ready == 0 { return [] }
        guard PQconsumeInput(handle) == 1, isHealthy else { throw clientFailure() }
        channels = drainNotifications()
        return channels
    }

    private func drainNotifications() -> [String] {
        var channels: [String] = []
        while let notification = PQnotifies(handle) {
            channels.append(String(cString: notification.pointee.relname))
            PQfreemem(notification)
        }
        return channels
    }
}
