/*
 * tests/unit/test-mem.c: the allocator libevent gets (proxy/mem.c): small
 * blocks are reused, not leaked; realloc keeps the bytes; alignment; a
 * block freed on another thread is reused there; libevent works on it.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proxy/mem.h"
#include "tests/unit/tap.h"

#define N 200

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

int
main(void)
{
	static void *a[N], *b[2 * N];
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
	return tap_done();
}
