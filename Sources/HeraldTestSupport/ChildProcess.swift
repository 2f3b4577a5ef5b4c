import Foundation

/// A process a test starts (an intake, heraldctl) with its output captured to a file, ended
/// with SIGTERM by `stop()` or when the object goes away.
public final class ChildProcess: @unchecked Sendable {
    /// Spawned with posix_spawn, not Foundation's Process (see SpawnedProcess for why).
    public let process: SpawnedProcess
    public let outputFile: URL

    public init(executable: URL, arguments: [String] = [], environment: [String: String]) throws {
        outputFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-test-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: outputFile.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: outputFile.path])
        }
        process = try SpawnedProcess(
            executable: executable, arguments: arguments, environment: environment,
            output: outputFile)
    }

    deinit { stop() }

    /// Output so far (stdout and stderr together).
    public var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Polls `ready` (`waitFor`) until it holds; throws naming `what`, with the output so far, when the process
    /// exits first or `timeout` passes.
    public func waitUntilReady(_ what: String, timeout: Duration = .seconds(15), _ ready: () throws -> Bool) throws {
        var exited = false
        do {
            try waitFor(what, timeout: timeout, interval: .milliseconds(50)) {
                if try ready() { return true }
                exited = !process.isRunning
                return exited
            }
        } catch {
            throw TestHTTPClient.Failure(description: "\(what): timed out: \(output)")
        }
        if exited { throw TestHTTPClient.Failure(description: "\(what): the process exited: \(output)") }
    }

    /// Waits for the process to exit on a thread of its own, not the caller's: an async test that blocked one
    /// of the few cooperative threads (two on these machines) for a long child starves every other async
    /// test meanwhile (an HTTP/2 test's requests once timed out that way in CI).
    public func waitForExit() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { [process] in
                process.waitUntilExit()
                done.resume()
            }
        }
    }

    /// `run`, for async tests of children that take seconds (validators, large loads): see `waitForExit`.
    public static func runDetached(_ executable: URL, _ arguments: [String], environment: [String: String]) async throws
        -> (status: Int32, output: String)
    {
        let child = try ChildProcess(executable: executable, arguments: arguments, environment: environment)
        await child.waitForExit()
        return (child.process.terminationStatus, child.output)
    }

    /// Runs to completion and returns the exit status and output.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]) throws
        -> (status: Int32, output: String)
    {
        let child = try ChildProcess(executable: executable, arguments: arguments, environment: environment)
        child.process.waitUntilExit()
        return (child.process.terminationStatus, child.output)
    }
}
