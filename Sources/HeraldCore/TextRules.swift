/// Characters Herald refuses in text that people see or that names things: control characters
/// (C0, DEL, C1), line and paragraph separators, bidirectional formatting characters, which
/// could reorder text around the brand prefix `[displayName]`, and invisible characters that
/// could hide text or make two strings look alike (zero-width space and non-joiner, word joiner,
/// byte order mark, soft hyphen). The zero-width joiner is refused too, except between two emoji,
/// where it builds one picture (👨‍👩‍👧): `containsForbidden` judges it by its neighbours.
public enum TextRules {
    public static let zeroWidthJoiner: Unicode.Scalar = "\u{200D}"

    /// Refused wherever it stands. The zero-width joiner is not among them: it depends on its neighbours.
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F: return true
        case 0x2028, 0x2029: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        case 0x00AD, 0x200B, 0x200C, 0x2060, 0xFEFF: return true
        default: return false
        }
    }

    /// The code points a zero-width joiner may stand between: arrows, technical and miscellaneous symbols,
    /// dingbats, and the emoji planes (U+1F000-U+1FAFF), which hold every person, animal and object the
    /// joined sequences use (🏳️‍🌈, 👩‍⚕️, 🐈‍⬛, 🙂‍↔️). docs/openapi.yaml writes the same ranges in its
    /// patterns.
    public static func isEmoji(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2190...0x21FF, 0x2300...0x23FF, 0x2600...0x27BF, 0x2B00...0x2BFF, 0x1F000...0x1FAFF: return true
        default: return false
        }
    }

    /// A joiner is allowed after an emoji or after the emoji presentation selector (U+FE0F, as in 🏳️‍🌈),
    /// and before an emoji.
    static func joins(after previous: Unicode.Scalar?, before next: Unicode.Scalar?) -> Bool {
        guard let previous, let next else { return false }
        return (isEmoji(previous) || previous == "\u{FE0F}") && isEmoji(next)
    }

    /// True when `text` has a forbidden character other than those in `allowed`.
    public static func containsForbidden(_ text: String, allowing allowed: Set<Unicode.Scalar> = []) -> Bool {
        contains(text) { isForbidden($0) && !allowed.contains($0) }
    }

    /// Forbidden characters or any whitespace (for identifiers, URLs and links).
    public static func containsForbiddenOrWhitespace(_ text: String) -> Bool {
        contains(text) { isForbidden($0) || $0.properties.isWhitespace }
    }

    /// True when `refused` holds for a scalar of `text`, or a zero-width joiner stands outside an emoji sequence.
    private static func contains(_ text: String, _ refused: (Unicode.Scalar) -> Bool) -> Bool {
        var previous: Unicode.Scalar?
        var scalars = text.unicodeScalars.makeIterator()
        var current = scalars.next()
        while let scalar = current {
            let next = scalars.next()
            if refused(scalar) { return true }
            if scalar == zeroWidthJoiner && !joins(after: previous, before: next) { return true }
            previous = scalar
            current = next
        }
        return false
    }

    /// Newlines and tabs, which a notification body may contain.
    public static let bodyWhitespace: Set<Unicode.Scalar> = ["\n", "\r", "\t"]
}
