import Foundation
import ServiceSupport
import Simulator

// herald-sim: the local APNs + FCM + OAuth2 simulator. Serve until SIGTERM or SIGINT, or mint a
// provider token. Exit status: 0 done, 1 could not start, 2 bad usage.
TerminationSignals.block()

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("herald-sim: \(message)\n".utf8))
    exit(status)
}

/// One line to stdout, unbuffered (`print` buffers when stdout is a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let command: SimulatorCommand
do {
    command = try SimulatorCommand.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error.message)\n\n\(SimulatorCommand.usage)", status: 2)
}

switch command {
case .help:
    say(SimulatorCommand.usage)
    exit(0)

case .version:
    say(ServiceArguments.versionLine("herald-sim"))
    exit(0)

case .mintAPNsJWT(let keyFile, let keyID, let teamID):
    do {
        say(try ProviderTokenMint.mint(keyFile: keyFile, keyID: keyID, teamID: teamID))
        exit(0)
    } catch {
        fail(error.message, status: 1)
    }

case .serve(let configuration):
    let simulator: Simulator
    do {
        simulator = try Simulator(configuration: configuration)
        try simulator.start()
    } catch {
        fail(error.message, status: 1)
    }
    // Scripts wait for the listening line, so the channel port is announced before it.
    if let channelPort = simulator.channelPort {
        say("herald-sim channel management on \(configuration.host):\(channelPort) (\(configuration.transportName))")
    }
    // Scripts wait for this exact line: written unbuffered, so a pipe sees it at once.
    say("herald-sim listening on \(configuration.host):\(simulator.port) (\(configuration.transportName))")
    TerminationSignals.wait()
    simulator.stop()
    exit(0)
}
