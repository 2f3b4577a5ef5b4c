import Foundation
import HeraldCrypto
import Testing

@testable import HeraldCore

/// Runs `body` and checks that it throws a `HeraldError` with exactly this status, code and field.
/// Returns the error so a test can look at its message.
@discardableResult
func expectHeraldError(
    status: Int, code: String, field: String?,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws(HeraldError) -> Void
) -> HeraldError? {
    do {
        try body()
    } catch {
        #expect(error.status == status, "status", sourceLocation: sourceLocation)
        #expect(error.code == code, "code", sourceLocation: sourceLocation)
        #expect(error.field == field, "field", sourceLocation: sourceLocation)
        return error
    }
    Issue.record(
        "expected HeraldError \(status) \(code) (field \(field ?? "nil")) but nothing was thrown",
        sourceLocation: sourceLocation)
    return nil
}

/// The error `body` throws, or nil.
func heraldError(_ body: () throws(HeraldError) -> Void) -> HeraldError? {
    do { try body() } catch { return error }
    return nil
}

/// Parses JSON text, failing the test (by throwing) when it is not valid.
func json(_ text: String) throws -> JSONValue {
    try JSONParser.parse(text)
}

/// Bytes as a String (the writer's output is always valid UTF-8).
func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
}

/// Lowercase hex of bytes, written here rather than borrowed from HeraldCrypto so that
/// known-answer tests do not depend on the code under test.
func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { byte in
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte / 16)], digits[Int(byte % 16)]])
    }.joined()
}

func bytes(fromHex hex: String) -> [UInt8] {
    let chars = Array(hex.utf8)
    return stride(from: 0, to: chars.count, by: 2).map { index in
        UInt8(String(decoding: chars[index..<index + 2], as: UTF8.self), radix: 16)!
    }
}

enum Fixtures {
    /// A fixed "now": 2026-06-01T00:00:00Z, a whole second so ISO-8601 round trips are exact.
    static let now = Date(timeIntervalSince1970: 1_780_272_000)

    static let miniAppID = "fun.pull.gacha"

    /// HERALD_PUBLIC_URL of the fixtures' intake.
    static let publicURL = "https://herald.example"

    static func partner(
        displayName: String = "Gacha", iconPath: String? = "/icons/fun.pull.gacha/256.png",
        sound: NotificationSound = .systemDefault, allowTimeSensitive: Bool = false
    )
        -> PartnerProfile
    {
        PartnerProfile(
            id: UUID(uuidString: "0190a6b2-7c1e-7abc-8def-0123456789ab")!, miniAppID: miniAppID,
            displayName: displayName, tenantID: "tenant-1", iconPath: iconPath,
            rateLimitPerMinute: 60, rateLimitPerDay: 10_000, sound: sound, allowTimeSensitive: allowTimeSensitive)
    }

    static let signingKey: [UInt8] = Array("herald-test-signing-key-0123456789".utf8)
    static let signer = HMACSigner(keyID: "k2026", key: signingKey)

    /// A validated request built from the given members on top of a minimal valid body; a `category` is validated
    /// against rules that list it.
    static func request(
        title: String = "Deposit pending", body: String? = "Confirmations: 1/6",
        deepLink: String? = nil, data: [(String, String)] = [], interruptionLevel: String? = nil,
        category: String? = nil
    ) throws -> PushRequest {
        var members: [(key: String, value: JSONValue)] = [
            ("recipients", .object([("emails", .array([.string("alice@example.com")]))])),
            ("title", .string(title)),
        ]
        if let body { members.append(("body", .string(body))) }
        if let deepLink { members.append(("deepLink", .string(deepLink))) }
        if !data.isEmpty { members.append(("data", .object(data.map { ($0.0, JSONValue.string($0.1)) }))) }
        if let interruptionLevel { members.append(("interruptionLevel", .string(interruptionLevel))) }
        var rules = PushRules()
        if let category {
            members.append(("category", .string(category)))
            rules.notificationCategories = try NotificationCategories(parsing: category)
        }
        return try PushRequestValidator.validate(.object(members), miniAppID: miniAppID, rules: rules, now: now)
    }
}

extension PushContent {
    /// The fixtures' content, as the intake at `Fixtures.publicURL` renders it.
    init(request: PushRequest, partner: PartnerProfile) {
        self.init(request: request, partner: partner, publicURL: Fixtures.publicURL)
    }
}

extension Fixtures {
    /// The host's userId the fixtures' deliveries go to.
    static let recipient = "user-alice"
    /// The fixtures' pushes expire a day after `now`.
    static let expiresAt = now.addingTimeInterval(86_400)
}

extension PushTemplate {
    /// The fixtures' template: expiring at `Fixtures.expiresAt`.
    init(_ content: PushContent, signer: any PayloadSigner) {
        self.init(content, expiresAt: Fixtures.expiresAt, signer: signer)
    }

    /// Both payloads of a delivery to `Fixtures.recipient`.
    func render(deliveryID: UUID) -> RenderedPush {
        render(deliveryID: deliveryID, recipient: Fixtures.recipient)
    }

    func render(deliveryID: UUID, for service: PushService) -> [UInt8] {
        render(deliveryID: deliveryID, recipient: Fixtures.recipient, for: service)
    }
}

extension PushPayload {
    /// A delivery to `Fixtures.recipient`, expiring at `Fixtures.expiresAt`, rendered whole.
    static func renderWhole(_ content: PushContent, deliveryID: UUID, signer: any PayloadSigner) -> RenderedPush {
        renderWhole(
            content, deliveryID: deliveryID, recipient: Fixtures.recipient,
            expiresAt: Int(Fixtures.expiresAt.timeIntervalSince1970), signer: signer)
    }
}
