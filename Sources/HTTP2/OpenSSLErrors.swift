import COpenSSL

/// OpenSSL's error queue as text (and emptied, so the next failure starts clean). Never contains payload data.
func drainOpenSSLErrors() -> String {
    var messages: [String] = []
    var buffer = [CChar](repeating: 0, count: 256)
    while true {
        let code = ERR_get_error()
        if code == 0 {
            break
        }
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
    return messages.isEmpty ? "no OpenSSL error recorded" : messages.joined(separator: "; ")
}

/// Macros and `#define`d option bits Swift does not import (their values are part of OpenSSL 3's ABI).
enum OpenSSLConstant {
    static let optionNoCompression: UInt64 = 1 << 17
    static let optionCipherServerPreference: UInt64 = 1 << 22
    static let optionNoRenegotiation: UInt64 = 1 << 30
}
