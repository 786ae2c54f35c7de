/*
 * proxy/core/mem.c: libevent's small allocations on pages of their own, and the
 * bins of a connection's big blocks (see mem.h).
 *
 * Every block handed to libevent starts with a 16-byte header naming where
 * it came from: class 0 is malloc(), classes 1..NCLASS are 16-byte steps
 * of a simple pool.  Pool blocks are carved from mmap'd slabs and kept on
 * one free list per class; they are never returned to the system, so the
 * pool is as big as libevent's small allocations were at their peak (about
 * a megabyte at ten thousand tunnels).  What it buys is that nothing
 * long-lived of libevent's sits in malloc's heap among the connections'
 * blocks, so malloc_trim() can give the heap back once they are freed.
 *
 * libevent runs on two threads (the loop and the admin socket's, each
 * with a base of its own); the pool is per thread.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>

#include <event2/event.h>
#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

#include "proxy/core/mem.h"

#if defined(__SANITIZE_ADDRESS__)
#define MEM_PLAIN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_PLAIN 1
#endif
#endif

#define HDR 16		     /* keeps blocks 16-byte aligned, as malloc's are */
#define STEP 16
#define NCLASS 4	     /* pool blocks hold up to NCLASS * STEP = 64 bytes */
#define SLAB (64 * 1024)

struct hdr {
	size_t cls;
	size_t unused;
};

/* Per thread (the loop's and the admin socket's), so no locking: a block
 * freed on another thread than the one that took it simply joins that
 * thread's list. */
static _Thread_local void *freelist[NCLASS + 1];
static _Thread_local char *bump;
static _Thread_local size_t bump_left;

static void *
pool_get(size_t cls)
{
	struct hdr *h = freelist[cls];
	size_t need = HDR + cls * STEP;

	if (h != NULL) {
		/* cppcheck-suppress pointerSize ; a free block's first bytes are the link */
		memcpy(&freelist[cls], h, sizeof(void *));
	} else {
		if (bump_left < need) {
			void *slab = mmap(NULL, SLAB, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (slab == MAP_FAILED)
				return NULL;
			/* The rest of the old slab is too small for this
			 * class; it stays unused. */
			bump = slab;
			bump_left = SLAB;
		}
		h = (struct hdr *)(void *)bump;
		bump += need;
		bump_left -= need;
	}
	h->cls = cls;
	return (char *)h + HDR;
}

void *
px_mem_malloc(size_t n)
{
	struct hdr *h;

	if (n > 0 && n <= NCLASS * STEP)
		return pool_get((n + STEP - 1) / STEP);
	if (n > SIZE_MAX - HDR)
		return NULL;
	if ((h = malloc(n + HDR)) == NULL)
		return NULL;
	h->cls = 0;
	return (char *)h + HDR;
}

void
px_mem_free(void *p)
{
	struct hdr *h;
	size_t cls;

	if (p == NULL)
		return;
	h = (struct hdr *)(void *)((char *)p - HDR);
	if (h->cls == 0) {
		free(h);
		return;
	}
	cls = h->cls;
	if (cls > NCLASS)
		abort(); /* not a block of ours: the heap is corrupt */
	/* The free list's link overwrites the header; pool_get writes it
	 * again. */
	/* cppcheck-suppress pointerSize ; a free block's first bytes are the link */
	memcpy(h, &freelist[cls], sizeof(void *));
	freelist[cls] = h;
}

void *
px_mem_realloc(void *p, size_t n)
{
	struct hdr *h, *nh;
	void *q;

	if (p == NULL)
		return px_mem_malloc(n);
	if (n == 0) {
		px_mem_free(p);
		return NULL;
	}
	h = (struct hdr *)(void *)((char *)p - HDR);
	if (h->cls == 0) {
		if (n > SIZE_MAX - HDR)
			return NULL;
		/* A malloc'd block stays one, whatever its new size. */
		if ((nh = realloc(h, n + HDR)) == NULL)
			return NULL;
		return (char *)nh + HDR;
	}
	if (n <= h->cls * STEP)
		return p;
	if ((q = px_mem_malloc(n)) == NULL)
		return NULL;
	memcpy(q, p, h->cls * STEP);
	px_mem_free(p);
	return q;
}

/* The bins (mem.h): per thread, a stack of freed blocks each, linked
 * through their first bytes. */
#define BIN_MAX 32
static int bins_on; /* set once by px_mem_init(), before any thread */
static _Thread_local struct {
	void *top;
	unsigned n;
} bins[PX_BIN_N];

void *
px_mem_bin_get(enum px_mem_bin bin, size_t size)
{
	void *p = bins[bin].top;

	if (p == NULL)
		return malloc(size);
	memcpy(&bins[bin].top, p, sizeof(void *));
	bins[bin].n--;
	return p;
}

void
px_mem_bin_put(enum px_mem_bin bin, void *p)
{
	if (p == NULL)
		return;
	if (!bins_on || bins[bin].n >= BIN_MAX) {
		free(p);
		return;
	}
	memcpy(p, &bins[bin].top, sizeof(void *));
	bins[bin].top = p;
	bins[bin].n++;
}

void
px_mem_bin_trim(void)
{
	int i;

	for (i = 0; i < PX_BIN_N; i++) {
		while (bins[i].top != NULL) {
			void *p = bins[i].top;

			memcpy(&bins[i].top, p, sizeof(void *));
			free(p);
		}
		bins[i].n = 0;
	}
}

void
px_mem_trim(void)
{
	px_mem_bin_trim();
#ifndef MEM_PLAIN
	malloc_trim(0);
#endif
}

void
px_mem_init(void)
{
#ifndef MEM_PLAIN
#ifdef RUNNING_ON_VALGRIND
	/* memcheck should see every block libevent takes and frees. */
	if (RUNNING_ON_VALGRIND)
		return;
#endif
	event_set_mem_functions(px_mem_malloc, px_mem_realloc, px_mem_free);
	bins_on = 1;
#endif
}
