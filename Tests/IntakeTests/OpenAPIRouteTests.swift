import Foundation
import Intake
import Testing

/// Keeps `docs/openapi.yaml` and `IntakeRoutes.all` in step: every route the intake serves is
/// documented, and every documented operation is served, with the right security scheme and
/// its error responses.
///
/// No YAML library is available, so the document is read by layout (stated at the top of the
/// YAML): path keys indented 2 spaces under `paths:`, operations 4 spaces, an operation's
/// `security:` and `responses:` 6 spaces, status codes and security requirements 8 spaces.
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
                    operations.append(DocumentedOperation(
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

    static func loadDocument() throws -> [DocumentedOperation] {
        let url = documentURL()
        let text = try String(contentsOf: url, encoding: .utf8)
        return parse(text)
    }

    static func expectedScheme(_ auth: RouteAuth) -> String? {
        switch auth {
        case .none: nil
        case .partner: "partnerKey"
        case .admin: "adminToken"
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

        let served = IntakeRoutes.all.map { Operation(method: $0.method, path: $0.pattern) }
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
            let operation = Operation(method: route.method, path: route.pattern)
            guard let entry = documented[operation] else { continue }  // reported by the other test
            #expect(entry.responses.contains { $0.count == 3 && $0.hasPrefix("4") },
                    "\(operation) (line \(entry.line)) declares no 4xx response")
            if route.auth != .none {
                #expect(entry.responses.contains("401"), "\(operation) (line \(entry.line)) needs a token but declares no 401")
            }
            let expected = Self.expectedScheme(route.auth).map { [$0] } ?? []
            #expect(entry.security == expected,
                    "\(operation) (line \(entry.line)) security is \(entry.security.map { "\($0)" } ?? "absent"), expected \(expected)")
        }
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
