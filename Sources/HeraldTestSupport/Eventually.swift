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
