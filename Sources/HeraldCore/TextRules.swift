/// Characters Herald refuses in text that people see or that names things: control characters
/// (C0, DEL, C1), line and paragraph separators, and bidirectional formatting characters, which
/// could hide text or reorder it around the brand prefix `[displayName]`.
public enum TextRules {
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F: return true
        case 0x2028, 0x2029: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// True when `text` has a forbidden character other than those in `allowed`.
    public static func containsForbidden(_ text: String, allowing allowed: Set<Unicode.Scalar> = []) -> Bool {
        text.unicodeScalars.contains { isForbidden($0) && !allowed.contains($0) }
    }

    /// Forbidden characters or any whitespace (for identifiers, URLs and links).
    public static func containsForbiddenOrWhitespace(_ text: String) -> Bool {
        text.unicodeScalars.contains { isForbidden($0) || $0.properties.isWhitespace }
    }

    /// Newlines and tabs, which a notification body may contain.
    public static let bodyWhitespace: Set<Unicode.Scalar> = ["\n", "\r", "\t"]
}
