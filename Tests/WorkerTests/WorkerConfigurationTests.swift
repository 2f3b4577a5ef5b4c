import APNs
import FCM
import Foundation
import HeraldTestSupport
import Postgres
import ServiceSupport
import Testing
import Worker

@Suite struct WorkerConfigurationTests {
    let credentials = TestCredentials.shared

    var base: [String: String] {
        [
            "HERALD_DATABASE_URL": "postgresql://localhost/herald",
            "HERALD_APNS_KEY_FILE": credentials.apnsKeyFile, "HERALD_APNS_KEY_ID": "ABCDEFGHIJ",
            "HERALD_APNS_TEAM_ID": "TEAM123456", "HERALD_APNS_TOPIC": "one.based.app",
        ]
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
        #expect(configuration.claimer.leaseSeconds == 30)
        #expect(configuration.claimer.batchSize == 500)
        #expect(configuration.metricsPort == 9090)
        #expect(configuration.apns?.productionURL == "https://api.push.apple.com")
        #expect(configuration.apns?.sandboxURL == "https://api.sandbox.push.apple.com")
        #expect(configuration.fcm == nil)
        #expect(configuration.listener.enabled)
    }

    @Test("the catalog's upstream defaults are the APNs and FCM clients' own")
    func catalogUpstreamDefaultsMatchTheClients() throws {
        let apns = APNsConfiguration(keyFile: "k", keyID: "ABCDEFGHIJ", teamID: "TEAM123456", topic: "t")
        #expect(Settings.apnsURL.text == APNsConfiguration.defaultProductionURL)
        #expect(Settings.apnsSandboxURL.text == APNsConfiguration.defaultSandboxURL)
        #expect(Settings.upstreamConnections.integer == apns.connectionsPerEnvironment)
        #expect(Settings.upstreamTimeout.duration == apns.requestTimeout)
        let fcm = FCMConfiguration(credentialsFile: "c")
        #expect(Settings.fcmURL.text == FCMConfiguration.defaultURL)
        #expect(Settings.upstreamConnections.integer == fcm.connections)
        #expect(Settings.upstreamTimeout.duration == fcm.requestTimeout)
        var environment = base
        environment["HERALD_FCM_CREDENTIALS_FILE"] = credentials.fcmCredentialsFile
        let configuration = try WorkerConfiguration.fromEnvironment(environment)
        #expect(configuration.apns?.requestTimeout == .seconds(10))
        #expect(configuration.fcm?.requestTimeout == .seconds(10))
        #expect(configuration.fcm?.connections == 3)
        #expect(configuration.version == "dev")
    }

    @Test func everySettingIsRead() throws {
        var environment = base
        environment["HERALD_FCM_CREDENTIALS_FILE"] = credentials.fcmCredentialsFile
        environment["HERALD_FCM_URL"] = "https://127.0.0.1:8443/"
        environment["HERALD_LEASE_SECONDS"] = "15"
        environment["HERALD_BATCH_SIZE"] = "300"
        environment["HERALD_MAX_ATTEMPTS"] = "3"
        environment["HERALD_WORKER_LISTEN"] = "0"
        environment["HERALD_POLL_INTERVAL_MS"] = "250"
        environment["HERALD_COMPLETION_INTERVAL_MS"] = "0"
        let configuration = try WorkerConfiguration.fromEnvironment(environment)
        #expect(configuration.fcm?.url == "https://127.0.0.1:8443")
        #expect(configuration.claimer.leaseSeconds == 15)
        #expect(configuration.claimer.batchSize == 300)
        #expect(configuration.retry.maxAttempts == 3)
        #expect(!configuration.listener.enabled)
        #expect(configuration.claimer.pollInterval == .milliseconds(250))
        #expect(configuration.completer.minimumInterval == .zero)
        #expect(try WorkerConfiguration.fromEnvironment(base).completer.minimumInterval == .milliseconds(50))
    }

    @Test func theActivitySweepIsReadAndValidated() throws {
        let defaults = try WorkerConfiguration.fromEnvironment(base)
        #expect(defaults.activitySweeper.enabled)
        #expect(defaults.activitySweeper.interval == .seconds(1))
        #expect(defaults.activitySweeper.batchSize == 500)
        var environment = base
        environment["HERALD_ACTIVITY_SWEEP_ENABLED"] = "0"
        environment["HERALD_ACTIVITY_SWEEP_INTERVAL_MS"] = "250"
        environment["HERALD_ACTIVITY_SWEEP_BATCH"] = "2000"
        let read = try WorkerConfiguration.fromEnvironment(environment)
        #expect(!read.activitySweeper.enabled)
        #expect(read.activitySweeper.interval == .milliseconds(250))
        #expect(read.activitySweeper.batchSize == 2000)
        for (variable, value) in [
            ("HERALD_ACTIVITY_SWEEP_ENABLED", "yes"), ("HERALD_ACTIVITY_SWEEP_INTERVAL_MS", "10"),
            ("HERALD_ACTIVITY_SWEEP_BATCH", "0"),
        ] {
            var bad = base
            bad[variable] = value
            #expect(problem(bad) == variable)
        }
    }

    @Test func theChannelSenderIsReadAndValidated() throws {
        let defaults = try WorkerConfiguration.fromEnvironment(base)
        #expect(defaults.channels.enabled)
        #expect(defaults.channels.environment == .production)
        #expect(defaults.channels.managementURL == nil)
        #expect(defaults.channels.maxInFlight == 64)
        #expect(defaults.channels.pollInterval == .seconds(1))
        var environment = base
        environment["HERALD_CHANNELS_ENABLED"] = "0"
        environment["HERALD_APNS_CHANNEL_ENVIRONMENT"] = "sandbox"
        environment["HERALD_APNS_CHANNEL_URL"] = "https://127.0.0.1:2195/"
        environment["HERALD_CHANNEL_MAX_IN_FLIGHT"] = "8"
        environment["HERALD_CHANNEL_POLL_MS"] = "250"
        let read = try WorkerConfiguration.fromEnvironment(environment)
        #expect(!read.channels.enabled)
        #expect(read.channels.environment == .sandbox)
        #expect(read.channels.managementURL == "https://127.0.0.1:2195")
        #expect(read.channels.maxInFlight == 8)
        #expect(read.channels.pollInterval == .milliseconds(250))
        for (variable, value) in [
            ("HERALD_CHANNELS_ENABLED", "2"), ("HERALD_APNS_CHANNEL_ENVIRONMENT", "development"),
            ("HERALD_APNS_CHANNEL_URL", "https://host/path"),
            ("HERALD_APNS_CHANNEL_URL", "ftp://host"),
            ("HERALD_CHANNEL_MAX_IN_FLIGHT", "0"), ("HERALD_CHANNEL_POLL_MS", "5"),
            ("HERALD_CHANNEL_SWEEP_ENABLED", "yes"), ("HERALD_CHANNEL_SWEEP_SECONDS", "5"),
            ("HERALD_CHANNEL_SWEEP_SECONDS", "86401"), ("HERALD_CHANNEL_SWEEP_MAX_DELETES", "0"),
        ] {
            var bad = base
            bad[variable] = value
            #expect(problem(bad) == variable, "\(variable)=\(value)")
        }
    }

    @Test func theChannelSweepIsReadAndWaitsTwoLeasesBeforeDeleting() throws {
        let defaults = try WorkerConfiguration.fromEnvironment(base)
        #expect(defaults.channels.sweep.enabled)
        #expect(defaults.channels.sweep.interval == .seconds(3_600))
        #expect(defaults.channels.sweep.maxDeletes == 100)
        #expect(defaults.channels.sweep.confirmation == .seconds(defaults.channels.leaseSeconds * 2))
        var environment = base
        environment["HERALD_CHANNEL_SWEEP_ENABLED"] = "0"
        environment["HERALD_CHANNEL_SWEEP_SECONDS"] = "600"
        environment["HERALD_CHANNEL_SWEEP_MAX_DELETES"] = "20"
        environment["HERALD_UPSTREAM_TIMEOUT_MS"] = "20000"
        let read = try WorkerConfiguration.fromEnvironment(environment)
        #expect(!read.channels.sweep.enabled)
        #expect(read.channels.sweep.interval == .seconds(600))
        #expect(read.channels.sweep.maxDeletes == 20)
        // A longer request makes a longer channel lease, and the sweep waits two of them.
        #expect(read.channels.leaseSeconds == 41)
        #expect(read.channels.sweep.confirmation == .seconds(82))
    }

    @Test func anEnvironmentsOwnKeyOverridesTheSharedOneForThatEnvironmentAlone() throws {
        let shared = try #require(try WorkerConfiguration.fromEnvironment(base).apns)
        #expect(shared.sandboxKey == nil && shared.productionKey == nil)
        #expect(shared.key(for: .sandbox) == APNsKey(file: credentials.apnsKeyFile, id: "ABCDEFGHIJ"))
        #expect(shared.key(for: .production) == shared.key(for: .sandbox))

        var environment = base
        environment["HERALD_APNS_SANDBOX_KEY_FILE"] = credentials.apnsKeyFile
        environment["HERALD_APNS_SANDBOX_KEY_ID"] = "SANDBOX001"
        let sandbox = try #require(try WorkerConfiguration.fromEnvironment(environment).apns)
        #expect(sandbox.key(for: .sandbox) == APNsKey(file: credentials.apnsKeyFile, id: "SANDBOX001"))
        #expect(sandbox.key(for: .production) == APNsKey(file: credentials.apnsKeyFile, id: "ABCDEFGHIJ"))

        environment["HERALD_APNS_PRODUCTION_KEY_FILE"] = credentials.apnsKeyFile
        environment["HERALD_APNS_PRODUCTION_KEY_ID"] = "PRODKEY001"
        let both = try #require(try WorkerConfiguration.fromEnvironment(environment).apns)
        #expect(both.key(for: .production).id == "PRODKEY001")
        #expect(both.key(for: .sandbox).id == "SANDBOX001")
        // One provider token per key: the client reads each key file and signs with each.
        let client = try APNsClient(configuration: both)
        _ = try client.providerToken(for: .production).current()
        _ = try client.providerToken(for: .sandbox).current()
        #expect(client.providerTokensIssued == 2)
        #expect(client.providerToken(for: .production) !== client.providerToken(for: .sandbox))
        let sharedClient = try APNsClient(configuration: shared)
        #expect(sharedClient.providerToken(for: .production) === sharedClient.providerToken(for: .sandbox))
    }

    @Test("an environment's key id without its key file, or the reverse, is an error naming the missing one")
    func environmentKeySettingsAreValidated() {
        let cases: [([String: String], String)] = [
            (["HERALD_APNS_SANDBOX_KEY_ID": "SANDBOX001"], "HERALD_APNS_SANDBOX_KEY_FILE"),
            (["HERALD_APNS_PRODUCTION_KEY_ID": "PRODKEY001"], "HERALD_APNS_PRODUCTION_KEY_FILE"),
            (["HERALD_APNS_SANDBOX_KEY_FILE": credentials.apnsKeyFile], "HERALD_APNS_SANDBOX_KEY_ID"),
            (["HERALD_APNS_PRODUCTION_KEY_FILE": credentials.apnsKeyFile], "HERALD_APNS_PRODUCTION_KEY_ID"),
            (
                ["HERALD_APNS_SANDBOX_KEY_FILE": credentials.apnsKeyFile, "HERALD_APNS_SANDBOX_KEY_ID": "short"],
                "HERALD_APNS_SANDBOX_KEY_ID"
            ),
            (
                ["HERALD_APNS_PRODUCTION_KEY_FILE": "/nonexistent.p8", "HERALD_APNS_PRODUCTION_KEY_ID": "PRODKEY001"],
                "HERALD_APNS_PRODUCTION_KEY_FILE"
            ),
            // A file that is no EC P-256 key: named when the client reads it.
            (
                ["HERALD_APNS_SANDBOX_KEY_FILE": credentials.caFile, "HERALD_APNS_SANDBOX_KEY_ID": "SANDBOX001"],
                "HERALD_APNS_SANDBOX_KEY_FILE"
            ),
        ]
        for (extra, variable) in cases {
            let environment = base.merging(extra) { $1 }
            let named: String?
            do {
                let configuration = try WorkerConfiguration.fromEnvironment(environment)
                _ = try WorkerUpstreams.make(configuration)
                named = nil
            } catch {
                named = error.variable
            }
            #expect(named == variable, "\(extra)")
        }
        // Without the shared key an environment's key signs nothing: an error, not a silent APNs-less worker.
        var fcmOnly = base
        fcmOnly["HERALD_APNS_KEY_FILE"] = nil
        fcmOnly["HERALD_FCM_CREDENTIALS_FILE"] = credentials.fcmCredentialsFile
        #expect(problem(fcmOnly) == nil)
        fcmOnly["HERALD_APNS_SANDBOX_KEY_FILE"] = credentials.apnsKeyFile
        #expect(problem(fcmOnly) == "HERALD_APNS_SANDBOX_KEY_FILE")
    }

    @Test func databasePreparedStatementsAreReadAndValidated() throws {
        let defaults = try WorkerConfiguration.fromEnvironment(base)
        #expect(defaults.databasePreparedStatements)
        #expect(defaults.connectionOptions("herald-worker").preparedStatements)
        for (text, prepared) in [("0", false), ("1", true)] {
            let read = try WorkerConfiguration.fromEnvironment(base.merging(["HERALD_DB_PREPARED": text]) { $1 })
            #expect(read.databasePreparedStatements == prepared, "HERALD_DB_PREPARED=\(text)")
            #expect(
                read.connectionOptions("herald-worker").preparedStatements == prepared, "HERALD_DB_PREPARED=\(text)")
        }
        for bad in ["yes", "2", "true"] {
            #expect(problem(base.merging(["HERALD_DB_PREPARED": bad]) { $1 }) == "HERALD_DB_PREPARED", "\(bad)")
        }
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

    @Test func aLeaseMustOutlastOneUpstreamRequest() throws {
        // The default request timeout is 10 s: a 10 s lease could expire while a send is in flight.
        #expect(problem(base.merging(["HERALD_LEASE_SECONDS": "10"]) { $1 }) == "HERALD_LEASE_SECONDS")
        let short = try WorkerConfiguration.fromEnvironment(
            base.merging(["HERALD_LEASE_SECONDS": "2", "HERALD_UPSTREAM_TIMEOUT_MS": "1500"]) { $1 })
        #expect(short.apns?.requestTimeout == .milliseconds(1500))
        #expect(problem(base.merging(["HERALD_UPSTREAM_TIMEOUT_MS": "5"]) { $1 }) == "HERALD_UPSTREAM_TIMEOUT_MS")
    }

    @Test func everyServiceSettingIsValidatedWithItsVariable() {
        #expect(problem(base.merging(["HERALD_WORKER_LISTEN": "2"]) { $1 }) == "HERALD_WORKER_LISTEN")
        #expect(problem(base.merging(["HERALD_CLAIM_SPACING_MS": "5000"]) { $1 }) == "HERALD_CLAIM_SPACING_MS")
        #expect(
            problem(base.merging(["HERALD_COMPLETION_INTERVAL_MS": "5000"]) { $1 }) == "HERALD_COMPLETION_INTERVAL_MS")
        #expect(problem(base.merging(["HERALD_RETRY_MAX_SECONDS": "0"]) { $1 }) == "HERALD_RETRY_MAX_SECONDS")
        #expect(
            problem(base.merging(["HERALD_UPSTREAM_PAUSE_MAX_SECONDS": "0"]) { $1 })
                == "HERALD_UPSTREAM_PAUSE_MAX_SECONDS")
        #expect(problem(base.merging(["HERALD_STATEMENT_TIMEOUT_MS": "1"]) { $1 }) == "HERALD_STATEMENT_TIMEOUT_MS")
        #expect(problem(base.merging(["HERALD_APNS_TEAM_ID": "bad id!!!!"]) { $1 }) == "HERALD_APNS_TEAM_ID")
    }
}
