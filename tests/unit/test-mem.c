/*
 * tests/unit/test-mem.c: the allocator libevent gets (proxy/core/mem.c): small
 * blocks are reused, not leaked; realloc keeps the bytes; alignment; a
 * block freed on another thread is reused there; the trim unmaps the
 * slabs whose blocks are all free; libevent works on it;
 * the bins of big blocks hand a block back out and give them all back.
 */
#include "config.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

#include "proxy/core/mem.h"
#include "tests/unit/tap.h"

#define N 200
#define MANY 3000 /* blocks of 16 * (i % 4 + 1) bytes: 3 slabs */
#define HELD 1003 /* of them, a 64-byte one */

/* Whether px_mem_init() turns the pool and the bins on here (mem.c). */
static int
bins_expected(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return 0;
#endif
#endif
#ifdef RUNNING_ON_VALGRIND
	if (RUNNING_ON_VALGRIND)
		return 0;
#endif
	return 1;
}

static int
aligned(const void *p)
{
	return ((uintptr_t)p & 15) == 0;
}

static void
fill(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i);
}

static int
same(const unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed + i))
			return 0;
	return 1;
}

static int
contains(void *const *set, size_t n, const void *p)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == p)
			return 1;
	return 0;
}

static void *
free_then_take(void *arg)
{
	void **blocks = arg;
	int i, reused = 0;

	for (i = 0; i < N; i++)
		px_mem_free(blocks[i]);
	for (i = 0; i < N; i++) {
		void *p = px_mem_malloc(24);
		reused += contains(blocks, N, p);
		blocks[N + i] = p;
	}
	return (void *)(intptr_t)reused;
}

/* On a thread of its own (so an arena other than the main heap's): free
 * 3 MiB that end at the arena's top, then trim; how much the arena's
 * memory from the system fell. */
static void *
top_trim(void *arg)
{
	void *blk[192];
	size_t before, i;

	(void)arg;
	for (i = 0; i < 192; i++)
		blk[i] = malloc(16 * 1024);
	for (i = 192; i-- > 0;)
		free(blk[i]);
	before = mallinfo2().arena;
	px_mem_trim();
	return (void *)(before - mallinfo2().arena);
}

static void *
free_one(void *arg)
{
	px_mem_free(arg);
	return NULL;
}

int
main(void)
{
	static void *a[N], *b[2 * N], *many[MANY];
	size_t sizes[] = { 1, 16, 17, 24, 32, 48, 63, 64, 65, 200, 5000 };
	size_t i, k;
	int ok, reused;
	unsigned char *p, *q;
	pthread_t t;
	void *res;
	struct evbuffer *eb;

	/* Every size: aligned, and all of its bytes usable. */
	ok = 1;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		p = px_mem_malloc(sizes[k]);
		if (p == NULL || !aligned(p)) {
			ok = 0;
			continue;
		}
		fill(p, sizes[k], (unsigned)k);
		ok &= same(p, sizes[k], (unsigned)k);
		px_mem_free(p);
	}
	tap_ok(ok, "blocks of 1 to 5000 bytes are 16-byte aligned and hold their bytes");

	/* A freed small block is the next one of its class. */
	for (k = 0; k < 8; k++) {
		size_t n = sizes[k];
		p = px_mem_malloc(n);
		px_mem_free(p);
		q = px_mem_malloc(n);
		tap_ok(p == q, "a freed %zu-byte block is handed out again", n);
		px_mem_free(q);
	}

	/* Churn does not grow the pool: after freeing N blocks, the next N
	 * of each class are the same N. */
	for (k = 0; k < 4; k++) {
		size_t n = 16 * (k + 1);
		for (i = 0; i < N; i++)
			a[i] = px_mem_malloc(n);
		for (i = 0; i < N; i++)
			px_mem_free(a[i]);
		reused = 0;
		for (i = 0; i < N; i++) {
			b[i] = px_mem_malloc(n);
			reused += contains(a, N, b[i]);
		}
		tap_ok(reused == N, "%d of %d %zu-byte blocks reused after a round of frees", reused, N, n);
		for (i = 0; i < N; i++)
			px_mem_free(b[i]);
	}

	/* realloc keeps the bytes across classes and into and out of malloc. */
	p = px_mem_realloc(NULL, 10);
	fill(p, 10, 7);
	p = px_mem_realloc(p, 8);
	tap_ok(same(p, 8, 7), "realloc to a smaller size keeps the bytes");
	p = px_mem_realloc(p, 60);
	tap_ok(same(p, 8, 7), "realloc within the pool keeps the bytes");
	fill(p, 60, 9);
	p = px_mem_realloc(p, 4000);
	tap_ok(p != NULL && aligned(p) && same(p, 60, 9), "realloc out of the pool keeps the bytes");
	fill(p, 4000, 3);
	p = px_mem_realloc(p, 20);
	tap_ok(p != NULL && same(p, 20, 3), "realloc of a big block to a small size keeps the bytes");
	tap_ok(px_mem_realloc(p, 0) == NULL, "realloc to 0 frees and returns NULL");

	/* Blocks freed by another thread are reused by that thread. */
	for (i = 0; i < N; i++)
		b[i] = px_mem_malloc(24);
	pthread_create(&t, NULL, free_then_take, b);
	pthread_join(t, &res);
	tap_ok((intptr_t)res == N, "%d of %d blocks freed on another thread were reused there",
	    (int)(intptr_t)res, N);
	for (i = 0; i < N; i++)
		px_mem_free(b[N + i]);

	/* The trim unmaps the slabs whose every block is free, and only
	 * those: one held block keeps its slab, one on another thread's
	 * list too. */
	for (i = 0; i < MANY; i++)
		many[i] = px_mem_malloc(16 * (i % 4 + 1));
	fill(many[HELD], 48, 11);
	for (i = 0; i < MANY; i++)
		if (i != HELD)
			px_mem_free(many[i]);
	k = px_mem_pool_size();
	px_mem_trim();
	tap_ok(k >= 3 * 64 * 1024 && px_mem_pool_size() == 64 * 1024,
	    "the trim keeps the one slab with a block in use (%zu -> %zu bytes)", k,
	    px_mem_pool_size());
	tap_ok(same(many[HELD], 48, 11), "the block in use keeps its bytes");
	px_mem_free(many[HELD]);
	px_mem_trim();
	tap_ok(px_mem_pool_size() == 0, "once it is free, the trim unmaps that slab too");
	p = px_mem_malloc(24);
	pthread_create(&t, NULL, free_one, p);
	pthread_join(t, NULL);
	px_mem_trim();
	tap_ok(px_mem_pool_size() == 64 * 1024,
	    "a block freed on another thread keeps its slab here");
	q = px_mem_malloc(40);
	fill(q, 40, 13);
	tap_ok(q != NULL && aligned(q) && same(q, 40, 13), "the pool hands out blocks after a trim");
	px_mem_free(q);

	/* A thread's arena gives its free top back (the proxy keeps up to
	 * PX_MEM_TRIM_THRESHOLD of it between trims). */
	(void)mallopt(M_TRIM_THRESHOLD, PX_MEM_TRIM_THRESHOLD);
	pthread_create(&t, NULL, top_trim, NULL);
	pthread_join(t, &res);
	if (bins_expected())
		tap_ok((size_t)res >= 2 << 20, "the trim gives back a thread arena's free top (%zu bytes)",
		    (size_t)res);
	else
		tap_diag("without glibc's malloc (sanitizers, valgrind) no arena is trimmed");

	/* libevent on it. */
	px_mem_init();
	eb = evbuffer_new();
	ok = eb != NULL;
	for (i = 0; ok && i < 1000; i++)
		ok = evbuffer_add_printf(eb, "line %zu\n", i) > 0;
	ok = ok && evbuffer_get_length(eb) == 8890;
	if (eb != NULL)
		evbuffer_free(eb);
	tap_ok(ok, "libevent's buffers work on the installed allocator");

	/* The bins: on once px_mem_init() ran, except in sanitizer builds
	 * and under valgrind, where every get is a malloc() and every put a
	 * free(). */
	p = px_mem_bin_get(PX_BIN_CONN, 2200);
	fill(p, 2200, 5);
	tap_ok(p != NULL && aligned(p) && same(p, 2200, 5), "a binned block holds its 2200 bytes");
	px_mem_bin_put(PX_BIN_CONN, p);
	q = px_mem_bin_get(PX_BIN_CONN, 2200);
	if (bins_expected())
		tap_ok(q == p, "a block put in its bin is the next one handed out");
	else
		tap_ok(q != NULL, "without the pool a bin's get is a plain malloc");
	px_mem_bin_put(PX_BIN_CONN, q);
	px_mem_bin_put(PX_BIN_CONN, NULL);
	/* 40 put back: 32 kept, 8 freed; the trim frees the 32. */
	for (i = 0; i < 40; i++)
		a[i] = px_mem_bin_get(PX_BIN_CONN, 2200);
	for (i = 0; i < 40; i++)
		px_mem_bin_put(PX_BIN_CONN, a[i]);
	{
		size_t before = mallinfo2().uordblks, after;

		px_mem_bin_trim();
		after = mallinfo2().uordblks;
		if (bins_expected())
			tap_ok(before - after >= 32 * 2200 && before - after < 33 * 2200 + 4096,
			    "the trim gives back the 32 blocks a bin keeps (%zu bytes)", before - after);
		else
			tap_ok(before == after, "without the pool the bins keep nothing");
	}
	return tap_done();
}
