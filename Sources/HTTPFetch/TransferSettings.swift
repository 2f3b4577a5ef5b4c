/// What every transfer of one fetcher shares.
struct TransferSettings: Sendable {
    let policy: AddressPolicy
    let userAgent: String
    /// Set when an extra CA file is configured.
    let trust: TrustBundle?
    /// Bytes of headers kept per response; a server sending more fails the fetch with `too_large`.
    let maxHeaderBytes = 64 * 1024
}
