import CAllocator

/// The allocator every process runs on: jemalloc, linked in place of glibc's malloc, with the settings and
/// reasons in Sources/CAllocator/CAllocator.c (`MALLOC_CONF` overrides them).
public enum Allocator {
    /// jemalloc's version, or nil when malloc is not jemalloc's (the library was not linked ahead of libc).
    public static var version: String? {
        CAllocator_version().map { String(cString: $0) }
    }

    /// What the startup log lines say: "jemalloc 5.3.0-0-g..." or, if it was not linked first, "glibc".
    public static var name: String {
        version.map { "jemalloc \($0)" } ?? "glibc"
    }

    /// `opt.dirty_decay_ms` as it took effect, or nil when malloc is not jemalloc's.
    public static var dirtyDecayMilliseconds: Int? {
        let value = CAllocator_dirty_decay_ms()
        return value == -2 ? nil : value
    }
}
