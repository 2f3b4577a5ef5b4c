/// Bytes waiting to be written to a socket: appended at the end, consumed from the front.
///
/// A manually managed region rather than `[UInt8]`: the hot path appends nghttp2's frames and hands a pointer to
/// `send`/`SSL_write`, and this keeps that free of copy-on-write checks and re-slicing.
struct OutputBuffer: ~Copyable {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0
    private var end = 0

    init(capacity: Int = 128 * 1024) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    var count: Int { end - start }
    var isEmpty: Bool { end == start }

    mutating func append(_ bytes: UnsafeRawPointer, count: Int) {
        if end + count > capacity {
            makeRoom(for: count)
        }
        (storage + end).copyMemory(from: bytes, byteCount: count)
        end += count
    }

    /// The unwritten bytes.
    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + start, count: end - start)
    }

    mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }

    private mutating func makeRoom(for count: Int) {
        let used = end - start
        if used + count <= capacity, start > 0 {
            storage.copyMemory(from: storage + start, byteCount: used)
        } else {
            var newCapacity = capacity * 2
            while newCapacity < used + count {
                newCapacity *= 2
            }
            let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            grown.copyMemory(from: storage + start, byteCount: used)
            storage.deallocate()
            storage = grown
            capacity = newCapacity
        }
        start = 0
        end = used
    }
}
