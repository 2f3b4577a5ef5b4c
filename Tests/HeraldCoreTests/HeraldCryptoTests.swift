import Foundation
import HeraldCrypto
import Testing

@Suite struct HeraldCryptoTests {
    static func isLowercaseHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    // MARK: Partner API keys

    @Test func generatedKeysHaveTheSpecFormat() throws {
        let key = try PartnerAPIKey.generate()
        #expect(key.hasPrefix("mp_"))
        #expect(key.utf8.count == 35)
        #expect(Self.isLowercaseHex(key.dropFirst(3)))
        #expect(PartnerAPIKey.isWellFormed(key))
    }

    @Test func thousandGeneratedKeysAreDistinctAndWellFormed() throws {
        var keys = Set<String>()
        for _ in 0..<1000 {
            let key = try PartnerAPIKey.generate()
            #expect(PartnerAPIKey.isWellFormed(key))
            keys.insert(key)
        }
        #expect(keys.count == 1000)
        // 128 random bits: every hex digit shows up somewhere, in every position across 1,000 keys.
        for position in 3..<35 {
            let digits = Set(keys.map { Array($0.utf8)[position] })
            #expect(digits.count == 16, "position \(position)")
        }
    }

    static let hex32 = "0123456789abcdef0123456789abcdef"

    static let malformedKeys: [String] = {
        let short: String = String(hex32.dropLast())
        var list: [String] = ["", "mp_", "mp_" + short]
        list.append("mp_" + hex32 + "0")
        list.append("MP_" + hex32)
        list.append("mq_" + hex32)
        list.append("mp-" + hex32)
        list.append("mp_" + hex32.uppercased())
        list.append("mp_" + short + "g")
        list.append("mp_" + short + " ")
        list.append(" mp_" + short)
        list.append("mp_" + String(hex32.dropLast(2)) + "é")  // 35 bytes, not hex
        list.append("Bearer mp_" + hex32)
        list.append(hex32 + "abc")
        list.append("mp_" + short + "\n")
        return list
    }()

    @Test(arguments: malformedKeys)
    func rejectsMalformedKeys(_ key: String) {
        #expect(!PartnerAPIKey.isWellFormed(key))
    }

    @Test func acceptsWellFormedKeys() {
        #expect(PartnerAPIKey.isWellFormed("mp_" + Self.hex32))
        #expect(PartnerAPIKey.isWellFormed("mp_" + String(repeating: "0", count: 32)))
        #expect(PartnerAPIKey.isWellFormed("mp_" + String(repeating: "f", count: 32)))
    }

    @Test func hashIsSHA256HexOfTheKey() throws {
        #expect(PartnerAPIKey.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let key = try PartnerAPIKey.generate()
        let hash = PartnerAPIKey.hash(key)
        #expect(hash.utf8.count == 64 && Self.isLowercaseHex(Substring(hash)))
        #expect(hash == hexString(Digest.sha256(Array(key.utf8))))
        #expect(PartnerAPIKey.hash(key) == hash)
        #expect(PartnerAPIKey.hash(try PartnerAPIKey.generate()) != hash)
        #expect(!hash.contains(key.dropFirst(3)))
    }

    // MARK: Random bytes

    @Test func secureRandomReturnsTheRequestedCountAndVaries() throws {
        #expect(try SecureRandom.bytes(0).isEmpty)
        let a = try SecureRandom.bytes(32)
        let b = try SecureRandom.bytes(32)
        #expect(a.count == 32 && b.count == 32)
        #expect(a != b)
        #expect(try SecureRandom.bytes(1000).count == 1000)
    }

    // MARK: Base64URL

    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func base64URLMatchesRFC4648VectorsWithoutPadding(_ plain: String, _ encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func base64URLUsesTheURLAlphabet() {
        // Standard base64 of these bytes is "+/8", "++++" and "////": the URL form uses - and _ instead.
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode([0xFB, 0xEF, 0xBE]) == "----")
        #expect(Base64URL.encode([0xFF, 0xFF, 0xFF]) == "____")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("____") == [0xFF, 0xFF, 0xFF])
    }

    @Test func base64URLRoundTripsEveryLength() throws {
        for length in 0...100 {
            let data = try SecureRandom.bytes(length)
            let encoded = Base64URL.encode(data)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(encoded.count == (length * 4 + 2) / 3)
            #expect(Base64URL.decode(encoded) == data, "length \(length)")
        }
    }

    @Test(arguments: ["a", "abcde", "!!!!", "ab$d", "a=bc"])
    func base64URLRejectsGarbage(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    // MARK: Digest helpers

    @Test func hexIsLowercaseTwoDigitsPerByte() {
        #expect(Digest.hex([]) == "")
        #expect(Digest.hex([0x00, 0x01, 0x0A, 0xAB, 0xFF]) == "00010aabff")
        let all = (0...255).map { UInt8($0) }
        #expect(Digest.hex(all) == hexString(all))
    }

    @Test func constantTimeEqualsComparesContents() {
        let a: [UInt8] = Array("secret-token-value".utf8)
        #expect(Digest.constantTimeEquals(a, a))
        #expect(Digest.constantTimeEquals(a, Array("secret-token-value".utf8)))
        #expect(Digest.constantTimeEquals([], []))
        #expect(!Digest.constantTimeEquals(a, Array(a.dropLast())))
        #expect(!Digest.constantTimeEquals(a, a + [0]))
        #expect(!Digest.constantTimeEquals([], [0]))
        for index in a.indices {
            for bit in 0..<8 {
                var b = a
                b[index] ^= UInt8(1 << bit)
                #expect(!Digest.constantTimeEquals(a, b), "byte \(index) bit \(bit)")
            }
        }
    }

    // MARK: Webhook signatures

    @Test("a webhook header carries one v1= per valid secret, the new secret's first; any of them verifies")
    func webhookHeaderDuringAnOverlap() {
        let body = Array(#"{"type":"push.completed"}"#.utf8)
        let (new, old, timestamp) = ("whsec_new", "whsec_old", 1_796_233_197)
        func v1(_ secret: String) -> String {
            Digest.hex(Digest.hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + body))
        }
        let overlapping = WebhookSignature.header(secret: new, previousSecret: old, timestamp: timestamp, body: body)
        #expect(overlapping == "t=\(timestamp),v1=\(v1(new)),v1=\(v1(old))")
        for secret in [new, old] {
            #expect(WebhookSignature.verify(header: overlapping, secret: secret, body: body, now: timestamp + 60))
        }
        #expect(!WebhookSignature.verify(header: overlapping, secret: "whsec_other", body: body, now: timestamp))
        #expect(!WebhookSignature.verify(header: overlapping, secret: old, body: body + [0x20], now: timestamp))
        let single = WebhookSignature.header(secret: new, timestamp: timestamp, body: body)
        #expect(single == "t=\(timestamp),v1=\(v1(new))")
        #expect(!WebhookSignature.verify(header: single, secret: old, body: body, now: timestamp))
    }
}
