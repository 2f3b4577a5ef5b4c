/// Normalisation and validation of the identifiers partners and the host send.
public enum Identifiers {
    /// Lower-cases an email for case-insensitive matching; nil when it is not a plausible address
    /// (one `@`, non-empty parts, no whitespace or control characters, at most 254 bytes).
    public static func normalizedEmail(_ raw: String) -> String? {
        guard !raw.isEmpty, raw.utf8.count <= 254 else { return nil }
        let parts = raw.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, parts[1].contains(".") || parts[1] == "localhost"
        else { return nil }
        guard !TextRules.containsForbiddenOrWhitespace(raw) else { return nil }
        return raw.lowercased()
    }

    /// `0x` + 40 hex digits, lower-cased; nil otherwise.
    public static func normalizedWallet(_ raw: String) -> String? {
        let bytes = Array(raw.utf8)
        guard bytes.count == 42, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "x") || bytes[1] == UInt8(ascii: "X")
        else { return nil }
        for byte in bytes[2...] where !isHexDigit(byte) { return nil }
        return raw.lowercased()
    }

    /// Mini-app ids look like reverse-DNS names: 1-128 of letters, digits, `.`, `_`, `-`.
    public static func isValidMiniAppID(_ raw: String) -> Bool {
        isToken(raw, maxLength: 128, extra: [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-")])
            && raw.first != "." && !raw.contains("..")
    }

    /// Ids the host chooses (users, devices, tenants, activities): 1-128 of letters, digits, `.`, `_`, `-`, `:`.
    public static func isValidExternalID(_ raw: String) -> Bool {
        isToken(raw, maxLength: 128, extra: [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":")])
    }

    /// An Idempotency-Key: 1-255 printable ASCII characters.
    public static func isValidIdempotencyKey(_ raw: String) -> Bool {
        let bytes = raw.utf8
        return !bytes.isEmpty && bytes.count <= 255 && bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    /// APNs device tokens are 64 hex digits (older ones up to 200); lower-cased.
    public static func normalizedAPNsToken(_ raw: String) -> String? {
        let bytes = Array(raw.utf8)
        guard bytes.count >= 64, bytes.count <= 200, bytes.count % 2 == 0, bytes.allSatisfy(isHexDigit) else { return nil }
        return raw.lowercased()
    }

    /// FCM registration tokens: 32-4096 characters of the base64url alphabet plus `:`.
    public static func isValidFCMToken(_ raw: String) -> Bool {
        isToken(raw, maxLength: 4096, extra: [UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":")]) && raw.utf8.count >= 32
    }

    /// A bundle id: 1-155 of letters, digits, `.`, `-`.
    public static func isValidBundleID(_ raw: String) -> Bool {
        isToken(raw, maxLength: 155, extra: [UInt8(ascii: "."), UInt8(ascii: "-")])
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func isToken(_ raw: String, maxLength: Int, extra: Set<UInt8>) -> Bool {
        let bytes = raw.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || extra.contains(byte)
        }
    }
}
