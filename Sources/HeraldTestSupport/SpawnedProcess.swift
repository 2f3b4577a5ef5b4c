import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`, its stdout and stderr appended to one file.
///
/// Not Foundation's `Process`: on Linux its `run()` reads past a buffer while it lists
/// `/proc/self/fd` and crashes the test process now and then (swift-corelibs-foundation PR #5472,
/// still in the Swift 6.3 toolchain here), which a suite that starts hundreds of processes hits
/// about one run in five. The members are the ones tests used of `Process`.
public final class SpawnedProcess: @unchecked Sendable {
    public let processIdentifier: pid_t
    private let lock = NSLock()
    private var status: Int32?
    private var signalled = false

    /// How the child ended, as `Process` says it.
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(executable: URL, arguments: [String], environment: [String: String], output: URL) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let fd = open(output.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot open \(output.path): errno \(errno)") }
        defer { close(fd) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fd, 1)
        posix_spawn_file_actions_adddup2(&actions, fd, 2)

        let argv = ([executable.path] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawn(
                    &pid, executable.path, &actions, nil,
                    UnsafeMutablePointer(mutating: argvBuffer.baseAddress!),
                    UnsafeMutablePointer(mutating: envpBuffer.baseAddress!))
            }
        }
        guard result == 0 else {
            throw Failure(description: "cannot start \(executable.path): \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
    }

    /// Reaps the child if it has exited; `block` waits for it.
    private func reap(block: Bool) -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let status { return status }
        var raw: Int32 = 0
        while true {
            let reaped = waitpid(processIdentifier, &raw, block ? 0 : WNOHANG)
            if reaped == -1 && errno == EINTR { continue }
            guard reaped == processIdentifier else { return nil }
            break
        }
        // The exit code, or the signal that ended it (as Process reports one).
        let signal = raw & 0x7F
        signalled = signal != 0
        status = signal == 0 ? (raw >> 8) & 0xFF : signal
        return status
    }

    public var isRunning: Bool { reap(block: false) == nil }

    public func terminate() { if isRunning { kill(processIdentifier, SIGTERM) } }

    public func waitUntilExit() { _ = reap(block: true) }

    /// The exit status (or the terminating signal); valid after `waitUntilExit()`.
    public var terminationStatus: Int32 { reap(block: false) ?? -1 }

    public var terminationReason: TerminationReason {
        _ = reap(block: false)
        return lock.withLock { signalled } ? .uncaughtSignal : .exit
    }
}
