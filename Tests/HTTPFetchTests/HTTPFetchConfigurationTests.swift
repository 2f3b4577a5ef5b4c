import Foundation
import HTTPFetch
import HeraldTestSupport
import ServiceSupport
import Testing

@Suite("Fetch configuration")
struct HTTPFetchConfigurationTests {
    private func read(_ environment: [String: String]) throws(ConfigurationError) -> HTTPFetchConfiguration {
        try HTTPFetchConfiguration.from(EnvironmentReader(environment: environment))
    }

    private func problem(_ environment: [String: String]) -> ConfigurationError? {
        do {
            _ = try read(environment)
            return nil
        } catch {
            return error
        }
    }

    private func temporaryFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("herald-fetch-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("Defaults: only global addresses, the system CAs, Herald/1")
    func defaults() throws {
        let configuration = try read([:])
        #expect(configuration == HTTPFetchConfiguration())
        #expect(!configuration.allowPrivateAddresses)
        #expect(configuration.extraCAFile == nil)
        #expect(configuration.userAgent == "Herald/1")
    }

    @Test("HERALD_WEBHOOK_ALLOW_PRIVATE is 0 or 1")
    func allowPrivateFlag() throws {
        #expect(try read(["HERALD_WEBHOOK_ALLOW_PRIVATE": "1"]).allowPrivateAddresses)
        #expect(try !read(["HERALD_WEBHOOK_ALLOW_PRIVATE": "0"]).allowPrivateAddresses)
        for bad in ["2", "yes", "true", "-1"] {
            let error = problem(["HERALD_WEBHOOK_ALLOW_PRIVATE": bad])
            #expect(error?.variable == "HERALD_WEBHOOK_ALLOW_PRIVATE", "\(bad)")
        }
    }

    @Test("HERALD_CA_FILE must be a readable file holding a PEM certificate")
    func caFile() throws {
        let good = try read(["HERALD_CA_FILE": TestCredentials.shared.caFile])
        #expect(good.extraCAFile == TestCredentials.shared.caFile)

        let missing = problem(["HERALD_CA_FILE": "/nonexistent/herald-ca.pem"])
        #expect(missing?.variable == "HERALD_CA_FILE")
        #expect(missing?.problem == "names no readable file")

        let notPEM = try temporaryFile("not a certificate\n")
        defer { try? FileManager.default.removeItem(atPath: notPEM) }
        let wrong = problem(["HERALD_CA_FILE": notPEM])
        #expect(wrong?.variable == "HERALD_CA_FILE")
        #expect(wrong?.problem == "holds no PEM certificate")
        // The error names the variable, never the file's content.
        #expect(!(wrong?.description.contains("not a certificate") ?? true))
    }

    @Test("A fetcher refuses a configuration whose CA file is unreadable")
    func fetcherValidates() {
        #expect(throws: ConfigurationError.self) {
            _ = try HTTPFetcher(configuration: HTTPFetchConfiguration(extraCAFile: "/nonexistent/herald-ca.pem"))
        }
    }
}
