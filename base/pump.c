/*
 * base/pump.c: the splice(2) pump and its pipe pool (see pump.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/pump.h"

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
	if (want > 0) {
		/* A bigger pipe when the system allows it; the default otherwise. */
		(void)fcntl(p->w, F_SETPIPE_SZ, (int)want);
		sz = fcntl(p->w, F_GETPIPE_SZ);
		p->cap = sz > 0 ? (size_t)sz : 65536;
	}
	return 0;
}

void
bs_pipe_close(struct bs_pipe *p)
{
	if (p->r >= 0)
		close(p->r);
	if (p->w >= 0)
		close(p->w);
	p->r = p->w = -1;
}

void
bs_pipe_put(struct bs_pipe_pool *pool, struct bs_pipe *p)
{
	if (p->r < 0 || p->w < 0) {
		bs_pipe_close(p);
		return;
	}
	if (pool->n < BS_POOL_MAX) {
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
