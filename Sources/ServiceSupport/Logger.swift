import Foundation
import HeraldCore

public enum LogLevel: String, Sendable, Comparable {
    case debug, info, warning, error

    public var rank: Int {
        switch self {
        case .debug: return 0
        case .info: return 1
        case .warning: return 2
        case .error: return 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}

/// JSON lines on stdout, one per event. Callers pass only non-secret fields: ids, routes,
/// statuses, counts, SQLSTATEs; never keys, tokens, emails or bodies.
public struct Logger: Sendable {
    public let minimum: LogLevel
    public let component: String

    public init(component: String, minimum: LogLevel = .info) {
        self.component = component
        self.minimum = minimum
    }

    public func log(_ level: LogLevel, _ message: String, _ fields: [(String, JSONValue)] = []) {
        guard level >= minimum else { return }
        var members: [(key: String, value: JSONValue)] = [
            ("ts", .string(ISO8601.format(Date()))), ("level", .string(level.rawValue)),
            ("component", .string(component)), ("msg", .string(message)),
        ]
        members.append(contentsOf: fields.map { ($0.0, $0.1) })
        var line = JSONWriter.bytes(.object(members))
        line.append(0x0A)
        // One write(2) per line keeps lines whole when several threads log at once.
        line.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
    }

    public func info(_ message: String, _ fields: [(String, JSONValue)] = []) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [(String, JSONValue)] = []) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [(String, JSONValue)] = []) { log(.error, message, fields) }
}
