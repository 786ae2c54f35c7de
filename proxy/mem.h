/*
 * proxy/mem.h: where libevent's memory comes from.
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

#endif
