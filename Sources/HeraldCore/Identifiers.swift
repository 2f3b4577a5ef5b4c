import Foundation

/// Normalisation and validation of the identifiers partners and the host send.
public enum Identifiers {
    /// An email in the one form Herald stores and compares: lower-cased, then Unicode NFC, so a
    /// decomposed "e" + U+0301 and a composed "é" are the same address (sql/functions/email_nfc.sql applies
    /// NFC to every stored and every looked-up email too). Swift's `==` already treats the two as
    /// equal, Postgres compares bytes: the bytes must agree. Nil when it is not a plausible
    /// address (one `@`, non-empty parts, a dot in the domain or `localhost`, no whitespace or
    /// control characters, at most 254 characters as sent: Unicode scalars, as JSON Schema
    /// counts them).
    public static func normalizedEmail(_ raw: String) -> String? {
        guard !raw.isEmpty, raw.unicodeScalars.count <= 254 else { return nil }
        // ASCII is its own NFC: the common case skips Foundation's normaliser.
        let normalized =
            raw.utf8.allSatisfy { $0 < 0x80 }
            ? raw.lowercased()
            : raw.precomposedStringWithCanonicalMapping.lowercased().precomposedStringWithCanonicalMapping
        // By scalars, not Characters: "@" or "." followed by a combining mark is one Character
        // that is neither, yet the schema's pattern (and any mail system) sees the "@" or ".".
        let parts = normalized.unicodeScalars.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
            parts[1].contains(".") || String(String.UnicodeScalarView(parts[1])) == "localhost"
        else { return nil }
        // On the address as sent, as the schema's pattern reads it: NFC maps some characters to others (U+2329 to
        // U+3008), which may leave a zero-width joiner between an emoji and a character that is none.
        guard !TextRules.containsForbiddenOrWhitespace(raw) else { return nil }
        return normalized
    }

    /// `0x` + 40 hex digits, lower-cased; nil otherwise.
    public static func normalizedWallet(_ raw: String) -> String? {
        let bytes = Array(raw.utf8)
        guard bytes.count == 42, bytes[0] == UInt8(ascii: "0"),
            bytes[1] == UInt8(ascii: "x") || bytes[1] == UInt8(ascii: "X")
        else { return nil }
        for byte in bytes[2...] where !HexDigit.isDigit(byte) { return nil }
        return raw.lowercased()
    }

    /// Mini-app ids look like reverse-DNS names: 1-128 of letters, digits, `.`, `_`, `-`.
    public static func isValidMiniAppID(_ raw: String) -> Bool {
        isToken(raw, maxLength: 128, extra: [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-")])
            && raw.first != "." && !raw.contains("..")
    }

    /// Ids the host chooses (users, devices, tenants, activities): 1-128 of letters, digits, `.`, `_`, `-`, `:`.
    public static func isValidExternalID(_ raw: String) -> Bool {
        isToken(
            raw, maxLength: 128, extra: [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":")])
    }

    /// An Idempotency-Key: 1-255 printable ASCII characters.
    public static func isValidIdempotencyKey(_ raw: String) -> Bool { isPrintableASCII(raw, maxLength: 255) }

    /// 1 to `maxLength` printable ASCII characters (space to tilde): an Idempotency-Key, a push's collapse key.
    public static func isPrintableASCII(_ raw: String, maxLength: Int) -> Bool {
        let bytes = raw.utf8
        return !bytes.isEmpty && bytes.count <= maxLength && bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    /// APNs device tokens are 64 hex digits (older ones up to 200); lower-cased.
    public static func normalizedAPNsToken(_ raw: String) -> String? {
        let bytes = Array(raw.utf8)
        guard bytes.count >= 64, bytes.count <= 200, bytes.count % 2 == 0, bytes.allSatisfy(HexDigit.isDigit) else {
            return nil
        }
        return raw.lowercased()
    }

    /// FCM registration tokens: 32-4096 characters of the base64url alphabet plus `:`.
    public static func isValidFCMToken(_ raw: String) -> Bool {
        isToken(raw, maxLength: 4096, extra: [UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":")])
            && raw.utf8.count >= 32
    }

    /// A bundle id: 1-155 of letters, digits, `.`, `-`.
    public static func isValidBundleID(_ raw: String) -> Bool {
        isToken(raw, maxLength: 155, extra: [UInt8(ascii: "."), UInt8(ascii: "-")])
    }

    /// A byte of a host name or IPv4 address: letters, digits, `.`, `-`.
    static func isHostByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }

    private static func isToken(_ raw: String, maxLength: Int, extra: Set<UInt8>) -> Bool {
        let bytes = raw.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || extra.contains(byte)
        }
    }
}
