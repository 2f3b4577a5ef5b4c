import Foundation
import ServiceSupport

/// How an `HTTPFetcher` connects. Read from the environment in one place (`from(_:)`), with the catalog's names and
/// defaults (`Settings`).
public struct HTTPFetchConfiguration: Sendable, Equatable {
    public static let allowPrivateVariable = Settings.webhookAllowPrivate.name
    public static let caFileVariable = Settings.caFile.name

    /// Connect to loopback, private, link-local and other non-global addresses too (never to a cloud metadata
    /// service). For tests and receivers on a private network; see `AddressPolicy`.
    public var allowPrivateAddresses: Bool
    /// A PEM file of CA certificates trusted in addition to the system's (the test CA, a private CA).
    public var extraCAFile: String?
    /// Sent on every request unless the request sets its own.
    public var userAgent: String

    public init(
        allowPrivateAddresses: Bool = Settings.webhookAllowPrivate.flag, extraCAFile: String? = nil,
        userAgent: String = "Herald/1"
    ) {
        self.allowPrivateAddresses = allowPrivateAddresses
        self.extraCAFile = extraCAFile
        self.userAgent = userAgent
    }

    public var addressPolicy: AddressPolicy { AddressPolicy(allowPrivateAddresses: allowPrivateAddresses) }

    /// `HERALD_WEBHOOK_ALLOW_PRIVATE` (0 or 1, default 0) and `HERALD_CA_FILE` (optional), validated.
    public static func from(_ reader: EnvironmentReader) throws(ConfigurationError) -> HTTPFetchConfiguration {
        let allow = try reader.integer(allowPrivateVariable, default: Settings.webhookAllowPrivate.flag ? 1 : 0)
        guard allow == 0 || allow == 1 else {
            throw ConfigurationError(variable: allowPrivateVariable, problem: "must be 0 or 1")
        }
        let configuration = HTTPFetchConfiguration(
            allowPrivateAddresses: allow == 1,
            extraCAFile: reader.optional(caFileVariable))
        try configuration.validate()
        return configuration
    }

    /// The CA file, when set, must be readable and hold at least one PEM certificate.
    public func validate() throws(ConfigurationError) {
        if let extraCAFile {
            _ = try Self.readCertificates(extraCAFile)
        }
        guard !userAgent.isEmpty, !userAgent.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
            throw ConfigurationError(variable: "userAgent", problem: "must be printable text")
        }
    }

    /// The PEM text of `path`; the error names `HERALD_CA_FILE`, never the file's content.
    static func readCertificates(_ path: String) throws(ConfigurationError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(variable: caFileVariable, problem: "names no readable file")
        }
        let text = [UInt8](data)
        guard text.firstRange(of: Array("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
            throw ConfigurationError(variable: caFileVariable, problem: "holds no PEM certificate")
        }
        return text
    }
}
