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

/// Admission of a new connection against the server's limit (`HTTPServerConfiguration.connectionLimit`) and its
/// client address's (`perAddressConnectionLimit`), both kept by the server rather than by libmicrohttpd:
/// libmicrohttpd closes a connection over its own limit as soon as it accepts it (a client that has already sent a
/// request reads a reset and cannot tell a refusal from a crash), and at its limit stops accepting (new clients
/// wait in the kernel's accept queue until they give up). Here libmicrohttpd's limit is the server's plus a
/// reserve (`libraryLimit`), and a connection over either limit stays open until its first request, which is
/// answered with the refusal (`overloaded` or `tooManyConnections`: 503, `Retry-After`, `Connection: close`).
///
/// Only admitted connections are counted: a refused one is closed after its answer, or without one if it sends
/// nothing (the read deadline, shortened for it).
final class ConnectionAdmission: Sendable {
    /// What a new connection is.
    enum Verdict {
        /// Counted until it closes; under the address it is counted for, when there is a per-address limit.
        case admitted(ClientAddress?)
        /// Over a limit: its first request gets this answer.
        case refused(HTTPRejection)
    }

    private struct Counts {
        var open = 0
        var perAddress: [ClientAddress: Int] = [:]
    }

    let serverLimit: Int
    /// 0: no per-address limit.
    let addressLimit: Int
    private let counts = Mutex(Counts())

    init(serverLimit: Int, addressLimit: Int) {
        self.serverLimit = serverLimit
        self.addressLimit = addressLimit
    }

    /// What libmicrohttpd is told to accept: the server's limit plus a reserve (a quarter, at least 16) for
    /// connections that are only answered with a refusal.
    static func libraryLimit(for serverLimit: Int) -> Int {
        serverLimit + max(16, serverLimit / 4)
    }

    /// Counts a new connection, or refuses it when the server, or its address, already has its limit open.
    func admit(_ connection: OpaquePointer) -> Verdict {
        let address = addressLimit > 0 ? ClientAddress(of: connection) : nil
        return counts.withLock { counts in
            guard counts.open < serverLimit else {
                return .refused(.overloaded)
            }
            if let address {
                let fromAddress = counts.perAddress[address, default: 0]
                guard fromAddress < addressLimit else {
                    return .refused(.tooManyConnections)
                }
                counts.perAddress[address] = fromAddress + 1
            }
            counts.open += 1
            return .admitted(address)
        }
    }

    /// Connections admitted and not yet closed.
    var admitted: Int {
        counts.withLock { $0.open }
    }

    /// An admitted connection closed.
    func release(_ address: ClientAddress?) {
        counts.withLock { counts in
            counts.open -= 1
            guard let address, let fromAddress = counts.perAddress[address] else {
                return
            }
            if fromAddress <= 1 {
                counts.perAddress.removeValue(forKey: address)
            } else {
                counts.perAddress[address] = fromAddress - 1
            }
        }
    }
}
