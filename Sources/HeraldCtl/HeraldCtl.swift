import Foundation
import HeraldCore
import HeraldCrypto
import PartnerIcons
import Postgres
import ServiceSupport
import Store

/// heraldctl: the operator's commands. Text on a terminal, JSON with `--json`; exit 0 on
/// success, 1 on failure, 2 on bad usage.
public enum HeraldCtl {
    /// Options without a value, across every command.
    static let flagNames: Set<String> = [
        "json", "list", "dry-run", "no-icon", "no-webhook", "realtime", "silent", "allow-time-sensitive",
        "disallow-time-sensitive",
    ]

    /// Runs a command line and returns the exit status. `style` is chosen from `--json` and whether
    /// standard output is a terminal unless a caller (a test) fixes it.
    public static func run(
        _ words: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        style: OutputStyle? = nil,
        output: @escaping (String) -> Void = { print($0) }
    ) -> Int32 {
        var path: [String] = []
        do {
            guard let command = words.first else { throw UsageError(message: "a command is required") }
            if command == "--version" || command == "version" {
                guard words.count == 1 else { throw UsageError(message: "\(command) takes no arguments") }
                output(ServiceArguments.versionLine("heraldctl"))
                return 0
            }
            if command == "help" || command == "--help" || command == "-h" {
                let topic = Array(words.dropFirst())
                output(topic.isEmpty ? Help.overview : try helpPage(topic))
                return 0
            }
            // The containers' health check: no database, its own usage and exit statuses.
            if command == "probe" && !words.contains("--help") && !words.contains("-h") {
                return ProbeCommand.run(Array(words.dropFirst()), output: output)
            }
            let arguments = try Arguments(Array(words.dropFirst()), flagNames: flagNames)
            path = [command] + arguments.positional.prefix(1)
            if arguments.flag("help") {
                output(try helpPage(path))
                return 0
            }
            guard Help.text(for: [command]) != nil else { throw UsageError(message: "unknown command \(command)") }
            if command == "settings" {
                try arguments.allowOnly([])
                guard arguments.positional.isEmpty else { throw UsageError(message: "settings takes no arguments") }
                // The document ends with a newline, which `output` adds.
                output(String(SettingsDocument.markdown().dropLast()))
                return 0
            }
            let reader = EnvironmentReader(environment: environment)
            guard let url = reader.optional(Settings.databaseURL) else {
                throw CommandFailure(message: "\(Settings.databaseURL.name) is required")
            }
            // No statement timeout: migrations and partition maintenance may run long on a big database.
            // HERALD_DB_PREPARED=0 behind a transaction pooler, as for the intake and the worker.
            let prepared = try reader.flag(Settings.databasePrepared)
            let pool = PostgresPool(
                configuration: .init(
                    url: url, maxConnections: 2,
                    connectionOptions: .init(
                        applicationName: "heraldctl", statementTimeout: nil,
                        preparedStatements: prepared)))
            defer { pool.close() }
            let printer = Printer(
                style: style
                    ?? OutputStyle.choose(json: arguments.flag("json"), standardOutputIsTerminal: isatty(1) == 1),
                output: output, now: Date())
            switch command {
            case "migrate": try Commands.migrate(pool: pool, arguments: arguments, printer: printer)
            case "partitions": try Commands.partitions(pool: pool, arguments: arguments, printer: printer)
            case "expire": try Commands.expire(pool: pool, arguments: arguments, printer: printer)
            case "stats": try StatsCommand.run(pool: pool, arguments: arguments, printer: printer)
            case "tokens": try TokensCommand.run(pool: pool, arguments: arguments, printer: printer)
            case "workers": try WorkersCommand.run(pool: pool, arguments: arguments, printer: printer)
            case "replay":
                try ReplayCommand.run(
                    pool: pool, arguments: arguments, printer: printer,
                    fallbackTTLSeconds: try pushRules(environment).defaultTTLSeconds)
            case "backfill":
                try BackfillCommand.run(pool: pool, arguments: arguments, printer: printer, environment: environment)
            case "webhooks": try WebhooksCommand.run(pool: pool, arguments: arguments, printer: printer)
            case "audit": try AuditCommand.run(pool: pool, arguments: arguments, printer: printer)
            case "partners":
                // Made only when an icon is given: its fetcher is a thread of its own.
                var iconSource: PartnerIconSource?
                defer { iconSource?.close() }
                try Commands.partners(
                    pool: pool, arguments: arguments, printer: printer,
                    defaults: try PartnerDefaults(environment),
                    signer: { try pushSigner(environment) }
                ) {
                    if let iconSource { return iconSource }
                    let made = try PartnerIconSource(environment: environment)
                    iconSource = made
                    return made
                }
            default: throw UsageError(message: "unknown command \(command)")
            }
            return 0
        } catch let error as UsageError {
            let page = Help.text(for: path) ?? Help.overview
            FileHandle.standardError.write(Data("heraldctl: \(error.message)\n\n\(page)\n".utf8))
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

    /// The payload signer of HERALD_SIGNING_KEYS / HERALD_SIGNING_KEY_ID, read as the intake reads them: a revocation
    /// signs the ends of the partner's active Live Activities.
    private static func pushSigner(_ environment: [String: String]) throws -> HMACSigner {
        do {
            let settings = try PushSettings.read(EnvironmentReader(environment: environment))
            return HMACSigner(keyID: settings.signingKeyID, key: settings.activeKey)
        } catch {
            throw CommandFailure(
                message: "\(error.description) (a revocation signs the ends of the partner's Live Activities)")
        }
    }

    /// HERALD_DEEPLINK_SCHEME, HERALD_MAX_RECIPIENTS and HERALD_DEFAULT_TTL_SECONDS, read as the intake reads them.
    private static func pushRules(_ environment: [String: String]) throws -> PushRules {
        do {
            return try PushSettings.rules(EnvironmentReader(environment: environment))
        } catch {
            throw CommandFailure(message: error.description)
        }
    }

    private static func helpPage(_ path: [String]) throws(UsageError) -> String {
        guard let page = Help.text(for: path) else {
            throw UsageError(message: "unknown command \(path.joined(separator: " "))")
        }
        return page
    }
}

struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The defaults for new partners, from the same variables the intake reads.
struct PartnerDefaults {
    var tenant = Settings.defaultTenant.text
    var perMinute = Settings.defaultRateLimitPerMinute.integer
    var perDay = Settings.defaultRateLimitPerDay.integer

    init(_ environment: [String: String]) throws {
        let reader = EnvironmentReader(environment: environment)
        if let tenant = reader.optional(Settings.defaultTenant) { self.tenant = try PartnerRules.tenantID(tenant) }
        do {
            perMinute = try reader.integer(Settings.defaultRateLimitPerMinute)
            perDay = try reader.integer(Settings.defaultRateLimitPerDay)
        } catch {
            // heraldctl's form: "VARIABLE must be ...".
            throw CommandFailure(message: "\(error.variable) \(error.problem)")
        }
    }
}
