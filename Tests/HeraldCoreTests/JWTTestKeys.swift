import Foundation
import HeraldTestSupport
import Testing

/// Keys made with the `openssl` CLI in a temporary directory, once per test process, so the
/// JWT tests check HeraldCrypto against an independent implementation.
struct JWTTestKeys: Sendable {
    let directory: URL
    let ecPrivatePEM: String
    let ecPublicPEM: String
    let otherECPrivatePEM: String
    let p384PrivatePEM: String
    let rsaPrivatePEM: String
    let rsaPublicPEM: String
    let otherRSAPrivatePEM: String
    let rsa1024PrivatePEM: String
    let encryptedECPrivatePEM: String

    static let shared: JWTTestKeys = {
        do { return try JWTTestKeys() } catch { fatalError("could not make test keys with openssl: \(error)") }
    }()

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-jwt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cli = OpenSSLCLI(directory: directory)
        try cli.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem"])
        try cli.run(["pkey", "-in", "ec.pem", "-pubout", "-out", "ec.pub"])
        try cli.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec2.pem"])
        try cli.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "p384.pem"])
        try cli.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "rsa.pem"])
        try cli.run(["pkey", "-in", "rsa.pem", "-pubout", "-out", "rsa.pub"])
        try cli.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "rsa2.pem"])
        try cli.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "rsa1024.pem"])
        try cli.run(["pkcs8", "-topk8", "-in", "ec.pem", "-passout", "pass:secret", "-out", "ec-encrypted.pem"])
        ecPrivatePEM = try cli.read("ec.pem")
        ecPublicPEM = try cli.read("ec.pub")
        otherECPrivatePEM = try cli.read("ec2.pem")
        p384PrivatePEM = try cli.read("p384.pem")
        rsaPrivatePEM = try cli.read("rsa.pem")
        rsaPublicPEM = try cli.read("rsa.pub")
        otherRSAPrivatePEM = try cli.read("rsa2.pem")
        rsa1024PrivatePEM = try cli.read("rsa1024.pem")
        encryptedECPrivatePEM = try cli.read("ec-encrypted.pem")
    }
}

/// Runs `openssl` in a working directory.
struct OpenSSLCLI: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL

    /// Runs `openssl arguments...`; returns its exit status (and throws when `check` and it failed).
    @discardableResult
    func run(_ arguments: [String], check: Bool = true) throws -> Int32 {
        // Through sh for the working directory (posix_spawn has no portable chdir; see SpawnedProcess for
        // why not Foundation's Process).
        let process = try SpawnedProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", #"cd "$0" && exec /usr/bin/openssl "$@""#, directory.path] + arguments,
            environment: ProcessInfo.processInfo.environment, output: URL(fileURLWithPath: "/dev/null"))
        process.waitUntilExit()
        if check, process.terminationStatus != 0 {
            throw Failure(description: "openssl \(arguments.first ?? "") exited \(process.terminationStatus)")
        }
        return process.terminationStatus
    }

    func read(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    func readBytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }
}

/// A minimal DER codec for ECDSA-Sig-Value (SEQUENCE of two INTEGERs), written independently of
/// HeraldCrypto's so the CLI cross-checks do not trust the code under test.
enum TestDER {
    static func encodeSignature(raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    static func decodeSignature(der: [UInt8]) -> [UInt8]? {
        guard der.count > 2, der[0] == 0x30, Int(der[1]) == der.count - 2 else { return nil }
        var index = 2
        var out: [UInt8] = []
        for _ in 0..<2 {
            guard index + 2 <= der.count, der[index] == 0x02 else { return nil }
            let length = Int(der[index + 1])
            guard index + 2 + length <= der.count else { return nil }
            let value = Array(der[(index + 2)..<(index + 2 + length)].drop { $0 == 0 })
            guard value.count <= 32 else { return nil }
            out += [UInt8](repeating: 0, count: 32 - value.count) + value
            index += 2 + length
        }
        return index == der.count ? out : nil
    }
}
