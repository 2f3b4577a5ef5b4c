import CCurl
import Foundation
import ServiceSupport

/// The CA certificates libcurl verifies peers against when an extra CA file is configured: the system bundle
/// (the path libcurl was built with) followed by the extra file, written once to a private file (a directory
/// only root reads, removed with the fetcher) that every transfer names as CURLOPT_CAINFO. A CA file rather
/// than CURLOPT_CAINFO_BLOB: libcurl (7.87+, OpenSSL) parses a CA *file* once and shares the store among the
/// fetcher's connections for a day (CURLOPT_CA_CACHE_TIMEOUT), where a blob is parsed into a store of its
/// own for every connection and copied into it (bench/webhooks: 64 connections to one receiver took the
/// worker from 37 to 103 MB). CAINFO replaces libcurl's default file rather than adding to it, hence the
/// concatenation. Without an extra file libcurl uses (and caches) its defaults.
final class TrustBundle: Sendable {
    /// The bundle's path, for CURLOPT_CAINFO.
    let path: String
    private let directory: String

    private static let fallbackSystemBundle = "/etc/ssl/certs/ca-certificates.crt"

    init(extraCAFile: String) throws(ConfigurationError) {
        let extra = try HTTPFetchConfiguration.readCertificates(extraCAFile)
        var text = Self.systemBundle()
        if let last = text.last, last != UInt8(ascii: "\n") {
            text.append(UInt8(ascii: "\n"))
        }
        text += extra
        var template = Array((NSTemporaryDirectory() + "herald-trust.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ConfigurationError(
                variable: HTTPFetchConfiguration.caFileVariable,
                problem: "the CA bundle could not be written (no temporary directory)")
        }
        directory = String(cString: made)
        path = directory + "/ca-bundle.pem"
        guard FileManager.default.createFile(atPath: path, contents: Data(text), attributes: [.posixPermissions: 0o600])
        else {
            rmdir(directory)
            throw ConfigurationError(
                variable: HTTPFetchConfiguration.caFileVariable,
                problem: "the CA bundle could not be written")
        }
    }

    deinit {
        unlink(path)
        rmdir(directory)
    }

    /// The system's bundle, or nothing when libcurl knows none and the usual Debian path is absent.
    private static func systemBundle() -> [UInt8] {
        let path = CCurl_default_ca_bundle().map { String(cString: $0) } ?? fallbackSystemBundle
        return FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
    }
}
