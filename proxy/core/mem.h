/*
 * proxy/core/mem.h: where libevent's memory comes from.
 *
 * libevent keeps one small record per descriptor number it has ever
 * watched (its fd map) until the event base is freed.  With glibc's
 * malloc these records land between the connections' own allocations, so
 * after a burst of thousands of connections each record pins the heap page
 * it sits on and RSS stays at the peak long after the connections closed.
 * px_mem_init() gives libevent's small allocations pages of their own;
 * everything else still comes from malloc().
 */
#ifndef POSTERN_PROXY_MEM_H
#define POSTERN_PROXY_MEM_H

#include <stddef.h>

/*
 * Install the allocator with event_set_mem_functions().  Must be called
 * before any other libevent call in the process (a block that libevent
 * took from malloc() must never reach our free).  Does nothing in
 * sanitizer builds or under valgrind, so that AddressSanitizer and memcheck
 * see every libevent block.
 */
void px_mem_init(void);

/*
 * The functions px_mem_init() installs, for the unit test: malloc, realloc
 * and free as libevent uses them (realloc(P, 0) frees P and returns
 * NULL).  Blocks are 16-byte aligned; a freed block of up to 64 bytes is
 * the next one handed out of its size class on the same thread.
 */
void *px_mem_malloc(size_t n);
void *px_mem_realloc(void *p, size_t n);
void px_mem_free(void *p);
/* The bytes the calling thread's pool has mapped (for the unit test). */
size_t px_mem_pool_size(void);

/*
 * Bins of the big blocks made and freed once per connection on its loop's
 * thread (a connection's struct, 1.8 KB).  glibc's per-thread cache stops
 * at 1,032 bytes: a bigger block went through malloc's slow path both
 * ways, 2,700 instructions a connection of its 46,600 (callgrind).  The
 * smaller state of a connection's mode (forward path, tunnel: under 400
 * bytes each, made when the mode begins) is left to that cache.  Each
 * thread keeps up to 32 freed blocks a bin for its next ones;
 * px_mem_bin_trim() gives the calling thread's back (when its loop has
 * no connection left, and at its end).  Plain malloc() and free() unless
 * px_mem_init() turned the pool on: sanitizers and memcheck see every
 * block, and a block used after its free is theirs to find.
 */
enum px_mem_bin {
	PX_BIN_CONN, /* struct px_conn */
	PX_BIN_N,
};
/* A block of SIZE bytes (always the same for one bin), not zeroed; NULL
 * when out of memory. */
void *px_mem_bin_get(enum px_mem_bin bin, size_t size);
/* Give back P, from px_mem_bin_get(BIN, ...); NULL is a no-op. */
void px_mem_bin_put(enum px_mem_bin bin, void *p);
/* Free the calling thread's binned blocks. */
void px_mem_bin_trim(void);
/* The M_TRIM_THRESHOLD the proxy runs with (conns.c sets it); px_mem_trim()
 * puts it back after trimming. */
#define PX_MEM_TRIM_THRESHOLD (4 << 20)
/*
 * px_mem_bin_trim(), unmap the calling thread's pool slabs whose blocks
 * are all free, then give malloc's free heap back to the system
 * (malloc_trim(), and the free top of the calling thread's arena).  Only
 * the bins and the pool in sanitizer builds: their malloc is not glibc's,
 * and glibc's malloc_trim() on its unused arena crashes.
 */
void px_mem_trim(void);

/*
 * What the process holds: *RSS its resident bytes (/proc/self/statm; 0
 * when /proc cannot be read) and *HEAP the bytes malloc has handed out
 * and not had back, in every arena (mallinfo2(); 0 in sanitizer builds,
 * whose malloc is not glibc's).  For /status: a leak shows as HEAP that
 * does not come back.
 */
void px_mem_usage(size_t *rss, size_t *heap);

/*
 * N rounded up to malloc()'s alignment: where an object may start that
 * follows N bytes in the same block (a relay's or a connector's events,
 * assigned in its own allocation).
 */
static inline size_t
px_mem_round(size_t n)
{
	return (n + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * _Alignof(max_align_t);
}

#endif
