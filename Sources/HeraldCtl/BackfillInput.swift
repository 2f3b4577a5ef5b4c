import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A JSONL file read one line at a time (getline), so a file of any size is never in memory.
final class LineReader {
    private let file: UnsafeMutablePointer<FILE>
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0
    /// Bytes read so far, newlines included.
    private(set) var bytesRead = 0
    /// The number of the line last returned (1-based).
    private(set) var lineNumber = 0
    let size: Int?

    init(path: String) throws {
        guard let file = fopen(path, "r") else {
            throw CommandFailure(message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        var status = stat()
        if fstat(fileno(file), &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            fclose(file)
            throw CommandFailure(message: "cannot read \(path): it is a directory")
        }
        self.file = file
        size = (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : nil
    }

    deinit {
        free(buffer)
        fclose(file)
    }

    /// The next line without its line end; nil at the end of the file.
    func next() throws -> [UInt8]? {
        var length: Int
        repeat {
            clearerr(file)
            length = getline(&buffer, &capacity, file)
        } while length < 0 && ferror(file) != 0 && errno == EINTR
        guard length >= 0, let buffer else {
            if ferror(file) != 0 {
                throw CommandFailure(message: "cannot read the file: \(String(cString: strerror(errno)))")
            }
            return nil
        }
        bytesRead += length
        lineNumber += 1
        var end = length
        while end > 0 && (buffer[end - 1] == 0x0A || buffer[end - 1] == 0x0D) { end -= 1 }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: end) {
            Array(UnsafeBufferPointer(start: $0, count: end))
        }
    }
}

/// SIGINT (Ctrl-C) and SIGTERM during a backfill: the handler only raises a flag, which the command
/// reads between batches, so the batch in flight commits and the summary says what was written.
enum Interruption {
    private static let flag = Atomic<Bool>(false)

    static var requested: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        _ = flag.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = interruptionHandler
        sigemptyset(&action.sa_mask)
        // Restarted: a signal must not fail the libpq call in flight.
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A parent may have left them blocked (a process inherits its signal mask).
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    static func raise() { flag.store(true, ordering: .relaxed) }
}

/// A global function, not a closure: called by the kernel on any thread, so it must carry no actor isolation.
private func interruptionHandler(_ signal: Int32) {
    Interruption.raise()
}
