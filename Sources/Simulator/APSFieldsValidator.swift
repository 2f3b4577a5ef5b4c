/// The types and values Apple defines for the `aps` keys that decide how a notification is presented
/// (the "Generating a remote notification" payload reference):
/// - `thread-id`: a string (the app-specific group the notification stacks in);
/// - `category`: a string (the identifier of a notification category the app registers, whose actions it shows);
/// - `sound`: a string (a sound file name, or `default`) or a dictionary (a critical alert's sound);
/// - `interruption-level`: one of `passive`, `active`, `time-sensitive`, `critical`.
///
/// APNs documents no reason for a payload that breaks these, and the device rather than APNs is what
/// ignores such a key; the simulator refuses the push (`APNsRejection.apsField`) so that a sender's
/// mistake shows in a test instead of as a notification that silently stacks, sounds or acts wrong. Keys
/// that are absent are fine: each of them is optional.
///
/// Reads the body in place (`JSONShape.forEachMember`), so an alert push still builds no document.
enum APSFieldsValidator {
    static func check(_ body: [UInt8]) -> APNsRejection? {
        var rejection: APNsRejection?
        JSONShape.forEachMember(ofObject: "aps", in: body) { key, value in
            guard rejection == nil else { return }
            let first = body[value.lowerBound]
            if JSONShape.string(body, key, equals: "thread-id") {
                if first != UInt8(ascii: "\"") { rejection = .apsField("aps.thread-id must be a string") }
            } else if JSONShape.string(body, key, equals: "category") {
                if first != UInt8(ascii: "\"") { rejection = .apsField("aps.category must be a string") }
            } else if JSONShape.string(body, key, equals: "sound") {
                if first != UInt8(ascii: "\"") && first != UInt8(ascii: "{") {
                    rejection = .apsField("aps.sound must be a string or a dictionary")
                }
            } else if JSONShape.string(body, key, equals: "interruption-level") {
                if !isInterruptionLevel(body, value) {
                    rejection = .apsField("aps.interruption-level must be passive, active, time-sensitive or critical")
                }
            }
        }
        return rejection
    }

    /// `value` is a JSON string holding one of Apple's four levels.
    private static func isInterruptionLevel(_ body: [UInt8], _ value: Range<Int>) -> Bool {
        guard value.count >= 2, body[value.lowerBound] == UInt8(ascii: "\"") else { return false }
        let inner = (value.lowerBound + 1)..<(value.upperBound - 1)
        return JSONShape.string(body, inner, equals: "passive") || JSONShape.string(body, inner, equals: "active")
            || JSONShape.string(body, inner, equals: "time-sensitive")
            || JSONShape.string(body, inner, equals: "critical")
    }
}
