/// The sound of a partner's pushes (APNs `aps.sound`), set by an admin on the partner row.
public enum NotificationSound: Sendable, Equatable, Decodable {
    /// A file name in the host app's bundle or `Library/Sounds`; `default` is the system sound.
    case named(String)
    /// No `sound` key: the notification arrives without a sound.
    case silent

    /// The sound of a partner no admin gave another.
    public static let systemDefault = NotificationSound.named("default")

    /// The `aps.sound` value; nil for silent.
    public var name: String? {
        if case .named(let name) = self { return name }
        return nil
    }

    /// From a stored or shown value: nil is silent.
    public init(name: String?) {
        self = name.map { .named($0) } ?? .silent
    }

    /// From a stored value: null is silent.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        self.init(name: value.decodeNil() ? nil : try value.decode(String.self))
    }
}
