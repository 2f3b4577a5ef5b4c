import Foundation

/// The notification categories a push may name: the identifiers the host app's build registers
/// (`UNNotificationCategory` on iOS, each with its action buttons; the Android host maps the same identifiers to its
/// notification actions), listed in HERALD_NOTIFICATION_CATEGORIES. A partner only picks one of them: an identifier
/// the build does not register would reach the phone as a notification without its buttons, so it is refused at
/// intake instead. A push's category becomes APNs `aps.category` and FCM data `category` (PushPayload.swift).
public struct NotificationCategories: Sendable, Equatable {
    /// In the order configured.
    public let identifiers: [String]

    /// No category: every push that names one is refused.
    public static let none = NotificationCategories(checked: [])

    /// The longest identifier.
    public static let maxIdentifierLength = 64

    private init(checked identifiers: [String]) { self.identifiers = identifiers }

    /// 1-64 of `A-Za-z0-9._-`: what a build's category identifiers look like, and nothing a payload must escape.
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        let bytes = identifier.utf8
        return !bytes.isEmpty && bytes.count <= maxIdentifierLength
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return true
                default: return false
                }
            }
    }

    /// Why a configured list is refused. The description names entries by position, never their text, as every
    /// configuration error names the variable and not its value.
    public enum ListProblem: Error, Equatable, CustomStringConvertible {
        /// The entry at `position` (from 1) is empty or not 1-64 of `A-Za-z0-9._-`.
        case invalidIdentifier(position: Int)
        /// The entry at `position` repeats the one at `first`.
        case duplicate(position: Int, first: Int)

        public var description: String {
            switch self {
            case .invalidIdentifier(let position):
                return "entry \(position) must be 1-\(NotificationCategories.maxIdentifierLength) of [A-Za-z0-9._-]"
            case .duplicate(let position, let first):
                return "entry \(position) repeats entry \(first)"
            }
        }
    }

    /// A comma-separated list of identifiers (`reply, accept.invite`: spaces around an entry are not part of it, as
    /// in the other list settings); every entry must be valid and none repeated.
    public init(parsing text: String) throws(ListProblem) {
        var identifiers: [String] = []
        var positions: [String: Int] = [:]
        for (index, entry) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let identifier = entry.trimmingCharacters(in: .whitespaces)
            guard Self.isValidIdentifier(identifier) else { throw .invalidIdentifier(position: index + 1) }
            if let first = positions[identifier] { throw .duplicate(position: index + 1, first: first) }
            positions[identifier] = index + 1
            identifiers.append(identifier)
        }
        self.init(checked: identifiers)
    }

    public func contains(_ identifier: String) -> Bool { identifiers.contains(identifier) }

    /// A push body's `category`: absent or null is none; a string the build registers is kept; anything else is
    /// refused, 400 naming `category`, before anything is written.
    public func validate(_ value: JSONValue?) throws(HeraldError) -> String? {
        guard let value, value != .null else { return nil }
        guard let identifier = value.stringValue else {
            throw .invalidField("category", "category must be a string.")
        }
        guard contains(identifier) else {
            let known =
                identifiers.isEmpty
                ? "the host app registers no notification category"
                : "the host app registers only \(identifiers.joined(separator: ", "))"
            throw HeraldError(
                status: 400, code: "unknown_category",
                message: "category is not a notification category of the host app: \(known).", field: "category")
        }
        return identifier
    }
}
