import Foundation

// Embeds the named queries of Sources/Store/Queries/*.sql into one Swift file (run by Plugins/EmbedQueries at
// build time): `embed-queries OUTPUT FILE.sql...`. A file holds queries, each opened by a `-- name: lowerCamel`
// line; the comment lines right below the name are its documentation; the text runs to the next name.
// A block opened by `-- fragment: lowerCamel` is no query: its text replaces `{{lowerCamel}}` in the file's
// queries and fragments (a column list several queries return, kept once), and `{{file_name.lowerCamel}}` in any
// other file's (an expression two files' queries share).
// `-- unprepared` makes a query run unnamed, planned for each call's values (a statement whose text serves several
// combinations of optional conditions, each folded away by the planner when its parameter is NULL).
// `-- identifiers: channel` leaves `{{channel}}` in the text, filled at run time with a quoted SQL identifier
// (`NamedSQL.filling`): a name no bind parameter can stand for, as LISTEN's channel.
// A file `delivery_claims.sql` becomes `Queries.DeliveryClaims`, each query a `NamedSQL` constant.
// Among a query's comment lines, `-- parameters: id UUID, names [String], note String?` (one or more such lines, in
// the order of $1...$n) and `-- returns: RowType` (a QueryRow; omitted: NoRow) make it typed, as sqlc does: a
// struct `Queries.DeliveryClaims.ClaimDue` conforming to NamedQuery, whose fields are the parameters in order.
// A query without either line gets none (its wrapper is written by hand, its bindings computed from a value).

struct Failure: Error, CustomStringConvertible {
    let description: String
}

struct Parameter {
    let name: String
    let type: String
}

struct Query {
    let name: String
    var documentation: [String]
    var lines: [String]
    var isFragment = false
    /// nil: no `-- parameters:` line.
    var parameters: [Parameter]?
    var returns: String?
    var isPrepared = true
    /// Placeholders filled at run time (`-- identifiers:`).
    var identifiers: [String] = []
    /// Where the query's name is, for the messages about its annotations.
    var line = 0

    var isTyped: Bool { parameters != nil || returns != nil }
}

/// The parameter types a generated query takes: the PostgresEncodable types of Sources/Postgres, an array of one,
/// of one (its elements optional or not), or an optional of either (nil binds SQL NULL).
let parameterTypes: Set<String> = ["UUID", "String", "Int", "Int32", "Int64", "Bool", "Date", "Double"]

/// Names a generated struct or its fields cannot take as they are.
let reservedWords: Set<String> = [
    "Type", "Self", "Protocol", "Any", "associatedtype", "class", "deinit", "enum", "extension", "func", "import",
    "init", "inout", "internal", "let", "operator", "private", "protocol", "public", "static", "struct", "subscript",
    "typealias", "var", "break", "case", "continue", "default", "defer", "do", "else", "fallthrough", "for",
    "guard", "if", "in", "repeat", "return", "switch", "where", "while", "as", "false", "is", "nil", "self",
    "super", "throw", "throws", "true", "try", "sql", "bindings",
]

func isParameterType(_ type: String) -> Bool {
    var base = Substring(type)
    if base.hasSuffix("?") { base = base.dropLast() }
    if base.hasPrefix("[") && base.hasSuffix("]") { base = base.dropFirst().dropLast() }
    if base.hasSuffix("?") { base = base.dropLast() }
    return parameterTypes.contains(String(base))
}

/// `id UUID, names [String]`: each a lowerCamel name and a parameter type.
func parameters(_ text: Substring, at place: String) throws -> [Parameter] {
    try text.split(separator: ",").map { item in
        let parts = item.split(separator: " ")
        guard parts.count == 2, isIdentifier(parts[0]), !reservedWords.contains(String(parts[0])) else {
            throw Failure(
                description: "\(place): `\(item.trimmingCharacters(in: .whitespaces))` is not "
                    + "`name Type` with a lowerCamelCase name")
        }
        guard isParameterType(String(parts[1])) else {
            throw Failure(
                description: "\(place): parameter type `\(parts[1])` is none of "
                    + "\(parameterTypes.sorted().joined(separator: ", ")), an array of one ([T], [T?]) or an optional")
        }
        return Parameter(name: String(parts[0]), type: String(parts[1]))
    }
}

/// A row type: a Swift type name, dotted when nested (`DirectoryStore.TokenRow`).
func isTypeName(_ text: Substring) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    return parts.allSatisfy { part in
        guard let first = part.first, first.isUppercase, !reservedWords.contains(String(part)) else { return false }
        return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }
}

/// The highest `$n` of a query's text: the number of parameters it takes.
func parameterCount(_ body: String) -> Int {
    var highest = 0
    var rest = Substring(body)
    while let dollar = rest.firstIndex(of: "$") {
        rest = rest[rest.index(after: dollar)...]
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        if let number = Int(digits) { highest = max(highest, number) }
    }
    return highest
}

func isIdentifier(_ text: Substring) -> Bool {
    guard let first = text.first, first.isLetter, first.isLowercase else { return false }
    return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
}

func typeName(ofFile path: String) throws -> String {
    let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
    let words = base.split(separator: "_")
    guard !words.isEmpty,
        words.allSatisfy({ word in word.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) } })
    else { throw Failure(description: "\(path): a query file is named in lower_snake_case") }
    return words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
}

/// A file's blocks (queries and fragments) as written, their fragments not yet substituted.
func blocks(inFile path: String) throws -> [Query] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    var found: [Query] = []
    var current: Query?
    for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("-- name:") || trimmed.hasPrefix("-- fragment:") {
            if let current { found.append(current) }
            let isFragment = trimmed.hasPrefix("-- fragment:")
            let name = trimmed.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces)
            guard isIdentifier(Substring(name)) else {
                throw Failure(description: "\(path):\(number + 1): `\(name)` is not a lowerCamelCase query name")
            }
            guard !found.contains(where: { $0.name == name }) else {
                throw Failure(description: "\(path):\(number + 1): a second query named \(name)")
            }
            current = Query(name: name, documentation: [], lines: [], isFragment: isFragment, line: number + 1)
        } else if var query = current {
            let place = "\(path):\(number + 1)"
            if query.lines.isEmpty && trimmed.hasPrefix("-- parameters:") {
                guard !query.isFragment else { throw Failure(description: "\(place): a fragment takes no parameters") }
                query.parameters =
                    (query.parameters ?? [])
                    + (try parameters(
                        trimmed.drop { $0 != ":" }.dropFirst(),
                        at: place))
            } else if query.lines.isEmpty && trimmed.hasPrefix("-- returns:") {
                let type = trimmed.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces)
                guard !query.isFragment, query.returns == nil, isTypeName(Substring(type)) else {
                    throw Failure(description: "\(place): `-- returns:` takes one row type name, once, in a query")
                }
                query.returns = type
            } else if query.lines.isEmpty && trimmed == "-- unprepared" {
                guard !query.isFragment, query.isPrepared else {
                    throw Failure(description: "\(place): `-- unprepared` marks a query, once")
                }
                query.isPrepared = false
            } else if query.lines.isEmpty && trimmed.hasPrefix("-- identifiers:") {
                let names = trimmed.drop { $0 != ":" }.dropFirst().split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard !query.isFragment, query.identifiers.isEmpty, !names.isEmpty,
                    names.allSatisfy({ isIdentifier(Substring($0)) })
                else {
                    throw Failure(
                        description: "\(place): `-- identifiers:` takes lowerCamelCase names, once, in a query")
                }
                query.identifiers = names
            } else if query.lines.isEmpty && trimmed.hasPrefix("--") {
                query.documentation.append(String(trimmed.dropFirst(2).trimmingCharacters(in: .whitespaces)))
            } else if !(query.lines.isEmpty && trimmed.isEmpty) {
                query.lines.append(String(line))
            }
            current = query
        } else if !trimmed.isEmpty && !trimmed.hasPrefix("--") {
            throw Failure(description: "\(path):\(number + 1): SQL before the first `-- name:` line")
        }
    }
    if let current { found.append(current) }
    return found
}

/// Every fragment of `files` (path: its blocks), by the names a file's text may use: `{{name}}` for its own,
/// `{{file_name.name}}` for another's.
/// A fragment's own file's fragments are substituted in it before another file reads it.
func fragments(of files: [(path: String, blocks: [Query])]) throws -> [String: [String: String]] {
    var all: [String: [String: String]] = [:]
    for file in files {
        var own: [String: String] = [:]
        for fragment in file.blocks where fragment.isFragment {
            own[fragment.name] = fragment.lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let stem = URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
        for (name, text) in own {
            let resolved = try substituting(own, in: text, at: "\(file.path): fragment \(name)")
            all[file.path, default: [:]][name] = resolved
            for other in files where other.path != file.path {
                all[other.path, default: [:]][stem + "." + name] = resolved
            }
        }
    }
    return all
}

/// `text` with every fragment it uses substituted, fragments within fragments too.
func substituting(_ fragments: [String: String], in text: String, at place: String) throws -> String {
    var body = text
    for _ in 0..<8 {
        guard fragments.keys.contains(where: { body.contains("{{" + $0 + "}}") }) else { return body }
        for (name, fragment) in fragments { body = body.replacingOccurrences(of: "{{" + name + "}}", with: fragment) }
    }
    guard fragments.keys.contains(where: { body.contains("{{" + $0 + "}}") }) else { return body }
    throw Failure(description: "\(place): fragments that use each other without end")
}

/// The queries of one file, each with its fragments substituted and its annotations checked.
func queries(inFile path: String, blocks found: [Query], fragments: [String: String]) throws -> [Query] {
    var queries: [Query] = []
    for var query in found where !query.isFragment {
        let body = try substituting(fragments, in: query.lines.joined(separator: "\n"), at: "\(path):\(query.line)")
        var rest = body
        for identifier in query.identifiers {
            guard fragments[identifier] == nil, rest.contains("{{" + identifier + "}}") else {
                throw Failure(
                    description: "\(path):\(query.line): identifier \(identifier) of query \(query.name) is a "
                        + "fragment's name or not used as {{\(identifier)}}")
            }
            rest = rest.replacingOccurrences(of: "{{" + identifier + "}}", with: "")
        }
        if let open = rest.range(of: "{{") {
            let name = rest[open.upperBound...].prefix { $0 != "}" }
            throw Failure(
                description: "\(path): query \(query.name) uses {{\(name)}}, a fragment the file does not define "
                    + "(another file's is {{file_name.fragmentName}}) nor an identifier it declares")
        }
        guard query.identifiers.isEmpty || !query.isTyped else {
            throw Failure(
                description: "\(path):\(query.line): query \(query.name) is filled at run time "
                    + "(`-- identifiers:`), so it takes no `-- parameters:` or `-- returns:`")
        }
        guard !body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw Failure(description: "\(path): query \(query.name) has no SQL")
        }
        query.lines = body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if query.isTyped {
            let declared = query.parameters?.count ?? 0
            let used = parameterCount(body)
            guard declared == used else {
                throw Failure(
                    description: "\(path):\(query.line): query \(query.name) declares \(declared) "
                        + "parameters and its SQL uses $1...$\(used)")
            }
            let names = (query.parameters ?? []).map(\.name)
            guard Set(names).count == names.count else {
                throw Failure(description: "\(path):\(query.line): query \(query.name) names a parameter twice")
            }
            guard !reservedWords.contains(structName(query.name)) else {
                throw Failure(description: "\(path):\(query.line): query \(query.name) cannot be a struct name")
            }
        }
        queries.append(query)
    }
    return queries
}

func swiftLiteral(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// `claimDue` -> `ClaimDue`: the typed query's struct, beside the `NamedSQL` constant of the same name.
func structName(_ query: String) -> String { query.prefix(1).uppercased() + query.dropFirst() }

/// The struct of a typed query: its parameters as fields in order, bound as $1...$n.
func typedQuery(_ query: Query, in type: String) -> String {
    let parameters = query.parameters ?? []
    var swift = "        /// `\(query.name)` with its parameters, typed.\n"
    swift += "        struct \(structName(query.name)): NamedQuery {\n"
    if let returns = query.returns { swift += "            typealias Row = \(returns)\n" }
    swift += "            static let sql = Queries.\(type).\(query.name)\n"
    guard !parameters.isEmpty else { return swift + "        }\n" }
    for parameter in parameters { swift += "            let \(parameter.name): \(parameter.type)\n" }
    let fields = parameters.map(\.name).joined(separator: ", ")
    swift += "            var bindings: [(any PostgresEncodable)?] { [\(fields)] }\n"
    return swift + "        }\n"
}

func main() throws {
    let arguments = CommandLine.arguments.dropFirst()
    guard let output = arguments.first else { throw Failure(description: "usage: embed-queries OUTPUT FILE.sql...") }
    var swift =
        "// Generated by Plugins/EmbedQueries from Sources/Store/Queries/*.sql: edit those files, not this one.\n"
    swift += "import Foundation\nimport HeraldCore\nimport Postgres\n\n"
    swift += "/// Every named query of Sources/Store/Queries, one enum a file.\npublic enum Queries {\n"
    var all: [String] = []
    let files = try arguments.dropFirst().sorted().map { (path: $0, blocks: try blocks(inFile: $0)) }
    let fragmentsByFile = try fragments(of: files)
    for (path, blocks) in files {
        let type = try typeName(ofFile: path)
        let file = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        swift += "    public enum \(type) {\n"
        let fileQueries = try queries(inFile: path, blocks: blocks, fragments: fragmentsByFile[path] ?? [:])
        // A row type named as one of the file's structs would name that struct inside the enum.
        let shadowing = Set(fileQueries.filter(\.isTyped).map { structName($0.name) } + [type, "Queries"])
        for query in fileQueries {
            if let returns = query.returns, let first = returns.split(separator: ".").first,
                shadowing.contains(String(first))
            {
                throw Failure(
                    description: "\(path):\(query.line): row type \(returns) is hidden by Queries.\(type)."
                        + "\(first) inside the generated enum: qualify it with its module (Store.\(returns))")
            }
            var lines = query.lines
            while let last = lines.last, last.trimmingCharacters(in: .whitespaces).isEmpty { lines.removeLast() }
            var body = lines.joined(separator: "\n")
            // One statement each (a prepared statement holds one): a closing semicolon is dropped.
            if body.hasSuffix(";") { body.removeLast() }
            for line in query.documentation { swift += "        /// \(line)\n" }
            swift += "        public static let \(query.name) = NamedSQL(\n"
            swift += "            name: \(swiftLiteral(file + "." + query.name)),\n"
            swift += "            text: \(swiftLiteral(body))"
            swift += query.isPrepared ? ")\n" : ",\n            isPrepared: false)\n"
            if query.isTyped { swift += typedQuery(query, in: type) }
            all.append("\(type).\(query.name)")
        }
        swift += "    }\n"
    }
    swift += "\n    /// Every query, for the tests that prepare each one against the schema.\n"
    swift += "    public static let all: [NamedSQL] = [\n"
    for name in all { swift += "        \(name),\n" }
    swift += "    ]\n}\n"
    // Rewritten only when it changed, so an unchanged set of queries does not rebuild Store.
    if (try? String(contentsOfFile: output, encoding: .utf8)) != swift {
        try swift.write(toFile: output, atomically: true, encoding: .utf8)
    }
}

do {
    try main()
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
