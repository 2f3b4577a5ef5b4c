import CMicroHTTPD
import Synchronization

/// A client's IP address as a key (IPv4 and IPv4-mapped IPv6 alike as the 4 bytes, IPv6 as 16).
struct ClientAddress: Hashable, Sendable {
    let high: UInt64
    let low: UInt64
    let length: Int

    /// The connection's peer address, or nil if libmicrohttpd does not know it.
    init?(of connection: OpaquePointer) {
        var bytes = (UInt64(0), UInt64(0))
        let length = withUnsafeMutableBytes(of: &bytes) { buffer in
            CMicroHTTPD_client_address(connection, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard length > 0 else {
            return nil
        }
        self.high = bytes.0
        self.low = bytes.1
        self.length = length
    }
}

/// The per-address connection limit (`HTTPServerConfiguration.perAddressConnectionLimit`), kept by the server
/// rather than by libmicrohttpd: libmicrohttpd closes a connection over its limit as soon as it accepts it, so a
/// client that has already sent a request on it reads a reset (or an empty answer) and cannot tell a refusal from
/// a crash. Here a connection over the limit stays open until its first request, which is answered with the
/// `tooManyConnections` rejection (503, `Retry-After`, `Connection: close`).
///
/// Only connections within the limit are counted: one over it is refused on its first request, and closed
/// without an answer if it sends none (the read deadline, shortened for it).
final class ConnectionsPerAddress: Sendable {
    /// 0: no limit.
    let limit: Int
    private let counts = Mutex<[ClientAddress: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection from `address`; false when the address already has `limit` connections (the new
    /// one is then not counted). Always true without a limit or an address.
    func admit(_ address: ClientAddress?) -> Bool {
        guard limit > 0, let address else {
            return true
        }
        return counts.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limit else {
                return false
            }
            counts[address] = open + 1
            return true
        }
    }

    /// A counted connection from `address` closed.
    func release(_ address: ClientAddress) {
        counts.withLock { counts in
            guard let open = counts[address] else {
                return
            }
            if open <= 1 {
                counts.removeValue(forKey: address)
            } else {
                counts[address] = open - 1
            }
        }
    }
}
