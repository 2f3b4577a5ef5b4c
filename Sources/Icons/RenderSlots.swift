import Dispatch

/// How many renders run at once, and how long a caller waits: the one runner of `IconRasterizer` and
/// `MediaTranscoder`. `run` blocks its caller up to twice `budget` (a slot, then the render; see `IconLimits`).
final class RenderSlots: Sendable {
    /// One permit per render that may run at once.
    let permits: DispatchSemaphore
    private let budget: Duration

    init(count: Int, budget: Duration) {
        permits = DispatchSemaphore(value: count)
        self.budget = budget
    }

    /// `work`'s output, run on a thread of its own once a slot is free; `unavailable` when no slot came free (or no
    /// thread could be made) within the budget, `tooSlow` when the work did not end within it (it is cancelled and
    /// keeps its slot until it ends).
    func run<Output: Sendable>(_ work: @escaping RenderJob<Output>.Work) throws(IconError) -> Output {
        let wait = DispatchTimeInterval.nanoseconds(Int(clamping: budget.wholeNanoseconds))
        guard permits.wait(timeout: .now() + wait) == .success else {
            throw .unavailable
        }
        let permits = self.permits
        let job = RenderJob(work: work, ended: { permits.signal() })
        guard job.start() else {
            permits.signal()
            throw .unavailable
        }
        guard let outcome = job.wait(until: .now() + wait) else {
            job.cancellation.cancel()
            throw .tooSlow
        }
        return try outcome.get()
    }
}
