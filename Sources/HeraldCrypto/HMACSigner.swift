import HeraldCore

/// Signs payloads with the active key of `HERALD_SIGNING_KEYS`. The other keys are configured
/// for rotation (the host build accepts several); Herald signs only with the active one.
public struct HMACSigner: PayloadSigner {
    public let keyID: String
    private let key: [UInt8]

    public init(keyID: String, key: [UInt8]) {
        self.keyID = keyID
        self.key = key
    }

    public func signature(for message: [UInt8]) -> String {
        Base64URL.encode(Digest.hmacSHA256(key: key, message: message))
    }
}
