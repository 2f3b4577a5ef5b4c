import Foundation
import HeraldCore
import HeraldCrypto
import Postgres
import Store

/// heraldctl: the operator's commands. Text on a terminal, JSON with `--json`; exit 0 on
/// success, 1 on failure, 2 on bad usage.
public enum HeraldCtl {
    public static let usage = """
        usage: heraldctl <command> [options]

          migrate                               apply the schema migrations (idempotent, concurrent-safe)
          partitions [--months-ahead N] [--retention-days N] [--list]
                                                create future monthly partitions, drop expired ones
          expire [--json]                       end the Live Activities past their TTL now (one sweep)
          partners create --mini-app-id ID --display-name NAME [--tenant T]
                          [--rate-limit-per-minute N] [--rate-limit-per-day N] [--icon-url URL]
          partners list
          partners update ID [--display-name NAME] [--rate-limit-per-minute N] [--rate-limit-per-day N]
                             [--icon-url URL | --no-icon]
          partners rotate-key ID
          partners revoke ID
          probe URL [--timeout SECONDS]         exit 0 if the http:// URL answers 2xx in time (health checks; no database)

        Every command reads HERALD_DATABASE_URL and accepts --json. New partners get HERALD_DEFAULT_TENANT,
        HERALD_DEFAULT_RATE_LIMIT_PER_MINUTE and HERALD_DEFAULT_RATE_LIMIT_PER_DAY unless given.
        """

    /// Runs a command line and returns the exit status.
    public static func run(_ words: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           output: @escaping (String) -> Void = { print($0) }) -> Int32 {
        do {
            guard let command = words.first else { throw UsageError(message: "a command is required") }
            if command == "help" || command == "--help" || command == "-h" {
                output(usage)
                return 0
            }
            if command == "probe" { return ProbeCommand.run(Array(words.dropFirst()), output: output) }
            let arguments = try Arguments(Array(words.dropFirst()), flagNames: ["json", "list", "dry-run", "no-icon"])
            guard let url = environment["HERALD_DATABASE_URL"], !url.isEmpty else {
                throw CommandFailure(message: "HERALD_DATABASE_URL is required")
            }
            // No statement timeout: migrations and partition maintenance may run long on a big database.
            let pool = PostgresPool(configuration: .init(
                url: url, maxConnections: 2,
                connectionOptions: .init(applicationName: "heraldctl", statementTimeout: nil)))
            defer { pool.close() }
            let printer = Printer(json: arguments.flag("json"), output: output)
            switch command {
            case "migrate": try Commands.migrate(pool: pool, arguments: arguments, printer: printer)
            case "partitions": try Commands.partitions(pool: pool, arguments: arguments, printer: printer)
            case "expire": try Commands.expire(pool: pool, arguments: arguments, printer: printer)
            case "partners": try Commands.partners(pool: pool, arguments: arguments, printer: printer,
                                                   defaults: try PartnerDefaults(environment))
            default: throw UsageError(message: "unknown command \(command)")
            }
            return 0
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("heraldctl: \(error.message)\n\n\(usage)\n".utf8))
            return 2
        } catch let error as HeraldError {
            FileHandle.standardError.write(Data("heraldctl: \(error.message)\n".utf8))
            return 1
        } catch let error as PostgresError {
            let detail = error.isUnavailable ? "the database is unavailable" : "database error \(error.sqlState ?? "")"
            FileHandle.standardError.write(Data("heraldctl: \(detail)\n".utf8))
            return 1
        } catch {
            FileHandle.standardError.write(Data("heraldctl: \(error)\n".utf8))
            return 1
        }
    }
}

struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Prints a result as text or as one JSON document.
struct Printer {
    let json: Bool
    let output: (String) -> Void

    func emit(_ value: JSONValue, text: () -> String) {
        output(json ? JSONWriter.string(value) : text())
    }
}

/// The defaults for new partners, from the same variables the intake reads.
struct PartnerDefaults {
    var tenant = "default"
    var perMinute = 60
    var perDay = 10_000

    init(_ environment: [String: String]) throws {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let tenant = value("HERALD_DEFAULT_TENANT") { self.tenant = try PartnerRules.tenantID(tenant) }
        if let text = value("HERALD_DEFAULT_RATE_LIMIT_PER_MINUTE") {
            guard let number = Int(text), PartnerRules.rateLimitPerMinuteRange.contains(number) else {
                throw CommandFailure(message: "HERALD_DEFAULT_RATE_LIMIT_PER_MINUTE must be a whole number in 1...1000000")
            }
            perMinute = number
        }
        if let text = value("HERALD_DEFAULT_RATE_LIMIT_PER_DAY") {
            guard let number = Int(text), PartnerRules.rateLimitPerDayRange.contains(number) else {
                throw CommandFailure(message: "HERALD_DEFAULT_RATE_LIMIT_PER_DAY must be a whole number in 1...100000000")
            }
            perDay = number
        }
    }
}
