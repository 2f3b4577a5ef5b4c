import Foundation
import Intake
import PostgresLogging
import ServiceSupport

// herald-intake: configuration from the environment, then serve until SIGTERM or SIGINT.
ServiceArguments.handle(Array(CommandLine.arguments.dropFirst()), program: "herald-intake")
TerminationSignals.block()

let configuration: IntakeConfiguration
do {
    configuration = try IntakeConfiguration.fromEnvironment()
} catch {
    FileHandle.standardError.write(Data("herald-intake: configuration error: \(error)\n".utf8))
    exit(2)
}

// The server's notices (a FATAL as a restart closes a connection) join the JSON log instead of stderr.
Logger(component: "intake", minimum: configuration.logLevel).takePostgresNotices()

let intake: IntakeServer
do {
    intake = try IntakeServer(configuration: configuration)
    try intake.start()
} catch {
    FileHandle.standardError.write(Data("herald-intake: cannot start: \(error)\n".utf8))
    exit(1)
}

TerminationSignals.wait()
// Finish the requests in flight (their commits decide what the partner is told), then exit.
intake.stop()
exit(0)
