import CCurl
import Foundation
import ServiceSupport

/// The CA certificates libcurl verifies peers against when an extra CA file is configured: the system bundle
/// (the path libcurl was built with) followed by the extra file, as one PEM text handed to every transfer as
/// CURLOPT_CAINFO_BLOB. A blob replaces libcurl's default CA file rather than adding to it, hence the
/// concatenation. Without an extra file no blob is set and libcurl uses (and caches) its defaults.
///
/// The memory is owned here and passed without copying (CURL_BLOB_NOCOPY): it lives as long as the fetcher,
/// whose thread ends every transfer before the fetcher goes.
final class TrustBundle: @unchecked Sendable {
    /// Immutable after init.
    let bytes: UnsafeMutableRawBufferPointer

    private static let fallbackSystemBundle = "/etc/ssl/certs/ca-certificates.crt"

    init(extraCAFile: String) throws(ConfigurationError) {
        let extra = try HTTPFetchConfiguration.readCertificates(extraCAFile)
        var text = Self.systemBundle()
        if let last = text.last, last != UInt8(ascii: "\n") {
            text.append(UInt8(ascii: "\n"))
        }
        text += extra
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: text.count, alignment: 1)
        text.withUnsafeBytes { bytes.copyMemory(from: $0) }
    }

    deinit {
        bytes.deallocate()
    }

    /// The system's bundle, or nothing when libcurl knows none and the usual Debian path is absent (libcurl's
    /// CA directory, which a blob does not replace, still applies then).
    private static func systemBundle() -> [UInt8] {
        let path = CCurl_default_ca_bundle().map { String(cString: $0) } ?? fallbackSystemBundle
        return FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
    }
}
