import Postgres
import ServiceSupport

extension Logger {
    /// Routes the database server's notices (PostgresNotices) into this log as `postgres notice` lines:
    /// warnings, and the FATAL a server sends as it closes a connection (a restart or failover, which the
    /// reconnecting service reports itself), at `warning`; NOTICE and below at `debug`.
    public func takePostgresNotices() {
        PostgresNotices.route { [self] notice in
            let level: LogLevel = ["WARNING", "ERROR", "FATAL", "PANIC"].contains(notice.severity) ? .warning : .debug
            log(
                level, "postgres notice",
                [
                    ("severity", .string(notice.severity)), ("sqlstate", .string(notice.sqlState)),
                    ("message", .string(notice.message)),
                ])
        }
    }
}
