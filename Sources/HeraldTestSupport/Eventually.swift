import Foundation

/// Waits (polling) until `condition` holds or `timeout` passed; returns whether it held. Generous: the whole
/// suite runs in parallel on two cores.
public func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// Polls `condition` every 20 ms, blocking this thread, until it holds; throws naming `what` after `timeout`.
public func waitFor(_ what: String, timeout: Duration = .seconds(20), _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return }
        Thread.sleep(forTimeInterval: 0.02)
    }
    if try condition() { return }
    throw TestHTTPClient.Failure(description: "timed out waiting for \(what)")
}
