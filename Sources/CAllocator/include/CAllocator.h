#ifndef CALLOCATOR_H
#define CALLOCATOR_H

// The allocator Herald's processes run on: jemalloc, linked in place of glibc's malloc (see CAllocator.c).

/// jemalloc's version ("5.3.0-0-g..."), or NULL when malloc is not jemalloc's.
const char *CAllocator_version(void);

/// jemalloc's `opt.dirty_decay_ms` as it took effect (this file's setting unless MALLOC_CONF overrides it), or
/// -2 when malloc is not jemalloc's.
long CAllocator_dirty_decay_ms(void);

#endif
