import Foundation
import HeraldCore
import HeraldCrypto
import Testing

@Suite struct JWTCompactTests {
    let keys = JWTTestKeys.shared
    let header: JSONValue = .object([("alg", .string("ES256")), ("kid", .string("ABC123DEFG"))])
    let claims: JSONValue = .object([("iss", .string("DEF123GHIJ")), ("iat", .number(1_700_000_000))])

    @Test func encodeWritesThreeBase64URLPartsOverCompactJSON() throws {
        let token = try JSONWebToken.encode(header: header, claims: claims) { _ throws(CryptoError) in [1, 2, 3, 0xFF] }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        #expect(parts[0] == "eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ")
        #expect(
            Base64URL.decode(parts[1]).map { String(decoding: $0, as: UTF8.self) }
                == #"{"iss":"DEF123GHIJ","iat":1700000000}"#)
        #expect(parts[2] == "AQID_w")
        #expect(!token.contains("="))
    }

    @Test func encodeSignsExactlyTheSigningInput() throws {
        let seen = Mutable<[UInt8]>([])
        let token = try JSONWebToken.encode(header: header, claims: claims) { input throws(CryptoError) in
            seen.value = input
            return [0]
        }
        #expect(String(decoding: seen.value, as: UTF8.self) + ".AA" == token)
    }

    @Test func encodePropagatesSigningErrors() {
        #expect(throws: CryptoError.signFailed) {
            try JSONWebToken.encode(header: header, claims: claims) { _ throws(CryptoError) in throw .signFailed }
        }
    }

    @Test func es256TokenDecodesAndVerifies() throws {
        let key = try ES256SigningKey(pem: keys.ecPrivatePEM)
        let token = try JSONWebToken.encode(header: header, claims: claims, sign: key.sign)
        let decoded = try #require(JSONWebToken.decode(token))
        #expect(decoded.header == header)
        #expect(decoded.claims == claims)
        #expect(decoded.algorithm == "ES256")
        #expect(decoded.signature.count == 64)
        let firstTwoParts = token.split(separator: ".")[0...1].joined(separator: ".")
        #expect(String(decoding: decoded.signingInput, as: UTF8.self) == firstTwoParts)
        let verifier = try ES256VerifyingKey(pem: keys.ecPublicPEM)
        #expect(verifier.isValidSignature(decoded.signature, for: decoded.signingInput))
        let other = try ES256VerifyingKey(pem: keys.otherECPrivatePEM)
        #expect(!other.isValidSignature(decoded.signature, for: decoded.signingInput))
    }

    @Test func rs256TokenDecodesAndVerifies() throws {
        let key = try RS256SigningKey(pem: keys.rsaPrivatePEM)
        let header: JSONValue = .object([("alg", .string("RS256")), ("typ", .string("JWT"))])
        let token = try JSONWebToken.encode(header: header, claims: claims, sign: key.sign)
        let decoded = try #require(JSONWebToken.decode(token))
        #expect(decoded.algorithm == "RS256")
        #expect(key.verifyingKey.isValidSignature(decoded.signature, for: decoded.signingInput))
    }

    @Test func tamperedClaimsNoLongerVerify() throws {
        let key = try ES256SigningKey(pem: keys.ecPrivatePEM)
        let token = try JSONWebToken.encode(header: header, claims: claims, sign: key.sign)
        let parts = token.split(separator: ".").map(String.init)
        let forgedClaims = Base64URL.encode(Array(#"{"iss":"DEF123GHIJ","iat":1800000000}"#.utf8))
        let forged = try #require(JSONWebToken.decode([parts[0], forgedClaims, parts[2]].joined(separator: ".")))
        #expect(forged.claims["iat"]?.numberValue == 1_800_000_000)
        #expect(!key.verifyingKey.isValidSignature(forged.signature, for: forged.signingInput))
    }

    static let objectPart = Base64URL.encode(Array(#"{"a":1}"#.utf8))

    @Test(arguments: [
        "", ".", "..", "a.b", "a.b.c.d",
        "\(objectPart).\(objectPart)",
        "\(objectPart).\(objectPart).",  // empty signature
        "\(objectPart).\(objectPart).AQID.",  // four parts
        "\(objectPart)=.\(objectPart).AQID",  // padding
        "\(objectPart).\(objectPart).AQ+D",  // standard-alphabet character
        "\(objectPart).\(objectPart).AQIDB",  // impossible length
        "\(Base64URL.encode(Array("[1]".utf8))).\(objectPart).AQID",  // header not an object
        "\(objectPart).\(Base64URL.encode(Array("\"x\"".utf8))).AQID",  // claims not an object
        "\(Base64URL.encode(Array("{nope".utf8))).\(objectPart).AQID",  // not JSON
        " \(objectPart).\(objectPart).AQID",
    ])
    func decodeRejectsMalformedTokens(_ token: String) {
        #expect(JSONWebToken.decode(token) == nil)
    }

    @Test func decodeAcceptsAWellFormedToken() throws {
        let token = try #require(JSONWebToken.decode("\(Self.objectPart).\(Self.objectPart).AQID"))
        #expect(token.signature == [1, 2, 3])
        #expect(token.claims["a"]?.numberValue == 1)
        #expect(token.algorithm == nil)
    }
}

/// A box a non-escaping closure can write into.
private final class Mutable<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}
