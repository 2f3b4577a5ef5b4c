import Foundation
import Synchronization
import Testing

@testable import HTTP2

/// `LoopBound`'s contract is checked by preconditions (a value touched off its loop's thread stops the process); these
/// tests show what the checks rest on: the loop knows its own thread, and a bound value reaches it there.
@Suite struct LoopBoundTests {
    /// Runs `work` on `loop` and waits for its answer.
    func onLoop<Result: Sendable>(_ loop: EventLoop, _ work: @escaping @Sendable () -> Result) throws -> Result {
        let answer = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        #expect(
            loop.execute {
                answer.withLock { $0 = work() }
                done.signal()
            })
        #expect(done.wait(timeout: .now() + 5) == .success)
        return try #require(answer.withLock { $0 })
    }

    @Test func theLoopKnowsItsThreadAndNoOther() throws {
        let loop = try EventLoop(name: "loop-bound-test")
        defer { loop.stop() }
        #expect(!loop.inEventLoop)
        #expect(try onLoop(loop) { loop.inEventLoop })
        let other = try EventLoop(name: "loop-bound-other")
        defer { other.stop() }
        #expect(try onLoop(loop) { other.inEventLoop } == false)
    }

    @Test func aValueBoundOnTheLoopIsReadThereLater() throws {
        let loop = try EventLoop(name: "loop-bound-test")
        defer { loop.stop() }
        let bound = try onLoop(loop) { LoopBound(NSMutableString(string: "made on the loop"), loop: loop) }
        #expect(try onLoop(loop) { String(bound.value) } == "made on the loop")
    }

    @Test func aValueHandedOverFromAnotherThreadIsReadOnTheLoop() throws {
        let loop = try EventLoop(name: "loop-bound-test")
        defer { loop.stop() }
        let read = Mutex<(String, Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        #expect(
            loop.execute(handingOver: NSMutableString(string: "handed over")) { value in
                read.withLock { $0 = (String(value), loop.inEventLoop) }
                done.signal()
            })
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(read.withLock { $0?.0 } == "handed over")
        #expect(read.withLock { $0?.1 } == true)
        // Once the loop is stopped, nothing more is handed over.
        loop.stop()
        #expect(!loop.execute(handingOver: NSMutableString(string: "")) { _ in Issue.record("ran after stop") })
    }
}
