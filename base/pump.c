/*
 * base/pump.c: the splice(2) pump and its pipe pool (see pump.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/pump.h"

/* Big pipes that exist (bs_pipe_grow()), in every thread's pools and
 * relays: the process's share of the user's pipe quota. */
static unsigned big_live;

int
bs_pipe_get(struct bs_pipe_pool *pool, struct bs_pipe *p, size_t want)
{
	int fds[2], sz;

	if (pool->n > 0) {
		*p = pool->pipes[--pool->n];
		return 0;
	}
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0)
		return -1;
	p->r = fds[0];
	p->w = fds[1];
	p->cap = 0;
	p->big = 0;
	if (want > 0) {
		/* A bigger pipe when the system allows it; the default otherwise. */
		(void)fcntl(p->w, F_SETPIPE_SZ, (int)want);
		sz = fcntl(p->w, F_GETPIPE_SZ);
		p->cap = sz > 0 ? (size_t)sz : 65536;
	}
	return 0;
}

int
bs_pipe_get_big(struct bs_pipe_pool *pool, struct bs_pipe *p, size_t want)
{
	if (pool->nbig > 0) {
		*p = pool->big[--pool->nbig];
		return 0;
	}
	return bs_pipe_get(pool, p, want);
}

int
bs_pipe_grow(struct bs_pipe *p, size_t size)
{
	int sz;

	if (p->big || p->w < 0)
		return 0;
	if (__atomic_add_fetch(&big_live, 1, __ATOMIC_RELAXED) > BS_BIG_MAX) {
		__atomic_sub_fetch(&big_live, 1, __ATOMIC_RELAXED);
		return 0;
	}
	sz = fcntl(p->w, F_SETPIPE_SZ, (int)size);
	if (sz <= 0) {
		__atomic_sub_fetch(&big_live, 1, __ATOMIC_RELAXED);
		return -1;
	}
	p->cap = (size_t)sz;
	p->big = 1;
	return 1;
}

void
bs_pipe_close(struct bs_pipe *p)
{
	if (p->r >= 0)
		close(p->r);
	if (p->w >= 0)
		close(p->w);
	if (p->big && (p->r >= 0 || p->w >= 0))
		__atomic_sub_fetch(&big_live, 1, __ATOMIC_RELAXED);
	p->r = p->w = -1;
	p->big = 0;
}

void
bs_pipe_put(struct bs_pipe_pool *pool, struct bs_pipe *p)
{
	if (p->r < 0 || p->w < 0) {
		bs_pipe_close(p);
		return;
	}
	if (p->big && pool->nbig < BS_POOL_BIG) {
		pool->big[pool->nbig++] = *p;
		p->r = p->w = -1;
		p->big = 0;
		return;
	}
	if (!p->big && pool->n < BS_POOL_MAX) {
		pool->pipes[pool->n++] = *p;
		p->r = p->w = -1;
		return;
	}
	bs_pipe_close(p);
}

void
bs_pipe_pool_clear(struct bs_pipe_pool *pool)
{
	while (pool->n > 0)
		bs_pipe_close(&pool->pipes[--pool->n]);
	while (pool->nbig > 0)
		bs_pipe_close(&pool->big[--pool->nbig]);
}

ssize_t
bs_pump_in(int from, struct bs_pipe *p, size_t max)
{
	ssize_t n;

	do
		n = splice(from, NULL, p->w, NULL, max, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

ssize_t
bs_pump_out(struct bs_pipe *p, int to, size_t len)
{
	ssize_t n;

	do
		n = splice(p->r, NULL, to, NULL, len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}
