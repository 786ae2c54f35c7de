/*
 * proxy/core/mem.c: libevent's small allocations on pages of their own, and the
 * bins of a connection's big blocks (see mem.h).
 *
 * Every block handed to libevent starts with a 16-byte header naming where
 * it came from: class 0 is malloc(), classes 1..NCLASS are 16-byte steps
 * of a simple pool.  Pool blocks are carved from mmap'd slabs and kept on
 * one free list per class, so the pool grows to what libevent's small
 * allocations were at their peak (about a megabyte at ten thousand
 * tunnels); px_mem_trim() unmaps the slabs whose every block is free.
 * What it buys is that nothing long-lived of libevent's sits in malloc's
 * heap among the connections' blocks, so malloc_trim() can give the heap
 * back once they are freed.
 *
 * libevent runs on two threads (the loop and the admin socket's, each
 * with a base of its own); the pool is per thread.
 */
#include "config.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

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
#define SLAB (64 * 1024)     /* a power of two: slabs are aligned to it */

struct hdr {
	size_t cls;
	size_t unused;
};

/* The head of a slab; its blocks follow.  A block's slab is its address
 * rounded down to SLAB. */
struct slab {
	struct slab *next;   /* the owner's slabs */
	const void *owner;   /* the thread that carved it (its &slabs) */
	size_t carved;	     /* bytes handed out of it */
	size_t free;	     /* during a trim: bytes of it on the owner's lists */
};

/* Per thread (the loop's and the admin socket's), so no locking: a block
 * freed on another thread than the one that took it simply joins that
 * thread's list. */
static _Thread_local void *freelist[NCLASS + 1];
static _Thread_local char *bump;
static _Thread_local size_t bump_left;
static _Thread_local struct slab *slabs, *cur;
static _Thread_local size_t nslabs;

static struct slab *
slab_of(const void *block)
{
	return (struct slab *)((uintptr_t)block & ~(uintptr_t)(SLAB - 1));
}

/* A slab aligned to SLAB: map twice its size and unmap the ends. */
static struct slab *
slab_new(void)
{
	char *m, *a;
	struct slab *sl;

	m = mmap(NULL, 2 * SLAB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	a = m + ((SLAB - (uintptr_t)m % SLAB) % SLAB);
	if (a > m)
		(void)munmap(m, (size_t)(a - m));
	if (a + SLAB < m + 2 * SLAB)
		(void)munmap(a + SLAB, (size_t)(m + 2 * SLAB - (a + SLAB)));
	sl = (struct slab *)(void *)a;
	sl->next = slabs;
	sl->owner = &slabs;
	sl->carved = 0;
	sl->free = 0;
	slabs = sl;
	nslabs++;
	return sl;
}

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
			struct slab *sl = slab_new();

			if (sl == NULL)
				return NULL;
			/* The rest of the old slab is too small for this
			 * class; it stays unused. */
			cur = sl;
			bump = (char *)sl + sizeof(*sl);
			bump_left = SLAB - sizeof(*sl);
		}
		h = (struct hdr *)(void *)bump;
		bump += need;
		bump_left -= need;
		cur->carved += need;
	}
	h->cls = cls;
	return (char *)h + HDR;
}

/*
 * Unmap the calling thread's slabs whose every block is on its free
 * lists.  A block on another thread's list keeps its slab: only the owner
 * counts and unmaps, and a block it does not see free may be in use.
 */
static void
pool_trim(void)
{
	struct slab *sl, **slp;
	void *h, *keep[NCLASS + 1];
	size_t cls;

	for (sl = slabs; sl != NULL; sl = sl->next)
		sl->free = 0;
	for (cls = 1; cls <= NCLASS; cls++)
		for (h = freelist[cls]; h != NULL; memcpy(&h, h, sizeof(void *)))
			if (slab_of(h)->owner == &slabs)
				slab_of(h)->free += HDR + cls * STEP;
	/* Take the blocks of the slabs to go off the lists, keeping the
	 * others in their order. */
	for (cls = 1; cls <= NCLASS; cls++) {
		void **tail = &keep[cls];

		for (h = freelist[cls]; h != NULL; memcpy(&h, h, sizeof(void *))) {
			sl = slab_of(h);
			if (sl->owner == &slabs && sl->free == sl->carved)
				continue;
			*tail = h;
			tail = h;
		}
		*tail = NULL;
		freelist[cls] = keep[cls];
	}
	for (slp = &slabs; (sl = *slp) != NULL;) {
		if (sl->free != sl->carved) {
			slp = &sl->next;
			continue;
		}
		*slp = sl->next;
		if (sl == cur) {
			cur = NULL;
			bump = NULL;
			bump_left = 0;
		}
		(void)munmap(sl, SLAB);
		nslabs--;
	}
}

size_t
px_mem_pool_size(void)
{
	return nslabs * SLAB;
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

#ifndef MEM_PLAIN
/*
 * malloc_trim() cuts only the main heap's free top; a thread's arena keeps
 * its top (up to M_TRIM_THRESHOLD of it, resident) until a free of 64 KiB
 * or more on that thread finds the top over the threshold.  Make one such
 * free with the threshold at 0.  The threshold is global: the lock keeps
 * two workers' trims from restoring it under each other.
 */
static pthread_mutex_t top_lock = PTHREAD_MUTEX_INITIALIZER;

static void
arena_top_trim(void)
{
	void *volatile p; /* volatile: the compiler may not drop the pair */

	pthread_mutex_lock(&top_lock);
	(void)mallopt(M_TRIM_THRESHOLD, 0);
	p = malloc(64 * 1024);
	free(p);
	(void)mallopt(M_TRIM_THRESHOLD, PX_MEM_TRIM_THRESHOLD);
	pthread_mutex_unlock(&top_lock);
}
#endif

void
px_mem_trim(void)
{
	px_mem_bin_trim();
	pool_trim();
#ifndef MEM_PLAIN
	malloc_trim(0);
	arena_top_trim();
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

void
px_mem_usage(size_t *rss, size_t *heap)
{
	unsigned long size, resident;
	long page = sysconf(_SC_PAGESIZE);
	FILE *f;

	*rss = *heap = 0;
	if ((f = fopen("/proc/self/statm", "re")) != NULL) {
		if (fscanf(f, "%lu %lu", &size, &resident) == 2 && page > 0)
			*rss = (size_t)resident * (size_t)page;
		fclose(f);
	}
#ifndef MEM_PLAIN
	{
		struct mallinfo2 mi = mallinfo2();

		*heap = mi.uordblks + mi.hblkhd;
	}
#endif
}
