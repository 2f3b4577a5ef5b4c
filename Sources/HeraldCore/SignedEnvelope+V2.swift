import Foundation

/// Envelope v2: `sig2`, beside v1's `sig`, covers what v1 leaves out (every `aps.alert` member, `sound`,
/// `interruption-level`, `thread-id`, `category`, `mutable-content`, any other `aps` member), binds the payload to
/// its recipient and carries an expiry (`exp`, unix seconds as a string).
///
/// Canonical form, one for both platforms: flatten the JSON object (the whole APNs body; FCM's `data` map)
/// into leaves, each a path of keys and a scalar value (a string as it is; `true`/`false`; an integer in
/// decimal), leaving out the top-level `kid`, `sig` and `sig2`. Each leaf is a line, the JSON array of its path
/// and value (`["aps","alert","title","[Acme] Hi"]`, escaped as `JSONWriter` escapes, RFC 8785); lines are
/// sorted by their UTF-8 bytes and joined by `\n`. The message is
/// `herald-envelope-v2\n` + the recipient's userId as a JSON string + `\n` + the lines, and
/// `sig2` = base64url(HMAC-SHA256(key[kid], message)), unpadded. The recipient is not carried: the app signs
/// with its own userId, so a payload shown to another user fails.
///
/// `sig2` sits beside `exp` at the top level, where v1's rule (every key beside `aps` but `kid` and `sig`) covers
/// both: `sig` is computed last, over them too, so builds that verify only `sig` keep verifying.
extension SignedEnvelope {
    public static let v2Prefix = "herald-envelope-v2\n"
    /// Top-level keys the v2 canonical form leaves out: the signatures and the key id.
    public static let v2Unsigned: Set<String> = ["kid", "sig", "sig2"]

    /// One signed leaf: its path of keys and its value as a string.
    public struct Leaf: Sendable, Equatable {
        public var path: [String]
        public var value: String

        public init(_ path: [String], _ value: String) {
            self.path = path
            self.value = value
        }
    }

    /// The message `sig2` is the HMAC of.
    public static func v2Message(_ leaves: [Leaf], recipient userID: String) -> [UInt8] {
        var out = v2Header(recipient: userID)
        out.append(contentsOf: v2Lines(leaves))
        return out
    }

    /// `herald-envelope-v2\n"<userId>"\n`.
    public static func v2Header(recipient userID: String) -> [UInt8] {
        var out = Array(v2Prefix.utf8)
        JSONWriter.writeString(userID, into: &out)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// The leaves as sorted lines joined by `\n`.
    public static func v2Lines(_ leaves: [Leaf]) -> [UInt8] {
        var lines: [[UInt8]] = leaves.map { leaf in
            var line: [UInt8] = [UInt8(ascii: "[")]
            for key in leaf.path {
                JSONWriter.writeString(key, into: &line)
                line.append(UInt8(ascii: ","))
            }
            JSONWriter.writeString(leaf.value, into: &line)
            line.append(UInt8(ascii: "]"))
            return line
        }
        lines.sort { $0.lexicographicallyPrecedes($1) }
        var out: [UInt8] = []
        out.reserveCapacity(lines.reduce(0) { $0 + $1.count + 1 })
        for (position, line) in lines.enumerated() {
            if position > 0 { out.append(UInt8(ascii: "\n")) }
            out.append(contentsOf: line)
        }
        return out
    }

    /// The signed leaves of a received payload (APNs body or FCM `data`), as a verifier collects them; nil when
    /// the object holds something no Herald payload has (an array, a fraction, null).
    public static func v2Leaves(of payload: JSONValue) -> [Leaf]? {
        guard let members = payload.objectMembers else { return nil }
        var leaves: [Leaf] = []
        func collect(_ members: [(key: String, value: JSONValue)], under path: [String]) -> Bool {
            for member in members where !(path.isEmpty && v2Unsigned.contains(member.key)) {
                let here = path + [member.key]
                switch member.value {
                case .string(let text): leaves.append(Leaf(here, text))
                case .bool(let flag): leaves.append(Leaf(here, flag ? "true" : "false"))
                case .number(let number):
                    guard number == number.rounded(), abs(number) < 1e15 else { return false }
                    leaves.append(Leaf(here, String(Int64(number))))
                case .object(let inner): guard collect(inner, under: here) else { return false }
                default: return false
                }
            }
            return true
        }
        return collect(members, under: []) ? leaves : nil
    }

    /// Why a payload fails v2 verification; nil when it passes.
    public enum V2Failure: String, Sendable {
        case malformed, unknownKey, badSignature, expired
    }

    /// Checks `sig2` of a received payload (APNs body or FCM `data`) for `recipient` at `now`: `mac` returns
    /// base64url(HMAC-SHA256(key, message)) for a known key id, nil for an unknown one.
    public static func verifyV2(
        _ payload: JSONValue, recipient userID: String, now: Date,
        mac: (_ keyID: String, _ message: [UInt8]) -> String?
    ) -> V2Failure? {
        guard let kid = payload["kid"]?.stringValue, let sig2 = payload["sig2"]?.stringValue,
            let expText = payload["exp"]?.stringValue, let exp = Int(expText),
            let leaves = v2Leaves(of: payload)
        else { return .malformed }
        guard let expected = mac(kid, v2Message(leaves, recipient: userID)) else { return .unknownKey }
        // Compared byte by byte without an early exit.
        let lhs = Array(expected.utf8), rhs = Array(sig2.utf8)
        guard lhs.count == rhs.count, zip(lhs, rhs).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else { return .badSignature }
        return Int(now.timeIntervalSince1970.rounded(.down)) > exp ? .expired : nil
    }
}
