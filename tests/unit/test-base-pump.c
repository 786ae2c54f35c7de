/*
 * tests/unit/test-base-pump.c: the shared splice(2) pump and pipe pool
 * (base/pump.h), over UNIX socket pairs.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/pump.h"
#include "tests/unit/tap.h"

/* Take N pipes from POOL into ALL and grow each to 128 KiB: how many
 * grew, or -1 when a get failed. */
static int
grow_n(struct bs_pipe_pool *pool, struct bs_pipe *all, int n)
{
	int i, grown = 0;

	for (i = 0; i < n; i++) {
		if (bs_pipe_get(pool, &all[i], 65536) != 0)
			return -1;
		if (bs_pipe_grow(&all[i], 128 * 1024) == 1)
			grown++;
	}
	return grown;
}

static void
close_n(struct bs_pipe *all, int n)
{
	int i;

	for (i = 0; i < n; i++)
		bs_pipe_close(&all[i]);
}

/* Big pipes: grown with their bytes, pooled apart, within the budget. */
static void
big_pipes(struct bs_pipe_pool *pool)
{
	struct bs_pipe p, q, all[BS_BIG_MAX + 1];
	char buf[16];
	int s[2], i, grown, rc;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) < 0)
		return;
	tap_ok(bs_pipe_get(pool, &p, 65536) == 0 && !p.big, "a new pipe is not big");
	(void)write(s[0], "hello", 5);
	tap_ok(bs_pump_in(s[1], &p, 5) == 5, "five bytes into it");
	rc = bs_pipe_grow(&p, 1024 * 1024);
	tap_ok(rc == 1 && p.big && p.cap == 1024 * 1024, "grown to 1 MiB with its bytes (%d, %zu)",
	    rc, p.cap);
	tap_ok(bs_pipe_grow(&p, 1024 * 1024) == 0, "a big pipe does not grow again");
	n = bs_pump_out(&p, s[0], 5);
	tap_ok(n == 5 && read(s[1], buf, sizeof(buf)) == 5 && memcmp(buf, "hello", 5) == 0,
	    "its bytes come out unchanged");
	bs_pipe_put(pool, &p);
	tap_ok(pool->nbig == 1 && pool->n == 0 && p.r == -1 && !p.big,
	    "put: a big pipe goes to the big ones");
	tap_ok(bs_pipe_get(pool, &q, 65536) == 0 && !q.big && pool->nbig == 1,
	    "a plain get leaves it there");
	bs_pipe_put(pool, &q);
	tap_ok(bs_pipe_get_big(pool, &q, 65536) == 0 && q.big && q.cap == 1024 * 1024 &&
		pool->nbig == 0, "a stream's get takes it");
	bs_pipe_put(pool, &q);

	/* The budget counts pooled big pipes too: one is in the pool. */
	grown = grow_n(pool, all, BS_BIG_MAX + 1);
	tap_ok(grown == BS_BIG_MAX - 1 && !all[BS_BIG_MAX].big && all[BS_BIG_MAX].cap == 65536,
	    "no more than %d big pipes exist at once (%d and the pooled one)", BS_BIG_MAX, grown);
	bs_pipe_close(&all[0]);
	tap_ok(bs_pipe_grow(&all[BS_BIG_MAX], 128 * 1024) == 1,
	    "closing one gives its place to the next");
	close_n(all, BS_BIG_MAX + 1);
	bs_pipe_pool_clear(pool);
	tap_ok(pool->nbig == 0, "clear empties the big ones too");
	grown = grow_n(pool, all, BS_BIG_MAX);
	tap_ok(grown == BS_BIG_MAX, "and their places are free again (%d)", grown);
	close_n(all, BS_BIG_MAX);

	/* The kernel's refusal: a pipe holding more than the size asked. */
	tap_ok(bs_pipe_get(pool, &p, 65536) == 0, "another pipe");
	/* Four writes, four messages: four of the pipe's slots. */
	for (i = 0; i < 4; i++)
		(void)write(s[0], "abcd", 4);
	tap_ok(bs_pump_in(s[1], &p, 16) == 16, "four messages into it");
	rc = bs_pipe_grow(&p, 4096);
	tap_ok(rc == -1 && !p.big && p.cap == 65536,
	    "a size the kernel refuses: -1, the pipe as it was (%d, %zu)", rc, p.cap);
	bs_pipe_close(&p);
	grown = grow_n(pool, all, BS_BIG_MAX);
	tap_ok(grown == BS_BIG_MAX, "a refusal holds no place in the budget (%d)", grown);
	close_n(all, BS_BIG_MAX);
	bs_pipe_pool_clear(pool);
	close(s[0]);
	close(s[1]);
}

int
main(void)
{
	struct bs_pipe_pool pool;
	struct bs_pipe p, q;
	int a[2], b[2], rfd, wfd;
	char buf[16];
	ssize_t n;

	signal(SIGPIPE, SIG_IGN);
	memset(&pool, 0, sizeof(pool));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b) < 0) {
		tap_diag("socketpair: %s", strerror(errno));
		return 1;
	}
	tap_ok(bs_pipe_get(&pool, &p, 0) == 0 && p.r >= 0 && p.w >= 0 && p.cap == 0,
	    "a new pipe at the default size");
	n = bs_pipe_get(&pool, &q, 128 * 1024);
	tap_ok(n == 0 && q.cap >= 65536, "a new pipe asked to be bigger knows its size (%zu)",
	    q.cap);
	tap_ok(bs_pump_in(a[1], &p, 1024) == -EAGAIN, "empty source: -EAGAIN");
	(void)write(a[0], "hello", 5);
	n = bs_pump_in(a[1], &p, 1024);
	tap_ok(n == 5, "five bytes into the pipe (%zd)", n);
	n = bs_pump_out(&p, b[0], 5);
	tap_ok(n == 5 && read(b[1], buf, sizeof(buf)) == 5 && memcmp(buf, "hello", 5) == 0,
	    "and out to the destination");
	shutdown(a[0], SHUT_WR);
	tap_ok(bs_pump_in(a[1], &p, 1024) == 0, "EOF: 0");
	/* A destination whose peer is gone refuses the bytes. */
	close(b[1]);
	{
		int c[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, c) == 0) {
			(void)write(c[0], "abc", 3);
			n = bs_pump_in(c[1], &p, 3);
			tap_ok(n == 3, "three more bytes in");
			n = bs_pump_out(&p, b[0], 3);
			tap_ok(n == -EPIPE, "a closed destination: -EPIPE (%zd)", n);
			close(c[0]);
			close(c[1]);
		}
	}
	/* The pool: what goes back comes out again, a closed pipe never. */
	rfd = q.r;
	wfd = q.w;
	bs_pipe_put(&pool, &q);
	tap_ok(q.r == -1 && q.w == -1 && pool.n == 1, "put: the pipe is in the pool");
	tap_ok(bs_pipe_get(&pool, &q, 0) == 0 && q.r == rfd && q.w == wfd && pool.n == 0,
	    "get: the pooled pipe comes back");
	bs_pipe_close(&p);
	tap_ok(p.r == -1 && p.w == -1, "close: the pipe is gone");
	bs_pipe_put(&pool, &p);
	tap_ok(pool.n == 0, "putting no pipe is a no-op");
	bs_pipe_put(&pool, &q);
	bs_pipe_pool_clear(&pool);
	tap_ok(pool.n == 0 && write(wfd, "", 0) < 0 && errno == EBADF, "clear empties the pool");
	big_pipes(&pool);
	return tap_done();
}
