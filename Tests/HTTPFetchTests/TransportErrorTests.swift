import Foundation
import HeraldTestSupport
import Testing

@testable import HTTPFetch

@Suite("Transport errors and trust")
struct TransportErrorTests {
    @Test("A closed port is connect_failed; a name that cannot resolve is dns_failed")
    func connectAndResolve() async throws {
        let fetcher = try makeFetcher(allowPrivate: true)
        defer { fetcher.stop() }
        let closed = await send(fetcher, HTTPFetchRequest(url: "https://127.0.0.1:1/"))
        #expect(failure(closed)?.code == .connectFailed)
        // .invalid never resolves (RFC 6761); the timeout is long enough for a slow resolver to say so.
        let unknown = await send(fetcher, HTTPFetchRequest(url: "https://herald-test.invalid/", timeout: .seconds(60)))
        #expect(failure(unknown)?.code == .dnsFailed)
    }

    @Test(
        "With an extra CA file libcurl is given a private file of the system bundle followed by that file, removed with it"
    )
    func trustBundle() throws {
        let extra = try [UInt8](Data(contentsOf: URL(fileURLWithPath: TestCredentials.shared.caFile)))
        var bundle: TrustBundle? = try TrustBundle(extraCAFile: TestCredentials.shared.caFile)
        let path = bundle!.path
        let text = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(Array(text.suffix(extra.count)) == extra)
        // Debian's bundle, where libcurl was built to look (when the machine has it).
        if let system = FileManager.default.contents(atPath: "/etc/ssl/certs/ca-certificates.crt"), !system.isEmpty {
            #expect(text.count > system.count + extra.count - 1)
            #expect(Array(text.prefix(system.count)) == [UInt8](system))
        }
        bundle = nil
        #expect(!FileManager.default.fileExists(atPath: path))
        _ = bundle
    }
}
