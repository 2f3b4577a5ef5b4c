#include <stddef.h>
#include <sys/types.h>
#include <jemalloc/jemalloc.h>
#include "CAllocator.h"

// Why jemalloc: a worker allocates a claim's deliveries and requests on one thread in batches of
// hundreds and frees them on others; glibc's per-thread cache holds 7 chunks a size, so most of those
// allocations took its slow path (_int_malloc, unlink_chunk, malloc_consolidate: 15-26% of the
// worker's and the simulator's CPU in the drain). jemalloc's caches absorb such batches.
//
// The settings, read by jemalloc at its first allocation (MALLOC_CONF in the environment is read
// after them and wins):
// - narenas:2: a server's dozens of threads share two arenas (behind per-thread caches), so memory
//   one thread freed serves the next; one arena per thread would keep each one's high-water mark.
// - dirty_decay_ms:1000, muzzy_decay_ms:0: pages freed are returned to the system within a second,
//   so RSS follows the live heap after a burst (a 1,000-recipient push, a drain).
const char *malloc_conf = "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0";

const char *CAllocator_version(void) {
    const char *version = NULL;
    size_t size = sizeof(version);
    if (mallctl("version", &version, &size, NULL, 0) != 0) {
        return NULL;
    }
    return version;
}

long CAllocator_dirty_decay_ms(void) {
    ssize_t value = 0;
    size_t size = sizeof(value);
    if (mallctl("opt.dirty_decay_ms", &value, &size, NULL, 0) != 0) {
        return -2;
    }
    return (long)value;
}
