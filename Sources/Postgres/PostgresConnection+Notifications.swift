import CLibPQ
import Foundation

/// A NOTIFY as a listener receives it.
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    /// Empty when the NOTIFY carried none.
    public let payload: String

    public init(channel: String, payload: String = "") {
        self.channel = channel
        self.payload = payload
    }
}

extension PostgresConnection {
    /// Waits up to `timeout` for NOTIFY messages on the channels this connection LISTENs to and
    /// returns them (empty on timeout). Returns at once with what already arrived.
    /// The connection must not be used for anything else meanwhile (a dedicated listener).
    public func waitForNotifications(timeout: Duration) throws -> [PostgresNotification] {
        var notifications = drainNotifications()
        if !notifications.isEmpty { return notifications }
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
        notifications = drainNotifications()
        return notifications
    }

    private func drainNotifications() -> [PostgresNotification] {
        var notifications: [PostgresNotification] = []
        while let notification = PQnotifies(handle) {
            notifications.append(
                PostgresNotification(
                    channel: String(cString: notification.pointee.relname),
                    payload: String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return notifications
    }
}
