/// A FIFO of requests waiting for a stream; requests that must be resent go to the front.
struct RequestQueue {
    private var items: [PendingRequest] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    mutating func append(_ request: PendingRequest) {
        items.append(request)
    }

    /// Puts a request back at the front (it was submitted before everything still queued).
    mutating func prepend(_ request: PendingRequest) {
        if head > 0 {
            head -= 1
            items[head] = request
        } else {
            items.insert(request, at: 0)
        }
    }

    var first: PendingRequest? { isEmpty ? nil : items[head] }

    mutating func removeFirst() -> PendingRequest? {
        guard !isEmpty else {
            return nil
        }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    /// Removes and returns everything.
    mutating func removeAll() -> [PendingRequest] {
        let all = Array(items[head...])
        items.removeAll()
        head = 0
        return all
    }

    /// Calls `body` for each queued request, in order.
    func forEach(_ body: (PendingRequest) -> Void) {
        for index in head..<items.count {
            body(items[index])
        }
    }
}
