/*
 * base/pump.h: the splice(2) pump under both tunnel relays (the proxy's
 * proxy/flow/splice.c, the bridge's bridge/relay.c): one direction moves bytes
 * socket -> pipe -> socket inside the kernel, the pipe being the
 * direction's buffer, and a pool keeps empty pipes for the next
 * connection (creating two pipes is six system calls).  The event loop,
 * and what a failure means (a closed tunnel for the proxy, an EOF or an
 * abandoned direction for the bridge), stay with each caller.  libc only:
 * the bridge links it.
 */
#ifndef POSTERN_BASE_PUMP_H
#define POSTERN_BASE_PUMP_H

#include <stddef.h>
#include <sys/types.h>

/* A non-blocking, close-on-exec pipe; r and w are -1 when there is none. */
struct bs_pipe {
	int r, w;
	size_t cap; /* its size, when it was asked for one; else 0 */
	int big;    /* grown by bs_pipe_grow(): it holds one of the budget's */
};

#define BS_POOL_MAX 64
/* Big pipes a pool keeps for the next stream. */
#define BS_POOL_BIG 4
/*
 * Big pipes the process may hold at once, in use or pooled, in all pools
 * together.  The kernel counts every pipe's slots against the user's
 * fs.pipe-user-pages-soft (16,384 pages by default, 64 MiB), and a user
 * over it gets two-page pipes and no growth: 16 pipes of 1 MiB leave most
 * of it to the small ones.
 */
#define BS_BIG_MAX 16

/* Empty pipes kept for reuse.  Zero-filled is an empty pool. */
struct bs_pipe_pool {
	struct bs_pipe pipes[BS_POOL_MAX];
	size_t n;
	struct bs_pipe big[BS_POOL_BIG];
	size_t nbig;
};

/*
 * Give P a pipe from POOL, or a new one.  A new one is asked to be WANT
 * bytes (F_SETPIPE_SZ; 0 leaves the kernel's default, and a refusal too)
 * and then P->cap is its real size.  Returns 0, or -1 with errno set.
 */
int bs_pipe_get(struct bs_pipe_pool *pool, struct bs_pipe *p, size_t want);

/*
 * As bs_pipe_get(), for a stream: a big pipe from POOL when it has one,
 * else what bs_pipe_get() gives (the caller may then bs_pipe_grow() it).
 * Returns 0, or -1 with errno set.
 */
int bs_pipe_get_big(struct bs_pipe_pool *pool, struct bs_pipe *p, size_t want);

/*
 * Grow P's pipe, which may hold bytes, to SIZE (F_SETPIPE_SZ), if it is
 * not big already and fewer than BS_BIG_MAX big pipes exist.  Returns 1
 * when it grew (P->cap is then its new size and P->big is set), 0 when the
 * budget is spent (nothing was asked of the kernel), or -1 when the kernel
 * refused (the user's pipe quota, fs.pipe-max-size): trying again is
 * pointless.
 */
int bs_pipe_grow(struct bs_pipe *p, size_t size);

/*
 * Give P's pipe back to POOL (a big one to its big pipes), or close it
 * when the pool is full; P is then empty (-1).  Only a pipe known to be
 * empty may go back, so that no byte of one connection can ever reach
 * another: a caller with bytes in flight calls bs_pipe_close().  No-op
 * when P has no pipe.
 */
void bs_pipe_put(struct bs_pipe_pool *pool, struct bs_pipe *p);

/* Close P's pipe, whatever it holds, and give back its place in the big
 * pipes' budget; P is then empty.  No-op when none. */
void bs_pipe_close(struct bs_pipe *p);

/* Close every pipe POOL holds. */
void bs_pipe_pool_clear(struct bs_pipe_pool *pool);

/*
 * One splice(2) from socket FROM into P, at most MAX bytes, never
 * blocking; EINTR is retried.  Returns the bytes moved (> 0), 0 at
 * FROM's EOF, -EAGAIN when FROM is empty or the pipe full, or another
 * negative errno (FROM failed).
 */
ssize_t bs_pump_in(int from, struct bs_pipe *p, size_t max);

/*
 * One splice(2) of at most LEN bytes from P into socket TO, never
 * blocking; EINTR is retried.  Returns the bytes moved (> 0), -EAGAIN
 * when TO's buffer is full, another negative errno when TO refuses
 * writes, or 0 when the kernel moved nothing and said no error (the
 * proxy takes that for a refusal, the bridge for no progress).
 */
ssize_t bs_pump_out(struct bs_pipe *p, int to, size_t len);

#endif
