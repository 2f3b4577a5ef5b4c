import Foundation
import HeraldCore
import HeraldCrypto
import Testing

@Suite struct JWTTests {
    let keys = JWTTestKeys.shared
    let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNIn0".utf8)

    // MARK: ES256

    @Test func es256RoundTripProducesRawSixtyFourByteSignatures() throws {
        let key = try ES256SigningKey(pem: keys.ecPrivatePEM)
        let first = try key.sign(message)
        let second = try key.sign(message)
        #expect(first.count == 64)
        #expect(second.count == 64)
        #expect(first != second, "ECDSA signatures are randomized")
        #expect(key.verifyingKey.isValidSignature(first, for: message))
        #expect(key.verifyingKey.isValidSignature(second, for: message))
        #expect(key.verifyingKey.isValidSignature(try key.sign([]), for: []))
    }

    @Test func es256VerifyingKeyReadsPublicAndPrivatePEMs() throws {
        let signature = try ES256SigningKey(pem: keys.ecPrivatePEM).sign(message)
        #expect(try ES256VerifyingKey(pem: keys.ecPublicPEM).isValidSignature(signature, for: message))
        #expect(try ES256VerifyingKey(pem: keys.ecPrivatePEM).isValidSignature(signature, for: message))
    }

    @Test func es256RejectsTamperingWrongKeysAndWrongShapes() throws {
        let key = try ES256SigningKey(pem: keys.ecPrivatePEM)
        let verifier = key.verifyingKey
        let signature = try key.sign(message)
        var tamperedMessage = message
        tamperedMessage[3] ^= 1
        #expect(!verifier.isValidSignature(signature, for: tamperedMessage))
        for index in [0, 31, 32, 63] {
            var tampered = signature
            tampered[index] ^= 0x01
            #expect(!verifier.isValidSignature(tampered, for: message), "byte \(index)")
        }
        #expect(!verifier.isValidSignature(Array(signature.dropLast()), for: message))
        #expect(!verifier.isValidSignature(signature + [0], for: message))
        #expect(!verifier.isValidSignature([], for: message))
        #expect(!verifier.isValidSignature([UInt8](repeating: 0, count: 64), for: message))
        #expect(!verifier.isValidSignature(TestDER.encodeSignature(raw: signature), for: message), "DER is not JWS")
        let other = try ES256SigningKey(pem: keys.otherECPrivatePEM)
        #expect(!other.verifyingKey.isValidSignature(signature, for: message))
        #expect(!verifier.isValidSignature(try other.sign(message), for: message))
    }

    @Test func es256RefusesOtherKeysAndUnreadablePEMs() throws {
        #expect(throws: CryptoError.wrongKeyType) { try ES256SigningKey(pem: keys.p384PrivatePEM) }
        #expect(throws: CryptoError.wrongKeyType) { try ES256SigningKey(pem: keys.rsaPrivatePEM) }
        #expect(throws: CryptoError.wrongKeyType) { try ES256VerifyingKey(pem: keys.rsaPublicPEM) }
        #expect(throws: CryptoError.invalidPEM) { try ES256SigningKey(pem: keys.ecPublicPEM) }
        #expect(throws: CryptoError.invalidPEM) { try ES256SigningKey(pem: "") }
        #expect(throws: CryptoError.invalidPEM) { try ES256SigningKey(pem: "not a key") }
        let truncated = String(keys.ecPrivatePEM.prefix(keys.ecPrivatePEM.count / 2))
        #expect(throws: CryptoError.invalidPEM) { try ES256SigningKey(pem: truncated) }
        // An encrypted key fails at once instead of prompting for a passphrase.
        #expect(throws: CryptoError.invalidPEM) { try ES256SigningKey(pem: keys.encryptedECPrivatePEM) }
        let emptyPublicKey = "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"
        #expect(throws: CryptoError.invalidPEM) { try ES256VerifyingKey(pem: emptyPublicKey) }
    }

    @Test func es256SignaturesVerifyWithTheOpenSSLCLI() throws {
        let cli = OpenSSLCLI(directory: keys.directory)
        let key = try ES256SigningKey(pem: keys.ecPrivatePEM)
        let name = "es256-\(UUID().uuidString)"
        try cli.write("\(name).msg", message)
        for _ in 0..<8 {
            try cli.write("\(name).der", TestDER.encodeSignature(raw: try key.sign(message)))
            let status = try cli.run(
                ["dgst", "-sha256", "-verify", "ec.pub", "-signature", "\(name).der", "\(name).msg"], check: false)
            #expect(status == 0)
        }
        // And a signature of other bytes is refused by the CLI (the check above is not vacuous).
        try cli.write("\(name).der", TestDER.encodeSignature(raw: try key.sign(message + [0x2E])))
        let refused = try cli.run(
            ["dgst", "-sha256", "-verify", "ec.pub", "-signature", "\(name).der", "\(name).msg"],
            check: false)
        #expect(refused != 0)
    }

    @Test func openSSLCLISignaturesVerifyWithES256VerifyingKey() throws {
        let cli = OpenSSLCLI(directory: keys.directory)
        let verifier = try ES256VerifyingKey(pem: keys.ecPublicPEM)
        let name = "cli-es256-\(UUID().uuidString)"
        try cli.write("\(name).msg", message)
        for _ in 0..<8 {
            try cli.run(["dgst", "-sha256", "-sign", "ec.pem", "-out", "\(name).der", "\(name).msg"])
            let raw = try #require(TestDER.decodeSignature(der: try cli.readBytes("\(name).der")))
            #expect(verifier.isValidSignature(raw, for: message))
            #expect(!verifier.isValidSignature(raw, for: Array(message.dropLast())))
        }
    }

    @Test func es256KeyIsSafeToShareAcrossThreads() async throws {
        let key = try ES256SigningKey(pem: keys.ecPrivatePEM)
        let message = self.message
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let input = message + Array("\(index)".utf8)
                    return key.verifyingKey.isValidSignature(try key.sign(input), for: input)
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0 })
    }

    // MARK: RS256

    @Test func rs256RoundTripAndRejections() throws {
        let key = try RS256SigningKey(pem: keys.rsaPrivatePEM)
        let signature = try key.sign(message)
        #expect(signature.count == 256)
        #expect(try key.sign(message) == signature, "PKCS#1 v1.5 is deterministic")
        #expect(key.verifyingKey.isValidSignature(signature, for: message))
        #expect(try RS256VerifyingKey(pem: keys.rsaPublicPEM).isValidSignature(signature, for: message))
        #expect(try RS256VerifyingKey(pem: keys.rsaPrivatePEM).isValidSignature(signature, for: message))
        #expect(!key.verifyingKey.isValidSignature(signature, for: message + [0]))
        var tampered = signature
        tampered[100] ^= 0x40
        #expect(!key.verifyingKey.isValidSignature(tampered, for: message))
        #expect(!key.verifyingKey.isValidSignature([], for: message))
        #expect(!key.verifyingKey.isValidSignature(Array(signature.dropFirst()), for: message))
        let other = try RS256SigningKey(pem: keys.otherRSAPrivatePEM)
        #expect(!other.verifyingKey.isValidSignature(signature, for: message))
    }

    @Test func rs256RefusesOtherKeys() {
        #expect(throws: CryptoError.weakKey) { try RS256SigningKey(pem: keys.rsa1024PrivatePEM) }
        #expect(throws: CryptoError.wrongKeyType) { try RS256SigningKey(pem: keys.ecPrivatePEM) }
        #expect(throws: CryptoError.wrongKeyType) { try RS256VerifyingKey(pem: keys.ecPublicPEM) }
        #expect(throws: CryptoError.invalidPEM) { try RS256SigningKey(pem: keys.rsaPublicPEM) }
        #expect(throws: CryptoError.invalidPEM) { try RS256VerifyingKey(pem: "garbage") }
    }

    @Test func rs256MatchesTheOpenSSLCLIByteForByte() throws {
        let cli = OpenSSLCLI(directory: keys.directory)
        let name = "rs256-\(UUID().uuidString)"
        try cli.write("\(name).msg", message)
        try cli.run(["dgst", "-sha256", "-sign", "rsa.pem", "-out", "\(name).sig", "\(name).msg"])
        let cliSignature = try cli.readBytes("\(name).sig")
        let key = try RS256SigningKey(pem: keys.rsaPrivatePEM)
        #expect(try key.sign(message) == cliSignature)
        #expect(try RS256VerifyingKey(pem: keys.rsaPublicPEM).isValidSignature(cliSignature, for: message))
        try cli.write("\(name).ours", try key.sign(message))
        let status = try cli.run(
            ["dgst", "-sha256", "-verify", "rsa.pub", "-signature", "\(name).ours", "\(name).msg"],
            check: false)
        #expect(status == 0)
    }
}
