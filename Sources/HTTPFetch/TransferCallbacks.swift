import CCurl
import Foundation

// libcurl's callbacks, as global functions (a closure written elsewhere could inherit an actor and trap when
// libcurl calls it from the fetcher's thread). Each gets its transfer through the unretained pointer set as
// its *DATA option; the fetcher's thread keeps the transfer alive while libcurl may call these.

/// CURLOPT_WRITEFUNCTION: appends body bytes up to `maxResponseBytes`. Returning less than given aborts the
/// transfer (CURLE_WRITE_ERROR), which `FetchTransfer.result` reads back as `too_large` or as a truncated
/// success.
func heraldFetchWriteBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let transfer = fetchTransfer(context)
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    let length = bytes.count
    let room = transfer.request.maxResponseBytes - transfer.body.count
    guard length <= room else {
        if transfer.request.oversize == .truncate {
            transfer.body.append(contentsOf: bytes.prefix(max(0, room)))
            transfer.truncated = true
        } else {
            transfer.oversize = true
        }
        return 0
    }
    transfer.body.append(contentsOf: bytes)
    return length
}

/// CURLOPT_HEADERFUNCTION: one whole header line per call (status lines included). A status line starts a
/// new response (an interim 1xx, or the next hop of a redirect), so the headers kept are the final response's.
func heraldFetchHeaderLine(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let transfer = fetchTransfer(context)
    var line = UnsafeRawBufferPointer(start: data, count: size * count)[...]
    let length = line.count
    while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: "\n") {
        line = line.dropLast()
    }
    if line.starts(with: "HTTP/".utf8) {
        transfer.headers = []
        transfer.headerBytes = 0
        return length
    }
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
        return length  // the blank line ending the block
    }
    transfer.headerBytes += length
    guard transfer.headerBytes <= transfer.settings.maxHeaderBytes else {
        transfer.oversize = true
        return 0
    }
    let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
    let value = String(decoding: line[line.index(after: colon)...], as: UTF8.self)
        .trimmingCharacters(in: .whitespaces)
    transfer.headers.append(HTTPFetchHeader(name, value))
    return length
}

/// CURLOPT_OPENSOCKETFUNCTION: the address policy, applied to the address libcurl is about to connect to (after
/// DNS, on every connection, redirect hops included). A refused address gets no socket, so no packet goes to
/// it; libcurl then tries the host's other addresses or fails with CURLE_COULDNT_CONNECT, which the transfer
/// reports as `address_refused`.
func heraldFetchOpenSocket(
    _ context: UnsafeMutableRawPointer?, _ purpose: curlsocktype,
    _ address: UnsafeMutablePointer<curl_sockaddr>?
) -> curl_socket_t {
    guard let context, let address else { return CCurl_socket_bad() }
    let transfer = fetchTransfer(context)
    var bytes = [UInt8](repeating: 0, count: 16)
    let length = Int(CCurl_sockaddr_ip(address, &bytes))
    guard length > 0, transfer.settings.policy.allows(Array(bytes.prefix(length))) else {
        transfer.refusedAddress = true
        return CCurl_socket_bad()
    }
    return CCurl_open_socket(address)
}

/// The transfer behind a callback's context: the unretained pointer set as its *DATA option.
private func fetchTransfer(_ context: UnsafeMutableRawPointer) -> FetchTransfer {
    Unmanaged<FetchTransfer>.fromOpaque(context).takeUnretainedValue()
}
