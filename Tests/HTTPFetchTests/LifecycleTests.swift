import Foundation
import HTTP2
import HTTPFetch
import HeraldTestSupport
import Testing

@Suite("Concurrency and stop")
struct LifecycleTests {
    @Test("Many concurrent start calls all complete, each with its own answer")
    func manyConcurrent() async throws {
        let server = try startServer()
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let count = 200
        let results = await withTaskGroup(of: (Int, Result<HTTPFetchResponse, HTTPFetchError>).self) { group in
            for index in 0..<count {
                group.addTask {
                    (
                        index,
                        await send(
                            fetcher,
                            HTTPFetchRequest(
                                method: .post, url: url(server, "/n/\(index)"), body: Array("\(index)".utf8),
                                timeout: .seconds(60)))
                    )
                }
            }
            var results: [Int: Result<HTTPFetchResponse, HTTPFetchError>] = [:]
            for await (index, result) in group {
                results[index] = result
            }
            return results
        }
        #expect(results.count == count)
        for index in 0..<count {
            let answer = results[index].flatMap(response)
            #expect(answer?.status == 200, "\(index): \(String(describing: results[index]))")
            #expect(answer?.body == Array("\(index)".utf8))
            #expect(answer?.header("x-path") == "/n/\(index)")
        }
    }

    @Test("stop() fails what is in flight with stopped, returns, and may be called again; later requests fail at once")
    func stopInFlight() async throws {
        let held = ResponderStore()
        let server = try startServer(handler: ClosureHandler { _, responder in held.keep(responder) })
        defer { server.stop() }
        let fetcher = try makeFetcher()

        let outcomes = Locked<[HTTPFetchError.Code?]>([])
        // A timeout far past the test's own wait: on a loaded machine this task may resume minutes after the server
        // holds every request (the cooperative pool is as wide as the machine's cores and other suites' tests block
        // on it), and a request must still be in flight when stop() runs.
        for index in 0..<5 {
            fetcher.start(HTTPFetchRequest(url: url(server, "/held/\(index)"), timeout: .seconds(3_600))) { result in
                outcomes.update { $0.append(failure(result)?.code) }
            }
        }
        #expect(await eventually { held.count == 5 })
        fetcher.stop()
        // Every completion ran before stop() returned.
        #expect(outcomes.current == [HTTPFetchError.Code?](repeating: .stopped, count: 5))
        fetcher.stop()

        let late = Locked<HTTPFetchError.Code?>(nil)
        fetcher.start(HTTPFetchRequest(url: url(server, "/late"))) { result in
            late.update { $0 = failure(result)?.code }
        }
        #expect(late.current == .stopped)
        #expect(throws: HTTPFetchError(.stopped, "the fetcher was stopped")) {
            try fetcher.fetch(HTTPFetchRequest(url: url(server, "/late")))
        }
    }

    @Test("A blocking fetch from inside a completion is refused instead of deadlocking")
    func fetchFromCompletion() async throws {
        let server = try startServer()
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let nested = await withCheckedContinuation { continuation in
            fetcher.start(HTTPFetchRequest(url: url(server, "/outer"))) { _ in
                do throws(HTTPFetchError) {
                    _ = try fetcher.fetch(HTTPFetchRequest(url: url(server, "/inner")))
                    continuation.resume(returning: nil as HTTPFetchError.Code?)
                } catch {
                    continuation.resume(returning: error.code)
                }
            }
        }
        #expect(nested == .invalidRequest)
    }
}
