import CSystem
import Foundation

/// How many malloc arenas a long-running process keeps. glibc allows up to 8 per core and keeps the memory
/// freed in each: a server whose dozens of threads take turns at large requests (a 1,000-recipient push)
/// raises one arena after another to that request's high-water mark, so its RSS climbs for an hour while
/// its live heap stays flat (bench/soak: an intake's RSS up a quarter in an hour; heaptrack under the same
/// load: an 8 MB peak heap and nothing leaked). One arena per core, and at least two, keeps RSS near the
/// live heap; with two cores at most two threads allocate at once anyway. `MALLOC_ARENA_MAX`, when the
/// operator sets it, wins (glibc reads it itself).
public enum MemoryArenas {
    /// Called first thing by herald-intake and herald-worker.
    public static func limitToProcessors() {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
        _ = mallopt(M_ARENA_MAX, Int32(max(2, ProcessInfo.processInfo.activeProcessorCount)))
    }
}
