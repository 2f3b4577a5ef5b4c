import Foundation
import HTTPServer
import HeraldCore
import Intake
import Postgres
import ServiceSupport
import Testing

/// `IntakeConfiguration.fromEnvironment` as plain values: no database, no server.
@Suite struct IntakeConfigurationTests {
    static let base = [
        "HERALD_DATABASE_URL": "postgresql://localhost/herald", "HERALD_ADMIN_TOKEN": "admin-token-0123456789",
        "HERALD_HOST_TOKEN": "host-token-0123456789",
        "HERALD_SIGNING_KEYS": "k1:" + Data(count: 32).base64EncodedString(),
    ]

    static func read(_ extra: [String: String]) throws(ConfigurationError) -> IntakeConfiguration {
        try IntakeConfiguration.fromEnvironment(base.merging(extra) { $1 })
    }

    @Test("HERALD_INTAKE_BATCH_WINDOW_US sets the push writer's batch window, validated to 0-10000")
    func batchWindowSetting() throws {
        #expect(try Self.read([:]).pushBatchWindow == .microseconds(250))
        for (text, window) in [("0", Duration.zero), ("1", .microseconds(1)), ("10000", .milliseconds(10))] {
            #expect(try Self.read(["HERALD_INTAKE_BATCH_WINDOW_US": text]).pushBatchWindow == window)
        }
        for bad in ["-1", "10001", "250us"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try Self.read(["HERALD_INTAKE_BATCH_WINDOW_US": bad]) }
        }
    }

    @Test("HERALD_INTAKE_RECIPIENT_CACHE_SIZE bounds the recipient cache, validated to 0-10000000 (0: none)")
    func recipientCacheSetting() throws {
        #expect(try Self.read([:]).recipientCacheSize == 100_000)
        for (text, size) in [("0", 0), ("1", 1), ("10000000", 10_000_000)] {
            #expect(try Self.read(["HERALD_INTAKE_RECIPIENT_CACHE_SIZE": text]).recipientCacheSize == size)
        }
        for bad in ["-1", "10000001", "1k"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try Self.read(["HERALD_INTAKE_RECIPIENT_CACHE_SIZE": bad])
            }
        }
    }

    @Test("HERALD_INTAKE_METRICS_PORT: 9102 by default, a port number, never the API's port")
    func metricsPortSetting() throws {
        #expect(try Self.read([:]).metricsPort == 9102)
        #expect(try Self.read(["HERALD_INTAKE_METRICS_PORT": "9200"]).metricsPort == 9200)
        // 0 picks a free port for each, so two zeros never meet.
        #expect(try Self.read(["HERALD_INTAKE_PORT": "0", "HERALD_INTAKE_METRICS_PORT": "0"]).metricsPort == 0)
        for bad in ["-1", "65536", "metrics"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try Self.read(["HERALD_INTAKE_METRICS_PORT": bad]) }
        }
        for (api, metrics) in [("8080", "8080"), ("9102", nil)] {
            var environment = ["HERALD_INTAKE_PORT": api]
            environment["HERALD_INTAKE_METRICS_PORT"] = metrics
            #expect {
                try Self.read(environment)
            } throws: { error in
                let error = error as? ConfigurationError
                return error?.variable == "HERALD_INTAKE_METRICS_PORT"
                    && error?.problem.contains("HERALD_INTAKE_PORT") == true
            }
        }
    }

    /// The token values shipped in deploy/ (the env file to copy, the Kubernetes example Secret): a copy applied as
    /// it is must not open the admin or host API with a value anyone can read.
    @Test("every example token shipped in deploy/ is refused as a placeholder, and so is any marked value")
    func placeholderTokens() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var shipped: [String] = []
        for file in ["deploy/herald.env.example", "deploy/k8s/examples/secret.example.yaml"] {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                for variable in ["HERALD_ADMIN_TOKEN", "HERALD_HOST_TOKEN"] {
                    for separator in ["=", ": "] where trimmed.hasPrefix(variable + separator) {
                        shipped.append(String(trimmed.dropFirst(variable.count + separator.count)))
                    }
                }
            }
        }
        #expect(shipped.count == 4, "\(shipped)")
        let marked = ["my-changeme-token-0123456789", "an-EXAMPLE-token-0123456789", "Placeholder-0123456789abc"]
        for variable in [
            "HERALD_ADMIN_TOKEN", "HERALD_HOST_TOKEN", "HERALD_ADMIN_TOKEN_PREVIOUS",
            "HERALD_HOST_TOKEN_PREVIOUS",
        ] {
            for value in shipped + marked {
                #expect {
                    try Self.read([variable: value])
                } throws: { error in
                    let error = error as? ConfigurationError
                    return error?.variable == variable && error?.problem.contains("placeholder") == true
                        && !(error?.description.contains(value) ?? true)
                }
            }
        }
        // A random token of the same shape is fine.
        #expect(try Self.read(["HERALD_ADMIN_TOKEN": "c4a9e1f07b3d52e8a61f0d9b7e2c4a13"]).adminToken.count == 32)
    }

    @Test("HERALD_DB_PREPARED: named statements by default and with 1, unnamed with 0, anything else refused")
    func databasePreparedStatements() throws {
        let defaults = try Self.read([:])
        #expect(defaults.databasePreparedStatements)
        #expect(defaults.connectionOptions("herald-intake").preparedStatements)
        for (text, prepared) in [("0", false), ("1", true)] {
            let read = try Self.read(["HERALD_DB_PREPARED": text])
            #expect(read.databasePreparedStatements == prepared, "HERALD_DB_PREPARED=\(text)")
            // The options of every connection the intake opens (its pool and its notifier's).
            #expect(
                read.connectionOptions("herald-intake").preparedStatements == prepared, "HERALD_DB_PREPARED=\(text)")
        }
        for bad in ["yes", "2", "true"] {
            let error = #expect(throws: ConfigurationError.self, "HERALD_DB_PREPARED=\(bad)") {
                try Self.read(["HERALD_DB_PREPARED": bad])
            }
            #expect(error?.variable == "HERALD_DB_PREPARED")
            #expect(error?.description == "HERALD_DB_PREPARED: must be 0 or 1")
        }
    }

    @Test("HERALD_CONSOLE_IDLE_MINUTES defaults to 30 and is validated to 1-10080")
    func consoleIdleMinutes() throws {
        #expect(try Self.read([:]).consoleIdleMinutes == 30)
        #expect(try Self.read(["HERALD_CONSOLE_IDLE_MINUTES": "5"]).consoleIdleMinutes == 5)
        for bad in ["0", "10081", "30m"] {
            let error = #expect(throws: ConfigurationError.self, "\(bad)") {
                try Self.read(["HERALD_CONSOLE_IDLE_MINUTES": bad])
            }
            #expect(error?.variable == "HERALD_CONSOLE_IDLE_MINUTES")
        }
    }

    @Test("HERALD_NOTIFICATION_CATEGORIES: none by default, a checked list, refused naming the entry, never its text")
    func notificationCategories() throws {
        #expect(try Self.read([:]).rules.notificationCategories == .none)
        #expect(try Self.read(["HERALD_NOTIFICATION_CATEGORIES": ""]).rules.notificationCategories == .none)
        let read = try Self.read(["HERALD_NOTIFICATION_CATEGORIES": "INVITE, reply.quick,Pay_Now-2"])
        #expect(read.rules.notificationCategories.identifiers == ["INVITE", "reply.quick", "Pay_Now-2"])
        for (bad, problem) in [
            ("INVITE,secret word", "entry 2 must be 1-64 of [A-Za-z0-9._-]"),
            ("INVITE,", "entry 2 must be 1-64 of [A-Za-z0-9._-]"),
            (String(repeating: "x", count: 65), "entry 1 must be 1-64 of [A-Za-z0-9._-]"),
            ("INVITE,reply,INVITE", "entry 3 repeats entry 1"),
        ] {
            let error = #expect(throws: ConfigurationError.self, "\(bad)") {
                try Self.read(["HERALD_NOTIFICATION_CATEGORIES": bad])
            }
            #expect(error?.variable == "HERALD_NOTIFICATION_CATEGORIES")
            #expect(error?.problem == problem)
            #expect(error?.description.contains("INVITE") == false && error?.description.contains("secret") == false)
        }
    }

    @Test("HERALD_TRUSTED_PROXIES: none by default, addresses and CIDR blocks, anything else refused")
    func trustedProxies() throws {
        #expect(try Self.read([:]).trustedProxies.isEmpty)
        let read = try Self.read(["HERALD_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7,2001:db8::/32"])
        #expect(read.trustedProxies.map(\.description) == ["10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32"])
        for bad in ["proxy.internal", "10.0.0.0/33", "10.0.0.1,", "10.0.0.0/", "::1/129"] {
            let error = #expect(throws: ConfigurationError.self, "\(bad)") {
                try Self.read(["HERALD_TRUSTED_PROXIES": bad])
            }
            #expect(error?.variable == "HERALD_TRUSTED_PROXIES")
        }
    }
}
