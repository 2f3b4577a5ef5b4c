import Postgres
import Testing

/// One statement of a plpgsql function as the database has it, so a query-plan test EXPLAINs exactly what
/// the function runs: from `start` to `end` (the statement's `;` by default), with `start` kept unless
/// `afterStart` and `end` left out unless `throughEnd`, and each name in `renaming` (an argument or a
/// variable) replaced by its text, longest first so that `p_id` cannot take the start of `p_ids`.
func functionStatement(
    _ function: String, on connection: PostgresConnection, from start: String,
    afterStart: Bool = false, to end: String = ";", throughEnd: Bool = false,
    renaming names: [String: String] = [:]
) throws -> String {
    let source = try connection.query("SELECT prosrc FROM pg_proc WHERE proname = $1", [function]).first!.string(0)
    let from = try #require(source.range(of: start))
    let to = try #require(source.range(of: end, range: from.upperBound..<source.endIndex))
    var text = String(
        source[(afterStart ? from.upperBound : from.lowerBound)..<(throughEnd ? to.upperBound : to.lowerBound)])
    for (name, replacement) in names.sorted(by: { $0.key.count > $1.key.count }) {
        text = text.replacingOccurrences(of: name, with: replacement)
    }
    return text
}
