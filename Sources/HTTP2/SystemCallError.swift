#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: which one and its errno. Internal: the public surface speaks `HTTP2Error`.
struct SystemCallError: Error, CustomStringConvertible {
    let operation: StaticString
    let errorNumber: Int32

    var description: String {
        "\(operation): \(String(cString: strerror(errorNumber))) (errno \(errorNumber))"
    }

    /// The call would block (non-blocking socket with nothing to do).
    var wouldBlock: Bool { errorNumber == EAGAIN || errorNumber == EWOULDBLOCK }
}

/// Runs a system call that reports failure as -1 with `errno` (an `int` or an `ssize_t`), retrying
/// on EINTR.
///
/// Every syscall of the module goes through here, so EINTR is handled once and failures arrive as a
/// typed error carrying the operation's name.
@inline(__always)
func systemCall<Result: BinaryInteger>(_ operation: StaticString, _ body: () -> Result) throws(SystemCallError)
    -> Result
{
    while true {
        let result = body()
        if result != -1 {
            return result
        }
        let number = errno
        if number != EINTR {
            throw SystemCallError(operation: operation, errorNumber: number)
        }
    }
}
