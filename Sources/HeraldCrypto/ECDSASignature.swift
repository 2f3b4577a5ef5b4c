import COpenSSL

/// Converts ECDSA signatures between OpenSSL's DER `ECDSA-Sig-Value` and the raw fixed-width
/// `r || s` that JWS (RFC 7518 section 3.4) and therefore APNs provider tokens use.
enum ECDSASignature {
    /// DER to `r || s`, each left-padded to `componentLength` bytes (32 for P-256).
    static func raw(fromDER der: [UInt8], componentLength: Int) -> [UInt8]? {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature = parsed else {
            ERR_clear_error()
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        guard let r, let s else { return nil }
        var out = [UInt8](repeating: 0, count: 2 * componentLength)
        let written = out.withUnsafeMutableBufferPointer { buffer -> (Int32, Int32) in
            let base = buffer.baseAddress!
            return (
                BN_bn2binpad(r, base, Int32(componentLength)),
                BN_bn2binpad(s, base + componentLength, Int32(componentLength))
            )
        }
        guard written.0 == Int32(componentLength), written.1 == Int32(componentLength) else { return nil }
        return out
    }

    /// `r || s` (two halves of equal length) to DER. nil for an odd or empty input.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard !raw.isEmpty, raw.count % 2 == 0, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let half = raw.count / 2
        let (r, s) = raw.withUnsafeBufferPointer { buffer in
            (BN_bin2bn(buffer.baseAddress, Int32(half), nil), BN_bin2bn(buffer.baseAddress! + half, Int32(half), nil))
        }
        // ECDSA_SIG_set0 takes ownership of both numbers only when it succeeds.
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            ERR_clear_error()
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? out : nil
    }
}
