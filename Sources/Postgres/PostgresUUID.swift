import Foundation
import HeraldCore

/// UUID text as Postgres writes it (either letter case accepted): HeraldCore's `UUIDText`, which also writes it, is
/// the one reader of a UUID's text.
public enum PostgresUUID {
    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, either letter case; nil for anything else.
    public static func parse(_ text: String) -> UUID? { UUIDText.parse(text) }
}

extension PostgresUUID {
    /// `parse(_:)` on a value's bytes (a row's value in libpq's buffer), without making a String or an array.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> UUID? { UUIDText.parse(bytes) }
}
