import Testing

@testable import Intake

/// The credentials of an Authorization header (RFC 6750's `Bearer` scheme) as Authenticator reads them.
@Suite struct BearerTests {
    @Test(
        "the token after Bearer, in any case, without surrounding whitespace; nothing for another scheme or none",
        arguments: [
            ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER  abc \t", "abc"), (" Bearer abc", "abc"),
            ("Bearer a b", "a b"), ("Bearer  ", ""), ("Bearer", nil), ("Bearer ", nil), ("Basic abc", nil),
            ("Bearerx abc", nil), ("Bearer\tabc", nil), ("", nil), ("   ", nil), ("Béarer abc", nil),
        ] as [(String, String?)])
    func credentials(_ header: String, _ expected: String?) {
        #expect(Authenticator.bearer(authorization: header) == expected)
    }

    @Test func noHeaderHasNoCredentials() {
        #expect(Authenticator.bearer(authorization: nil) == nil)
    }
}
