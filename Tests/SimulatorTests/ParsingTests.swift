import APNs
import Foundation
import HeraldCore
import Testing

@testable import Simulator

/// The pure pieces: the payload scanner, identifiers, command-line parsing.
@Suite("Parsing")
struct ParsingTests {
    @Test(arguments: [
        #"{}"#, #" {"a":1} "#,
        #"{"aps":{"alert":{"title":"é ✓ 😀","body":"a\"b\\c\u00e9\n"}},"n":[1,-2.5e3,0.1,true,false,null]}"#,
        #"{"a":{"b":{"c":[[],{}]}}}"#,
    ])
    func objectsAreObjects(_ text: String) throws {
        #expect(JSONShape.isObject(Array(text.utf8)))
        // The scanner agrees with the full parser.
        #expect(try JSONParser.parse(text).objectMembers != nil)
    }

    @Test(arguments: [
        "", " ", "[]", "1", #""s""#, "{", "}", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1}x"#, #"{a:1}"#,
        #"{"a":01}"#, #"{"a":1.}"#, #"{"a":-}"#, #"{"a":tru}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#, "{\"a\":\"\u{01}\"}",
        #"{"a":[1,]}"#, #"{"a":1 "b":2}"#,
    ])
    func othersAreNot(_ text: String) {
        #expect(!JSONShape.isObject(Array(text.utf8)))
    }

    @Test func invalidUTF8IsRefused() {
        for bad: [UInt8] in [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xE2, 0x82], [0x80]] {
            #expect(!JSONShape.isObject(Array(#"{"a":""#.utf8) + bad + Array(#""}"#.utf8)), "\(bad)")
        }
        #expect(JSONShape.isObject(Array(#"{"a":""#.utf8) + [0xF0, 0x9F, 0x98, 0x80] + Array(#""}"#.utf8)))
    }

    @Test func depthIsBounded() {
        let deep = String(repeating: #"{"a":"#, count: 100) + "1" + String(repeating: "}", count: 100)
        #expect(!JSONShape.isObject(Array(deep.utf8)))
        #expect(JSONShape.isDocument(Array("[1,2]".utf8)))
    }

    @Test func identifiersAreLowercaseVersion4UUIDs() {
        let identifiers = Identifiers()
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = identifiers.uuid()
            #expect(Identifiers.isLowercaseUUID(id))
            #expect(UUID(uuidString: id) != nil)
            #expect(Array(id.utf8)[14] == UInt8(ascii: "4"))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
        #expect(identifiers.hex(bytes: 12).count == 24)
        #expect(!Identifiers.isLowercaseUUID("0190a6e4-8f4c-4cc1-b3a1-2f3b9e0c1d2"))
        #expect(!Identifiers.isLowercaseUUID("0190a6e4-8f4c-4cc1-b3a1-2f3b9e0c1d2ee"))
        #expect(!Identifiers.isLowercaseUUID("0190a6e48f4c-4cc1-b3a1-2f3b9e0c1d2e0"))
    }

    @Test func serveFlags() throws {
        let command = try SimulatorCommand.parse([
            "--host", "0.0.0.0", "--port=0", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--apns-key-file", "a.p8",
            "--fcm-credentials-file", "sa.json", "--record-limit", "10", "--apns-topics", "app.one,app.two-b",
            "--apns-environment", "sandbox", "--apns-key-environment", "SIMKEY0001=production",
            "--apns-key-environment=SANDBOX001=sandbox",
        ])
        guard case .serve(let configuration) = command else {
            Issue.record("expected serve")
            return
        }
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 0)
        #expect(configuration.tlsCertificateFile == "c.pem")
        #expect(configuration.tlsKeyFile == "k.pem")
        #expect(configuration.apnsKeyFile == "a.p8")
        #expect(configuration.fcmCredentialsFile == "sa.json")
        #expect(configuration.fcmAdditionalCredentialsFiles == [])
        #expect(configuration.fcmTokenProject == nil)
        #expect(configuration.recordLimit == 10)
        #expect(configuration.apnsTopics == ["app.one", "app.two-b"])
        #expect(configuration.apnsEnvironment == .sandbox)
        #expect(configuration.apnsKeyEnvironments == ["SIMKEY0001": .production, "SANDBOX001": .sandbox])
        #expect(configuration.transportName == "tls")
        guard case .serve(let defaults) = try SimulatorCommand.parse([]) else { return }
        #expect(defaults.port == 8443)
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.transportName == "h2c")
        #expect(defaults.apnsTopics == nil)
        #expect(defaults.apnsEnvironment == .production)
        #expect(defaults.apnsKeyEnvironments.isEmpty)
    }

    @Test(arguments: [
        ["--port", "70000"], ["--port"], ["--colour", "red"], ["--tls-cert", "c.pem"], ["--record-limit", "-1"],
        ["--port", "1", "--port", "2"], ["mint-apns-jwt", "--key-id", "SIMKEY0001"],
        ["mint-apns-jwt", "--apns-key-file", "f", "--key-id", "SHORT", "--team-id", "SIMTEAM001"], ["serve"],
        ["--apns-topics", ""], ["--apns-topics", "a,,b"], ["--apns-topics", "a b"], ["--apns-topics", "a,a"],
        ["--apns-topics", "a,"], ["--apns-topics"], ["--apns-environment", "development"], ["--apns-environment"],
        ["--apns-key-environment"], ["--apns-key-environment", "SIMKEY0001"],
        ["--apns-key-environment", "SHORT=sandbox"],
        ["--apns-key-environment", "SIMKEY0001=development"], ["--apns-key-environment", "=sandbox"],
        ["--fcm-token-project"], ["--fcm-token-project", ""], ["--fcm-token-project", "a b"],
        ["--fcm-token-project", "a/b"], ["--fcm-token-project", "a", "--fcm-token-project", "b"],
        ["--fcm-credentials-file"], ["--channel-port", "70000"], ["--channel-port", "x"], ["--channel-port", "8443"],
        ["--channel-limit", "0"], ["--channel-limit", "-3"], ["--channel-limit"],
        ["--latency-ms"], ["--latency-ms", ""], ["--latency-ms", "-1"], ["--latency-ms", "60001"],
        ["--latency-ms", "1,60001"], ["--latency-ms", "1.5"], ["--latency-ms", "abc"], ["--latency-ms", "1,2,3"],
        ["--latency-ms", ",5"], ["--latency-ms", "5,"], ["--latency-ms", "+5"], ["--latency-ms", " 5"],
        ["--latency-ms", "5,-1"], ["--latency-ms", "99999999999999999999"], ["--latency-ms", "1", "--latency-ms", "2"],
    ])
    func badFlags(_ arguments: [String]) {
        #expect(throws: UsageError.self) { try SimulatorCommand.parse(arguments) }
    }

    @Test("--fcm-credentials-file may be repeated: the first is the primary account; --fcm-token-project")
    func severalServiceAccounts() throws {
        let command = try SimulatorCommand.parse([
            "--fcm-credentials-file", "a.json", "--fcm-token-project=example.com:herald-sim",
            "--fcm-credentials-file=b.json", "--fcm-credentials-file", "c.json",
        ])
        guard case .serve(let configuration) = command else {
            Issue.record("expected serve")
            return
        }
        #expect(configuration.fcmCredentialsFile == "a.json")
        #expect(configuration.fcmAdditionalCredentialsFiles == ["b.json", "c.json"])
        #expect(configuration.fcmCredentialsFiles == ["a.json", "b.json", "c.json"])
        #expect(configuration.fcmTokenProject == "example.com:herald-sim")
        let message = try #require(
            #expect(throws: UsageError.self) {
                try SimulatorCommand.parse(["--fcm-token-project", "a b"])
            })
        #expect(message.message.hasPrefix("--fcm-token-project: "))
        #expect(SimulatorCommand.usage.contains("--fcm-token-project P"))
        #expect(SimulatorCommand.usage.contains("Repeat it for more accounts"))
    }

    @Test func channelFlags() throws {
        guard
            case .serve(let configuration) = try SimulatorCommand.parse([
                "--port", "0", "--channel-port", "0", "--channel-limit=5",
            ])
        else {
            Issue.record("expected serve")
            return
        }
        #expect(configuration.channelPort == 0)
        #expect(configuration.channelLimit == 5)
        guard case .serve(let defaults) = try SimulatorCommand.parse([]) else { return }
        #expect(defaults.channelPort == nil)
        #expect(defaults.channelLimit == 10_000)
        #expect(SimulatorCommand.usage.contains("--channel-port PORT"))
        #expect(SimulatorCommand.usage.contains("--channel-limit N"))
        #expect(throws: SimulatorError.self) {
            try Simulator(configuration: SimulatorConfiguration(port: 9000, channelPort: 9000))
        }
        #expect(throws: SimulatorError.self) { try Simulator(configuration: SimulatorConfiguration(channelLimit: 0)) }
        #expect(throws: SimulatorError.self) {
            try Simulator(configuration: SimulatorConfiguration(channelPort: 65_536))
        }
    }

    @Test func latencyFlag() throws {
        func latency(_ arguments: [String]) throws -> SimulatorLatency? {
            guard case .serve(let configuration) = try SimulatorCommand.parse(arguments) else { return nil }
            return configuration.latency
        }
        #expect(try latency([]) == SimulatorLatency(milliseconds: 0, jitterMilliseconds: 0))
        #expect(try latency(["--latency-ms", "100"]) == SimulatorLatency(milliseconds: 100))
        #expect(try latency(["--latency-ms=100,20"]) == SimulatorLatency(milliseconds: 100, jitterMilliseconds: 20))
        #expect(try latency(["--latency-ms", "0,0"]) == .zero)
        #expect(
            try latency(["--latency-ms", "60000,60000"])
                == SimulatorLatency(milliseconds: 60_000, jitterMilliseconds: 60_000))
        #expect(try latency(["--latency-ms", "007"]) == SimulatorLatency(milliseconds: 7))
        let error = try #require(
            #expect(throws: UsageError.self) {
                try SimulatorCommand.parse(["--latency-ms", "1,x"])
            })
        #expect(error.message == #"--latency-ms must be N or N,JITTER, whole numbers from 0 to 60000 each (got "1,x")"#)
        #expect(SimulatorCommand.usage.contains("--latency-ms N[,JITTER]"))
        #expect(SimulatorLatency(milliseconds: 5, jitterMilliseconds: 2).description == "5,2")
        #expect(throws: SimulatorError.self) {
            try Simulator(configuration: SimulatorConfiguration(latency: SimulatorLatency(milliseconds: -1)))
        }
        #expect(throws: SimulatorError.self) {
            try Simulator(
                configuration: SimulatorConfiguration(
                    latency: SimulatorLatency(milliseconds: 0, jitterMilliseconds: 60_001)))
        }
    }

    @Test func mintCommand() throws {
        let command = try SimulatorCommand.parse([
            "mint-apns-jwt", "--apns-key-file", "a.p8", "--key-id", "SIMKEY0001", "--team-id", "SIMTEAM001",
        ])
        guard case .mintAPNsJWT(let file, let keyID, let teamID) = command else {
            Issue.record("expected mint")
            return
        }
        #expect([file, keyID, teamID] == ["a.p8", "SIMKEY0001", "SIMTEAM001"])
    }

    @Test func configurationIsValidated() {
        #expect(throws: SimulatorError.self) { try Simulator(configuration: SimulatorConfiguration(port: -1)) }
        #expect(throws: SimulatorError.self) {
            try Simulator(configuration: SimulatorConfiguration(tlsCertificateFile: "c.pem"))
        }
        #expect(throws: SimulatorError.self) {
            try Simulator(configuration: SimulatorConfiguration(apnsKeyFile: "/nonexistent.p8"))
        }
        #expect(throws: SimulatorError.self) {
            try Simulator(configuration: SimulatorConfiguration(fcmCredentialsFile: "/nonexistent.json"))
        }
        #expect(throws: SimulatorError.self) { try Simulator(configuration: SimulatorConfiguration(apnsTopics: [])) }
        #expect(throws: SimulatorError.self) {
            try Simulator(configuration: SimulatorConfiguration(apnsTopics: ["app.a", "app a"]))
        }
    }
}
