import Foundation

// The two waits of the tests: they poll a condition another thread or process makes true, so a test waits as long
// as that takes and no longer (a fixed sleep is either too short on a loaded machine or too long on an idle one).

/// Waits (polling every `interval`, without holding a thread) until `condition` holds or `timeout` passed; returns
/// whether it held. Generous: the whole suite runs in parallel on two cores. For final states: a waiting task may
/// resume late when the cooperative pool is busy.
public func eventually(
    timeout: Duration = .seconds(20), interval: Duration = .milliseconds(5),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Polls `condition` every `interval` (20 ms), blocking this thread, until it holds; throws naming `what` after
/// `timeout`. Blocking, so a state that lasts only a moment is not missed while a task waits to be resumed.
public func waitFor(
    _ what: String, timeout: Duration = .seconds(20), interval: Duration = .milliseconds(20),
    _ condition: () throws -> Bool
) throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return }
        Thread.sleep(forTimeInterval: interval / .seconds(1))
    }
    if try condition() { return }
    throw TestHTTPClient.Failure(description: "timed out waiting for \(what)")
}
