import CLibPQ
import Foundation
import Synchronization

/// Where the server's notices go: warnings, and the FATAL a server sends before it closes a connection
/// (a restart, a failover, `pg_terminate_backend`). libpq's default prints them raw on stderr, which
/// breaks a process's one-JSON-object-per-line log; every connection routes them here instead, and a
/// process that logs JSON installs its logger with `PostgresNotices.route`. Until then (heraldctl) they go to
/// stderr as libpq writes them: `SEVERITY:  message`.
public enum PostgresNotices {
    /// One notice: its severity (`WARNING`, `NOTICE`, `FATAL`, ...), SQLSTATE and primary message.
    public struct Notice: Sendable, Equatable {
        public let severity: String
        public let sqlState: String
        public let message: String
    }

    private static let sink = Mutex<(@Sendable (Notice) -> Void)?>(nil)

    /// Sends every later notice of every connection to `handler` (nil: to stderr).
    public static func route(_ handler: (@Sendable (Notice) -> Void)?) {
        sink.withLock { $0 = handler }
    }

    /// Delivers a notice the client itself raises (a pooler found where the server was expected), as the
    /// server's are: to the routed handler, or to stderr as libpq would print it.
    static func report(_ notice: Notice) {
        guard let handler = sink.withLock({ $0 }) else {
            FileHandle.standardError.write(Data("\(notice.severity):  \(notice.message)\n".utf8))
            return
        }
        handler(notice)
    }

    static func deliver(_ result: OpaquePointer?) {
        guard let result else { return }
        // The field codes of libpq's PG_DIAG_* (postgres_ext.h), which Swift does not import.
        func field(_ code: Unicode.Scalar) -> String {
            PQresultErrorField(result, Int32(code.value)).map { String(cString: $0) } ?? ""
        }
        guard let handler = sink.withLock({ $0 }) else {
            FileHandle.standardError.write(Data(String(cString: PQresultErrorMessage(result)).utf8))
            return
        }
        handler(Notice(severity: field("V"), sqlState: field("C"), message: field("M")))
    }

    /// Installs the receiver on a new connection.
    static func install(on connection: OpaquePointer) {
        _ = PQsetNoticeReceiver(connection, { _, result in PostgresNotices.deliver(result) }, nil)
    }
}
