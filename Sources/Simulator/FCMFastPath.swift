/// The common FCM request body, accepted without building a document.
///
/// `FCMRequestValidator` parses every body into `JSONValue`s, which cost more than the rest of the simulator's
/// work for the request together. This scanner reads the body in place and vouches only for what it fully
/// understands: a body that is pure ASCII without escapes, one `message` with a `token`, string `data`, and
/// `android` with a string `priority`, `ttl` and string `data`; any other message field a valid JSON value. It
/// answers nil whenever it cannot be sure (a topic, a condition, an escape, a non-ASCII byte, an exponent, deep
/// nesting, and every kind of mistake): the full validator then decides, and it alone words rejections. So the
/// fast path may only accept what the full validator accepts, with the same target (`FCMFastPathTests`
/// compares the two).
enum FCMFastPath {
    struct Accepted: Equatable {
        var token: String
        var validateOnly: Bool
    }

    static func accept(_ body: [UInt8]) -> Accepted? {
        body.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            return scanner.request()
        }
    }
}

private struct Scanner: JSONByteScanner {
    /// Well inside JSONParser's limit (32): deeper bodies go to the full parser.
    static let maxDepth = 16
    /// Longer numbers could round to infinity, which JSONParser refuses.
    static let maxNumberLength = 15

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    // MARK: The request

    mutating func request() -> FCMFastPath.Accepted? {
        skipWhitespace()
        var keys = KeySet()
        guard objectStart(), peek != UInt8(ascii: "}") else { return nil }
        var validateOnly = false
        var token: String?
        var sawMessage = false
        while true {
            guard let key = memberKey(&keys) else { return nil }
            if equals(key, "message") {
                guard let found = message() else { return nil }
                token = found
                sawMessage = true
            } else if equals(key, "validate_only") || equals(key, "validateOnly") {
                if literal("true") {
                    validateOnly = true
                } else if literal("false") {
                    validateOnly = false
                } else {
                    return nil
                }
            } else {
                return nil
            }
            guard let more = memberEnd() else { return nil }
            if !more { break }
        }
        skipWhitespace()
        guard index == bytes.count, sawMessage, let token else { return nil }
        return FCMFastPath.Accepted(token: token, validateOnly: validateOnly)
    }

    /// The message object: its token when everything in it passes.
    mutating func message() -> String? {
        var keys = KeySet()
        guard objectStart(), peek != UInt8(ascii: "}") else { return nil }
        var token: String?
        while true {
            guard let key = memberKey(&keys) else { return nil }
            if equals(key, "token") {
                guard let value = plainString(), !value.isEmpty else { return nil }
                token = text(value)
            } else if equals(key, "topic") || equals(key, "condition") {
                return nil
            } else if equals(key, "data") {
                guard dataMap() else { return nil }
            } else if equals(key, "android") {
                guard android() else { return nil }
            } else if isOtherMessageField(key) {
                guard value(depth: 2) else { return nil }
            } else {
                return nil
            }
            guard let more = memberEnd() else { return nil }
            if !more { break }
        }
        return token
    }

    /// Message fields the validator does not look into.
    func isOtherMessageField(_ key: Range<Int>) -> Bool {
        equals(key, "name") || equals(key, "notification") || equals(key, "webpush") || equals(key, "apns")
            || equals(key, "fcm_options") || equals(key, "fcmOptions")
    }

    /// `android`: `priority` NORMAL or HIGH, `ttl` a duration of at most 4 weeks, `data` a string map; anything
    /// else a valid value (the validator ignores other fields).
    mutating func android() -> Bool {
        var keys = KeySet()
        guard objectStart() else { return false }
        if closesEmptyObject() { return true }
        while true {
            guard let key = memberKey(&keys) else { return false }
            if equals(key, "priority") {
                guard let value = plainString(), equals(value, "NORMAL") || equals(value, "HIGH") else { return false }
            } else if equals(key, "ttl") {
                guard let value = plainString(), let seconds = FCMRequestValidator.durationSeconds(text(value)),
                    seconds <= FCMRequestValidator.maxTTLSeconds
                else { return false }
            } else if equals(key, "data") {
                guard dataMap() else { return false }
            } else {
                guard value(depth: 3) else { return false }
            }
            guard let more = memberEnd() else { return false }
            if !more { break }
        }
        return true
    }

    /// A map of string to string, no reserved key, at most `maxDataBytes` of keys and values.
    mutating func dataMap() -> Bool {
        var keys = KeySet()
        guard objectStart() else { return false }
        if closesEmptyObject() { return true }
        var total = 0
        while true {
            guard let key = memberKey(&keys), let value = plainString() else { return false }
            if equals(key, "from") || equals(key, "message_type") || hasPrefix(key, "google") || hasPrefix(key, "gcm") {
                return false
            }
            total += key.count + value.count
            guard let more = memberEnd() else { return false }
            if !more { break }
        }
        return total <= FCMRequestValidator.maxDataBytes
    }

    // MARK: Objects

    /// Consumes `{` and the whitespace after it.
    mutating func objectStart() -> Bool {
        guard peek == UInt8(ascii: "{") else { return false }
        index += 1
        skipWhitespace()
        return true
    }

    /// Consumes the `}` of an object with no members, right after `objectStart()`.
    mutating func closesEmptyObject() -> Bool {
        guard peek == UInt8(ascii: "}") else { return false }
        index += 1
        return true
    }

    /// `"key"` `:`, then the whitespace before the value; nil for a key seen before in this object (JSONParser
    /// refuses duplicates) or anything the fast path does not take.
    mutating func memberKey(_ keys: inout KeySet) -> Range<Int>? {
        skipWhitespace()
        guard let key = plainString(), keys.insert(key, in: bytes) else { return nil }
        skipWhitespace()
        guard peek == UInt8(ascii: ":") else { return nil }
        index += 1
        skipWhitespace()
        return key
    }

    /// After a value: true for `,` (another member follows), false for the closing `}`, nil otherwise.
    mutating func memberEnd() -> Bool? {
        skipWhitespace()
        switch peek {
        case UInt8(ascii: ","):
            index += 1
            return true
        case UInt8(ascii: "}"):
            index += 1
            return false
        default:
            return nil
        }
    }

    // MARK: Values

    /// Any JSON value the fast path can vouch for.
    mutating func value(depth: Int) -> Bool {
        guard depth <= Self.maxDepth, let byte = peek else { return false }
        switch byte {
        case UInt8(ascii: "{"):
            var keys = KeySet()
            guard objectStart() else { return false }
            if closesEmptyObject() { return true }
            while true {
                guard memberKey(&keys) != nil, value(depth: depth + 1) else { return false }
                guard let more = memberEnd() else { return false }
                if !more { break }
            }
            return true
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return plainString() != nil
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    /// A string of printable ASCII without escapes: the range of its contents.
    mutating func plainString() -> Range<Int>? {
        guard peek == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<(index - 1)
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// RFC 8259 number syntax without an exponent, at most `maxNumberLength` bytes.
    mutating func number() -> Bool {
        let start = index
        guard numberWithoutExponent() else { return false }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") { return false }
        return index - start <= Self.maxNumberLength
    }

    // MARK: Bytes

    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    func equals(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        range.count == literal.utf8CodeUnitCount && hasPrefix(range, literal)
    }

    func hasPrefix(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard range.count >= count else { return false }
        for offset in 0..<count where bytes[range.lowerBound + offset] != literal.utf8Start[offset] { return false }
        return true
    }
}

/// The keys of one object so far (byte ranges; keys without escapes compare as bytes).
private struct KeySet {
    private var keys: [Range<Int>] = []

    /// False when an equal key is already in.
    mutating func insert(_ key: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for other in keys where other.count == key.count {
            var same = true
            for offset in 0..<key.count where bytes[other.lowerBound + offset] != bytes[key.lowerBound + offset] {
                same = false
                break
            }
            if same { return false }
        }
        if keys.isEmpty { keys.reserveCapacity(8) }
        keys.append(key)
        return true
    }
}
