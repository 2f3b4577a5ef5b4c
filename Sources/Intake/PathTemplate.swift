import Foundation
import HeraldCore

/// A route's path as docs/openapi.yaml writes it, `/api/internal/users/{userId}/devices/{deviceId}`: literal
/// segments and `{name}` parameters, each parameter typed by its name (`PathParameter.kinds`).
public struct PathTemplate: Sendable, Hashable, CustomStringConvertible {
    /// One segment: a literal, or a parameter's name.
    enum Segment: Sendable, Hashable {
        case literal(Substring)
        case parameter(String)
    }

    /// The template as written; also the route's label in metrics and logs.
    public let text: String
    let segments: [Segment]
    /// The parameters in path order.
    public let parameters: [PathParameter]
    /// The parameters in name order, the order they are checked in.
    let parametersByName: [PathParameter]

    init(_ text: String) {
        self.text = text
        segments = text.split(separator: "/").map { segment in
            guard segment.first == "{" && segment.last == "}" else { return .literal(segment) }
            return .parameter(String(segment.dropFirst().dropLast()))
        }
        parameters = segments.compactMap { segment in
            guard case .parameter(let name) = segment else { return nil }
            return PathParameter(name)
        }
        parametersByName = parameters.sorted { $0.name < $1.name }
    }

    public var description: String { text }

    /// The parameters' raw values when `pathSegments` (the path split at `/`, without the leading empty part)
    /// have this template's shape; nil otherwise. A parameter never matches an empty segment.
    func match(_ pathSegments: [Substring]) -> [String: String]? {
        guard pathSegments.count == segments.count else { return nil }
        var values: [String: String] = [:]
        for (segment, value) in zip(segments, pathSegments) {
            switch segment {
            case .literal(let literal):
                guard literal == value else { return nil }
            case .parameter(let name):
                guard !value.isEmpty else { return nil }
                values[name] = String(value)
            }
        }
        return values
    }
}

/// A `{name}` segment of a route's path. Its name decides its kind, the same on every route (as docs/openapi.yaml
/// declares each once under `components/parameters`), so `{id}` is a UUID wherever it appears.
public struct PathParameter: Sendable, Hashable, CustomStringConvertible {
    /// What a parameter's value may be; anything else is 400 `invalid_field` naming the parameter, before any
    /// handler or store sees it: the ids are the keys of the rows a request writes.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A UUID in its 36-character form, any letter case.
        case uuid
        /// A mini-app id (`Identifiers.isValidMiniAppID`).
        case miniAppID
        /// An id the host chooses, or a file name (`Identifiers.isValidExternalID`).
        case externalID

        /// The schema docs/openapi.yaml gives a parameter of this kind (`#/components/schemas/<name>`).
        public var schemaName: String {
            switch self {
            case .uuid: "Uuid"
            case .miniAppID: "MiniAppId"
            case .externalID: "ExternalId"
            }
        }

        func isValid(_ value: String) -> Bool {
            switch self {
            case .uuid: value.utf8.count == 36 && UUID(uuidString: value) != nil
            case .miniAppID: Identifiers.isValidMiniAppID(value)
            case .externalID: Identifiers.isValidExternalID(value)
            }
        }

        var rule: String {
            switch self {
            case .uuid: "a UUID"
            case .miniAppID: "1-128 of letters, digits, '.', '_' and '-'"
            case .externalID: "1-128 of letters, digits, '.', '_', ':' and '-'"
            }
        }
    }

    /// Every parameter name a route may use, with its kind.
    static let kinds: [String: Kind] = [
        "id": .uuid, "requestId": .uuid, "activityId": .uuid, "channelId": .uuid, "reminderId": .uuid, "mediaId": .uuid,
        "deliveryId": .uuid,
        "miniAppId": .miniAppID,
        "userId": .externalID, "deviceId": .externalID, "file": .externalID,
    ]

    public let name: String
    public let kind: Kind

    init(_ name: String) {
        guard let kind = Self.kinds[name] else { preconditionFailure("path parameter {\(name)} has no kind") }
        self.name = name
        self.kind = kind
    }

    public var description: String { "{\(name)}: \(kind.rawValue)" }
}

/// A matched route's path parameters, checked against their kinds (UUIDs parsed once, here).
struct PathParameters: Sendable {
    private let texts: [String: String]
    private let uuids: [String: UUID]

    static let none = PathParameters(texts: [:], uuids: [:])
}

/// In an extension, so the memberwise init (private, as the properties are) stays synthesized.
extension PathParameters {
    /// Checks `values` (by name, in name order: the first invalid one is the error) against `template`'s kinds.
    init(_ values: [String: String], of template: PathTemplate) throws(HeraldError) {
        var uuids: [String: UUID] = [:]
        for parameter in template.parametersByName {
            let value = values[parameter.name] ?? ""
            guard parameter.kind.isValid(value) else {
                throw .invalidField(parameter.name, "\(parameter.name) must be \(parameter.kind.rule).")
            }
            if parameter.kind == .uuid { uuids[parameter.name] = UUID(uuidString: value) }
        }
        self.init(texts: values, uuids: uuids)
    }

    /// The parameter's text as sent ("" for a name the route does not have).
    func text(_ name: String) -> String { texts[name] ?? "" }

    /// A `uuid` parameter's value; 404 for a name the route does not declare as one.
    func uuid(_ name: String) throws(HeraldError) -> UUID {
        guard let value = uuids[name] else { throw .notFound }
        return value
    }
}
