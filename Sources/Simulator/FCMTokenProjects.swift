/// Which Firebase project issued each FCM registration token, for 403 SENDER_ID_MISMATCH.
///
/// On a real device a registration token is issued to an app of one Firebase project (its sender ID), and FCM
/// refuses a send to it through another project's `messages:send`. The simulator knows a token's project two
/// ways: a test or sandbox user binds it (`PUT /sim/tokens/{token}` with `{"fcmProject":...}`), else every
/// token belongs to the default project (`--fcm-token-project`). With neither, a token belongs to whichever
/// project sends to it and nothing is refused. Tokens compare exactly (they are case-sensitive base64).
final class FCMTokenProjects: Sendable {
    /// The longest token that can be bound: real ones are about 160 bytes; this leaves room without letting a
    /// typo bind megabytes.
    static let maxTokenBytes = 4096
    static let maxProjectBytes = 128

    /// The project of every token not bound to another (`SimulatorConfiguration.fcmTokenProject`).
    let defaultProject: String?
    /// The project of each bound token.
    let bound = TokenTable<String>()

    init(defaultProject: String? = nil) {
        self.defaultProject = defaultProject
    }

    /// True when no default project is set and nothing is bound: the check cannot refuse (one relaxed load on
    /// the hot path, as `TokenOwners` does).
    var isInactive: Bool { defaultProject == nil && bound.isEmpty }

    /// Whether `token` may be sent to through `project`'s `messages:send`.
    func admits(token: String, project: Substring) -> Bool {
        guard !isInactive else { return true }
        return bound.withLock { table in
            guard let owner = table[token] ?? defaultProject else { return true }
            return owner == project
        }
    }

    // MARK: Validation (control API and flags)

    /// What is wrong with a project id, or nil. Google's ids are lowercase letters, digits and '-' (domain-scoped
    /// ones add '.' and ':'); the simulator also takes upper case and '_' so a sandbox may name projects freely,
    /// but nothing that could not stand in the path of `messages:send`.
    static func problem(withProject project: String) -> String? {
        guard !project.isEmpty, project.utf8.count <= maxProjectBytes else {
            return "a project id is 1 to \(maxProjectBytes) bytes (got \(project.utf8.count))"
        }
        let valid = project.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: ":")
        }
        guard valid else { return "\"\(project)\" is not a project id (letters, digits, '-', '_', '.', ':')" }
        return nil
    }

    /// What is wrong with a registration token to bind, or nil: printable ASCII without spaces or '/' (a target
    /// with '/' is a topic, which belongs to no app), at most `maxTokenBytes`.
    static func problem(withToken token: String) -> String? {
        guard !token.isEmpty, token.utf8.count <= maxTokenBytes else {
            return "an FCM registration token is 1 to \(maxTokenBytes) bytes (got \(token.utf8.count))"
        }
        guard token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else {
            return "an FCM registration token is printable ASCII without spaces or '/'"
        }
        return nil
    }
}
