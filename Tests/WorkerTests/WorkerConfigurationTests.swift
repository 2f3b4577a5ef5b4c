import Foundation
import HeraldTestSupport
import ServiceSupport
import Testing
import Worker

@Suite struct WorkerConfigurationTests {
    let credentials = TestCredentials.shared

    var base: [String: String] {
        ["HERALD_DATABASE_URL": "postgresql://localhost/herald",
         "HERALD_APNS_KEY_FILE": credentials.apnsKeyFile, "HERALD_APNS_KEY_ID": "ABCDEFGHIJ",
         "HERALD_APNS_TEAM_ID": "TEAM123456", "HERALD_APNS_TOPIC": "one.based.app"]
    }

    func problem(_ environment: [String: String]) -> String? {
        do {
            _ = try WorkerConfiguration.fromEnvironment(environment)
            return nil
        } catch {
            return error.variable
        }
    }

    @Test func defaultsFollowTheSpec() throws {
        let configuration = try WorkerConfiguration.fromEnvironment(base)
        #expect(configuration.leaseSeconds == 30)
        #expect(configuration.metricsPort == 9090)
        #expect(configuration.apns?.productionURL == "https://api.push.apple.com")
        #expect(configuration.apns?.sandboxURL == "https://api.sandbox.push.apple.com")
        #expect(configuration.fcm == nil)
        #expect(configuration.listen)
    }

    @Test func everySettingIsRead() throws {
        var environment = base
        environment["HERALD_FCM_CREDENTIALS_FILE"] = credentials.fcmCredentialsFile
        environment["HERALD_FCM_URL"] = "https://127.0.0.1:8443/"
        environment["HERALD_LEASE_SECONDS"] = "10"
        environment["HERALD_BATCH_SIZE"] = "500"
        environment["HERALD_MAX_ATTEMPTS"] = "3"
        environment["HERALD_WORKER_LISTEN"] = "0"
        environment["HERALD_POLL_INTERVAL_MS"] = "250"
        let configuration = try WorkerConfiguration.fromEnvironment(environment)
        #expect(configuration.fcm?.url == "https://127.0.0.1:8443")
        #expect(configuration.leaseSeconds == 10)
        #expect(configuration.batchSize == 500)
        #expect(configuration.retry.maxAttempts == 3)
        #expect(!configuration.listen)
        #expect(configuration.pollInterval == .milliseconds(250))
    }

    @Test func errorsNameTheVariable() {
        var environment = base
        environment.removeValue(forKey: "HERALD_DATABASE_URL")
        #expect(problem(environment) == "HERALD_DATABASE_URL")
        #expect(problem(base.merging(["HERALD_APNS_KEY_ID": "short"]) { $1 }) == "HERALD_APNS_KEY_ID")
        #expect(problem(base.merging(["HERALD_APNS_KEY_FILE": "/nonexistent.p8"]) { $1 }) == "HERALD_APNS_KEY_FILE")
        #expect(problem(base.merging(["HERALD_APNS_URL": "ftp://x"]) { $1 }) == "HERALD_APNS_URL")
        #expect(problem(base.merging(["HERALD_LEASE_SECONDS": "0"]) { $1 }) == "HERALD_LEASE_SECONDS")
        #expect(problem(base.merging(["HERALD_BATCH_SIZE": "many"]) { $1 }) == "HERALD_BATCH_SIZE")
        #expect(problem(["HERALD_DATABASE_URL": "x"]) == "HERALD_APNS_KEY_FILE")
    }
}
