import Foundation
import Testing

@testable import HTTPServer

/// Throughput against a trivial handler, measured with wrk. Off by default (it takes seconds and needs `wrk`):
/// `HERALD_HTTP_BENCH=1 swift test -c release --filter HTTPServerTests.BenchmarkTests`.
/// Optional: HERALD_HTTP_BENCH_DISPATCH ("inline", or the number of I/O threads for handler threads; default 2),
/// HERALD_HTTP_BENCH_THREADS (default 2), HERALD_HTTP_BENCH_SLEEP_US (handler blocks, default 0),
/// HERALD_HTTP_BENCH_ARGS (default "-t2 -c64 -d5s").
@Suite("Benchmark", .enabled(if: ProcessInfo.processInfo.environment["HERALD_HTTP_BENCH"] != nil))
struct BenchmarkTests {
    @Test("wrk against a trivial handler")
    func wrkTrivialHandler() throws {
        let environment = ProcessInfo.processInfo.environment
        let threads = Int(environment["HERALD_HTTP_BENCH_THREADS"] ?? "") ?? 2
        let dispatchSetting = environment["HERALD_HTTP_BENCH_DISPATCH"] ?? "2"
        let dispatch: HTTPServerConfiguration.Dispatch =
            dispatchSetting == "inline"
            ? .inline : .handlerThreads(ioThreads: Int(dispatchSetting) ?? 2)
        let sleepMicroseconds = UInt32(environment["HERALD_HTTP_BENCH_SLEEP_US"] ?? "") ?? 0
        let arguments = (environment["HERALD_HTTP_BENCH_ARGS"] ?? "-t2 -c64 -d5s")
            .split(separator: " ").map(String.init)
        let body = Array(#"{"id":"0190a6e4-8f4c-7cc1-b3a1-2f3b9e0c1d2e","status":"accepted"}"#.utf8)
        let server = try HTTPServer(
            configuration: testConfiguration(threadCount: threads, dispatch: dispatch),
            tooLarge: tooLargeResponse
        ) { _ in
            if sleepMicroseconds > 0 {
                usleep(sleepMicroseconds)  // the handler's work the benchmark asked for (HERALD_HTTP_BENCH_SLEEP_US)
            }
            return HTTPResponse(status: 202, headers: [(name: "Content-Type", value: "application/json")], body: body)
        }
        defer { server.stop() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
        process.arguments = arguments + ["http://127.0.0.1:\(server.port)/v1/notifications"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        print(
            """
            HTTPServer benchmark (\(dispatch), threadCount \(threads), handler sleep \(sleepMicroseconds) us, \
            wrk \(arguments.joined(separator: " "))):
            \(text)
            """)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("Requests/sec"))
    }
}
