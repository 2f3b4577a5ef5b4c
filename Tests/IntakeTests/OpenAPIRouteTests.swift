import Foundation
import Testing

@testable import Intake

/// Keeps `docs/openapi.yaml` and `IntakeRoutes.all` in step: every route the intake serves is
/// documented, and every documented operation is served, with the right security scheme, its
/// error responses, and its path parameters declared with the schema of the kind the router checks.
///
/// No YAML library is available, so the document is read by layout (stated at the top of the
/// YAML): path keys indented 2 spaces under `paths:`, operations 4 spaces, an operation's
/// `security:` and `responses:` 6 spaces, status codes and security requirements 8 spaces; path
/// parameters as `$ref` lines under the path's `parameters:`, each defined under
/// `components/parameters` with its `schema:` a `$ref`.
@Suite("OpenAPI document matches the routes")
struct OpenAPIRouteTests {
    struct Operation: Hashable, CustomStringConvertible {
        let method: String
        let path: String
        var description: String { "\(method) \(path)" }
    }

    struct DocumentedOperation {
        let operation: Operation
        let line: Int
        var responses: [String] = []
        /// nil when the operation has no `security:` key; [] for `security: []`.
        var security: [String]?
    }

    static let methods: Set<String> = ["get", "post", "put", "patch", "delete"]

    static func documentURL() -> URL {
        // <repo>/Tests/IntakeTests/OpenAPIRouteTests.swift -> <repo>/docs/openapi.yaml
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/openapi.yaml")
    }

    static func indentation(_ line: Substring) -> Int { line.prefix { $0 == " " }.count }

    /// The key of a `key:` or `key: value` line, without quotes; nil for other lines.
    static func key(_ line: Substring) -> String? {
        let text = line.drop { $0 == " " }
        guard !text.hasPrefix("#"), !text.hasPrefix("- "), let colon = text.firstIndex(of: ":") else { return nil }
        let after = text[text.index(after: colon)...]
        guard after.isEmpty || after.first == " " else { return nil }
        var key = text[..<colon]
        if key.count >= 2, let first = key.first, first == "'" || first == "\"", key.last == first {
            key = key.dropFirst().dropLast()
        }
        return String(key)
    }

    /// The text after `key:` on the same line, trimmed.
    static func inlineValue(_ line: Substring) -> String {
        guard let colon = line.firstIndex(of: ":") else { return "" }
        return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    /// Every operation under `paths:`, in document order.
    static func parse(_ text: String) -> [DocumentedOperation] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        var operations: [DocumentedOperation] = []
        var inPaths = false
        var path: String?
        var section: String?  // "responses" or "security" inside the current operation
        for (index, line) in lines.enumerated() {
            let trimmed = line.drop { $0 == " " }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let indent = indentation(line)
            if indent == 0 {
                inPaths = key(line) == "paths"
                path = nil
                section = nil
                continue
            }
            guard inPaths else { continue }
            switch indent {
            case 2:
                path = key(line)
                section = nil
            case 4:
                section = nil
                if let name = key(line), methods.contains(name), let path {
                    operations.append(
                        DocumentedOperation(
                            operation: Operation(method: name.uppercased(), path: path), line: index + 1))
                }
            case 6:
                section = nil
                guard !operations.isEmpty, let name = key(line) else { continue }
                if name == "responses" {
                    section = "responses"
                } else if name == "security" {
                    let value = inlineValue(line)
                    operations[operations.count - 1].security = []
                    section = value == "[]" ? nil : "security"
                }
            case 8:
                guard let section, !operations.isEmpty else { continue }
                if section == "responses", let code = key(line) {
                    operations[operations.count - 1].responses.append(code)
                } else if section == "security", trimmed.hasPrefix("- ") {
                    let requirement = trimmed.dropFirst(2)
                    if let name = key(requirement) { operations[operations.count - 1].security?.append(name) }
                }
            default:
                continue
            }
        }
        return operations
    }

    static func loadText() throws -> String { try String(contentsOf: documentURL(), encoding: .utf8) }

    static func loadDocument() throws -> [DocumentedOperation] { parse(try loadText()) }

    static func lines(_ text: String) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
    }

    /// A `$ref: '...'` line's target, without quotes.
    static func reference(_ line: Substring) -> String? {
        var text = line.drop { $0 == " " }
        if text.hasPrefix("- ") { text = text.dropFirst(2) }
        guard key(text) == "$ref" else { return nil }
        return inlineValue(text).trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
    }

    /// Each path's path-level `parameters:` references, in order, and the paths that declare a parameter
    /// `in: path` inline (which the layout does not allow: the test could not compare its schema).
    static func pathParameterReferences(_ text: String) -> (references: [String: [String]], inline: Set<String>) {
        var references: [String: [String]] = [:]
        var inline: Set<String> = []
        var inPaths = false
        var path: String?
        var inParameters = false
        for line in lines(text) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let indent = indentation(line)
            if indent == 0 { inPaths = key(line) == "paths"; path = nil; continue }
            guard inPaths else { continue }
            if indent == 2 { path = key(line); inParameters = false; continue }
            guard let path else { continue }
            if indent == 4 { inParameters = key(line) == "parameters"; continue }
            if trimmed.hasPrefix("in: path") { inline.insert(path) }
            if inParameters, indent == 6, let target = reference(line) { references[path, default: []].append(target) }
        }
        return (references, inline)
    }

    /// A parameter of `components/parameters`.
    struct ComponentParameter: Equatable, CustomStringConvertible {
        var name = ""
        var location = ""
        /// The target of its `schema:`'s `$ref`; "" when the schema is written inline.
        var schema = ""
        var description: String { "\(name) in \(location): \(schema)" }
    }

    /// `components/parameters` by reference (`#/components/parameters/Name`), and the keys of each
    /// `components/schemas` entry with their inline values (`format: uuid`).
    static func components(
        _ text: String
    ) -> (parameters: [String: ComponentParameter], schemas: [String: [String: String]]) {
        var parameters: [String: ComponentParameter] = [:]
        var schemas: [String: [String: String]] = [:]
        var inComponents = false
        var section: String?
        var entry: String?
        var inSchema = false
        for line in lines(text) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let indent = indentation(line)
            switch indent {
            case 0: inComponents = key(line) == "components"; section = nil; entry = nil
            case 2 where inComponents: section = key(line); entry = nil
            case 4 where inComponents: entry = key(line); inSchema = false
            case 6 where inComponents:
                guard let entry, let name = key(line) else { continue }
                inSchema = name == "schema"
                if section == "schemas" { schemas[entry, default: [:]][name] = inlineValue(line) }
                guard section == "parameters" else { continue }
                let reference = "#/components/parameters/\(entry)"
                if name == "name" { parameters[reference, default: .init()].name = inlineValue(line) }
                if name == "in" { parameters[reference, default: .init()].location = inlineValue(line) }
            case 8 where inComponents && inSchema && section == "parameters":
                guard let entry, let target = reference(line) else { continue }
                parameters["#/components/parameters/\(entry)", default: .init()].schema = target
            default: continue
            }
        }
        return (parameters, schemas)
    }

    static func expectedScheme(_ access: RouteAccess) -> String? {
        switch access {
        case .public, .consolePage: nil
        case .partner: "partnerKey"
        case .admin, .consoleAPI: "adminToken"
        case .host: "hostToken"
        }
    }

    @Test("docs/openapi.yaml documents exactly the routes of IntakeRoutes.all")
    func documentedRoutesEqualServedRoutes() throws {
        let documented = try Self.loadDocument()
        #expect(!documented.isEmpty, "no operation found under paths: in \(Self.documentURL().path)")

        var seen: Set<Operation> = []
        for entry in documented where !seen.insert(entry.operation).inserted {
            Issue.record("\(entry.operation) is documented twice (line \(entry.line))")
        }

        let served = IntakeRoutes.all.map { Operation(method: $0.method, path: $0.path.text) }
        let servedSet = Set(served)
        #expect(served.count == servedSet.count, "IntakeRoutes.all lists a route twice")

        let undocumented = served.filter { !seen.contains($0) }
        #expect(undocumented.isEmpty, "served but missing from docs/openapi.yaml: \(undocumented)")
        let unserved = documented.map(\.operation).filter { !servedSet.contains($0) }
        #expect(unserved.isEmpty, "documented in docs/openapi.yaml but not in IntakeRoutes.all: \(unserved)")
    }

    @Test("every documented route has a 4xx response, a 401 when it needs a token, and the right security scheme")
    func responsesAndSecurityMatchTheRouteAuth() throws {
        let documented = Dictionary(
            try Self.loadDocument().map { ($0.operation, $0) }, uniquingKeysWith: { first, _ in first })
        for route in IntakeRoutes.all {
            let operation = Operation(method: route.method, path: route.path.text)
            guard let entry = documented[operation] else { continue }  // reported by the other test
            #expect(
                entry.responses.contains { $0.count == 3 && $0.hasPrefix("4") },
                "\(operation) (line \(entry.line)) declares no 4xx response")
            if Self.expectedScheme(route.access) != nil {
                #expect(
                    entry.responses.contains("401"),
                    "\(operation) (line \(entry.line)) needs a token but declares no 401")
            }
            let expected = Self.expectedScheme(route.access).map { [$0] } ?? []
            #expect(
                entry.security == expected,
                "\(operation) (line \(entry.line)) security is \(entry.security.map { "\($0)" } ?? "absent"), expected \(expected)"
            )
        }
    }

    @Test("every path parameter is declared with the schema of the kind the router checks, and only those")
    func pathParametersMatchTheirKinds() throws {
        let text = try Self.loadText()
        let (references, inline) = Self.pathParameterReferences(text)
        let (parameters, schemas) = Self.components(text)
        #expect(inline.isEmpty, "path parameters declared inline, not by $ref: \(inline.sorted())")
        var paths: [String: PathTemplate] = [:]
        for route in IntakeRoutes.all { paths[route.path.text] = route.path }
        for (path, template) in paths.sorted(by: { $0.key < $1.key }) {
            let declared = (references[path] ?? []).map { parameters[$0] ?? .init(name: "unknown \($0)") }
                .filter { $0.location == "path" || $0.name.hasPrefix("unknown") }
            let expected = template.parameters.map { parameter in
                ComponentParameter(
                    name: parameter.name, location: "path",
                    schema: "#/components/schemas/\(parameter.kind.schemaName)")
            }
            #expect(
                declared == expected,
                "\(path): docs/openapi.yaml declares \(declared), the router checks \(expected)")
        }
        for kind in PathParameter.Kind.allCases {
            #expect(schemas[kind.schemaName]?["pattern"]?.isEmpty == false, "schema \(kind.schemaName) has no pattern")
        }
        #expect(schemas["Uuid"]?["format"] == "uuid")
        #expect(schemas["Uuid"]?["type"] == "string")
    }

    @Test("each kind's schema pattern in docs/openapi.yaml accepts exactly the values the router accepts")
    func kindPatternsAgreeWithTheRouter() throws {
        let schemas = Self.components(try Self.loadText()).schemas
        let uuid = "0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d"
        let long = String(repeating: "a", count: 128)
        let corpus = [
            uuid, uuid.uppercased(), "0190b0c28f4e7c3a9d2b5e6f7a8b9c0d", "{\(uuid)}", uuid + "0",
            String(uuid.dropLast()),
            "0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0g", uuid + "\n", "a", "a.b", "a..b", ".a", "a.", "a_b-c", "a:b",
            "a b", "a/b", "é", "", long, long + "a", "com.example.app", "user:42", "64.png",
        ]
        for kind in PathParameter.Kind.allCases {
            let source = try #require(schemas[kind.schemaName]?["pattern"], "schema \(kind.schemaName)")
            let regex = try NSRegularExpression(pattern: String(source.dropFirst().dropLast()))
            for value in corpus {
                let schema = regex.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
                #expect(schema == kind.isValid(value), "\(kind.schemaName) \(value.debugDescription)")
            }
        }
    }

    @Test("the YAML reader finds path parameters by reference and components' schemas")
    func parserReadsParameters() {
        let text = """
            paths:
              /a/{id}:
                parameters:
                  - $ref: '#/components/parameters/Id'
                get:
                  parameters:
                    - name: x
                      in: path
            components:
              parameters:
                Id:
                  name: id
                  in: path
                  schema:
                    $ref: '#/components/schemas/Uuid'
              schemas:
                Uuid:
                  type: string
                  format: uuid
            """
        let (references, inline) = Self.pathParameterReferences(text)
        #expect(references == ["/a/{id}": ["#/components/parameters/Id"]])
        #expect(inline == ["/a/{id}"])
        let (parameters, schemas) = Self.components(text)
        #expect(
            parameters["#/components/parameters/Id"]
                == ComponentParameter(name: "id", location: "path", schema: "#/components/schemas/Uuid"))
        #expect(schemas["Uuid"] == ["type": "string", "format": "uuid"])
    }

    @Test("the minimal YAML reader understands the layout it relies on")
    func parserReadsTheLayout() {
        let text = """
            openapi: 3.1.0
            paths:
              /a/{id}:
                parameters:
                  - name: id
                get:
                  description: |
                    not: a key
                  security:
                    - partnerKey: []
                  responses:
                    '200':
                      description: ok
                    "404":
                      description: no
                delete:
                  security: []
                  responses:
                    204:
                      description: gone
            components:
              schemas:
                get:
                  type: object
            """
        let operations = Self.parse(text)
        #expect(operations.map(\.operation.description) == ["GET /a/{id}", "DELETE /a/{id}"])
        #expect(operations.first?.responses == ["200", "404"])
        #expect(operations.first?.security == ["partnerKey"])
        #expect(operations.last?.responses == ["204"])
        #expect(operations.last?.security == [])
    }
}
