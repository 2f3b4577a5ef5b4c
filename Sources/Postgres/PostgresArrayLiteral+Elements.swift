extension PostgresArrayLiteral {
    /// The elements of a one-dimensional array in Postgres' output form (`{a,"b c","d\"e",NULL}`), each its text's
    /// bytes with quoting undone, nil for NULL; nil when `text` is not such an array (a nested or a bounded one).
    static func elements(_ text: UnsafeBufferPointer<UInt8>) -> [[UInt8]?]? {
        guard text.count >= 2, text.first == UInt8(ascii: "{"), text.last == UInt8(ascii: "}") else { return nil }
        var elements: [[UInt8]?] = []
        var index = 1
        let end = text.count - 1
        guard index < end else { return elements }
        while true {
            var element: [UInt8] = []
            if text[index] == UInt8(ascii: "\"") {
                index += 1
                while index < end && text[index] != UInt8(ascii: "\"") {
                    if text[index] == UInt8(ascii: "\\") { index += 1 }
                    guard index < end else { return nil }
                    element.append(text[index])
                    index += 1
                }
                guard index < end else { return nil }
                index += 1
                elements.append(element)
            } else {
                while index < end && text[index] != UInt8(ascii: ",") {
                    guard text[index] != UInt8(ascii: "{"), text[index] != UInt8(ascii: "\"") else { return nil }
                    element.append(text[index])
                    index += 1
                }
                // Unquoted NULL is SQL NULL; a text element "NULL" comes quoted.
                elements.append(element.map(PostgresResultStorage.lowercased) == Array("null".utf8) ? nil : element)
            }
            if index == end { return elements }
            guard text[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }
}
