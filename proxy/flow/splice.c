/*
 * proxy/flow/splice.c: the relay of an established tunnel (see splice.h).
 *
 * While a direction's pipe is empty, a read goes recv(2) -> the thread's
 * copy buffer -> send(2) (copy()), and only what the destination leaves
 * over goes into the pipe; while the pipe holds bytes, the source is
 * spliced in behind them and the pipe spliced out (splice(2) keeps their
 * order).  The pipe is the direction's buffer, so its capacity is the
 * bound on memory in flight; the copy buffer holds nothing between calls.
 *
 * Copying looks like the slower way and is not, as in bridge/relay.c:
 * splice(2) hands the sender's pages on to the receiver, so every page in
 * flight is cold when the sender fills it again and when the receiver
 * reads it, where a copy frees the sender's pages at once and hands the
 * receiver pages just written.  Bulk through one tunnel (tests/bench's
 * client and server, 4 GiB each way, 7 rounds side by side with the
 * all-splice relay): 1.16x the MB/s up and 1.28x down, at 0.98x and
 * 0.96x the CPU per GiB.  A small message costs the same two system
 * calls either way.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "base/pump.h"
#include "proxy/core/io.h"
#include "proxy/core/loopcall.h"
#include "proxy/core/mem.h"
#include "proxy/core/prio.h"
#include "proxy/flow/splice.h"

#define PIPE_WANT (256 * 1024) /* asked of F_SETPIPE_SZ; the default is 64 KiB */
/*
 * A stream's pipe: a direction whose read took half its pipe or more is
 * moved to one of this size (the unprivileged maximum, fs.pipe-max-size),
 * within the process's budget of them (BS_BIG_MAX).  Each splice then
 * moves up to four times as much, and the kernel builds fewer, fuller
 * segments: bulk through one tunnel, 1 GiB each way, 9 rounds side by
 * side with 256 KiB pipes only, 0.350 against 0.435 CPU s per GiB and
 * 1,928 against 1,584 MB/s up.
 */
#define PIPE_BIG (1024 * 1024)
/* The copy buffer's size: one read of a stream, never more than its pipe
 * can hold (what the destination leaves over goes there). */
#define COPY_MAX PIPE_BIG

/* Per worker thread (worker.h): a pipe is taken and given back on the
 * loop of its connection; px_splice_cleanup() empties the calling thread's. */
static _Thread_local struct bs_pipe_pool pool;
/* The thread's copy buffer (copy()), allocated by the first read that
 * needs it; while that fails, reads splice. */
static _Thread_local char *copybuf;

void
px_splice_cleanup(void)
{
	bs_pipe_pool_clear(&pool);
	free(copybuf);
	copybuf = NULL;
}

/*
 * A direction's two events live in the relay's own allocation (assigned,
 * not allocated one by one), and each is added and deleted only when its
 * state changes: a tunnel's life is a few reads, and libevent's add and
 * delete of an event already in the state asked cost as much as the read's
 * own work.  REV_ON and WEV_ON say whether each is added (WEV_ON until its
 * callback runs: it is not persistent).  WEV is assigned the first time
 * TO is full, which most tunnels never see.
 */
struct dir {
	struct px_splice *s;
	int from, to;
	struct event *rev;  /* FROM readable */
	struct event *wev;  /* TO writable, while the pipe cannot drain */
	unsigned rev_on : 1, wev_on : 1, wev_made : 1;
	struct bs_pipe p;
	size_t inpipe;
	int eof, shut;
	int over;           /* FROM has more than its quota allows */
	int stream;         /* a read filled half a pipe: wants a big one */
	int nogrow;         /* the kernel refused to grow its pipe */
	uint64_t *count;
};

struct px_splice {
	struct event_base *base;
	int a, b;
	struct dir d[2]; /* a->b, b->a */
	struct timeval *activity;
	px_splice_done_cb cb;
	void *arg;
	int done;
	px_splice_quota_fn quota; /* on a->b, or NULL */
	void *qarg;
	/* then the four events: px_splice_new() */
};

void
px_splice_set_quota(struct px_splice *s, px_splice_quota_fn quota, void *arg)
{
	s->quota = quota;
	s->qarg = arg;
}

static void write_cb(evutil_socket_t fd, short what, void *arg);

static void
rev_off(struct dir *d)
{
	if (d->rev_on) {
		event_del(d->rev);
		d->rev_on = 0;
	}
}

static void
wev_off(struct dir *d)
{
	if (d->wev_on) {
		event_del(d->wev);
		d->wev_on = 0;
	}
}

/* Wait for TO to take more. */
static void
wev_on(struct dir *d)
{
	if (!d->wev_made) {
		event_assign(d->wev, d->s->base, d->to, EV_WRITE, write_cb, d);
		/* Fails only on a loop without priorities (unit tests). */
		(void)event_priority_set(d->wev, PX_PRI_BULK);
		d->wev_made = 1;
	}
	if (!d->wev_on) {
		event_add(d->wev, NULL);
		d->wev_on = 1;
	}
}

static void
finish(struct px_splice *s, int err)
{
	if (s->done)
		return;
	s->done = 1;
	rev_off(&s->d[0]);
	rev_off(&s->d[1]);
	wev_off(&s->d[0]);
	wev_off(&s->d[1]);
	s->cb(err, s->arg);
}

/* Empty the pipe into TO as far as TO takes it.  0, or an errno. */
static int
drain(struct dir *d)
{
	while (d->inpipe > 0) {
		ssize_t n = bs_pump_out(&d->p, d->to, d->inpipe);
		if (n > 0) {
			d->inpipe -= (size_t)n;
			continue;
		}
		if (n == -EAGAIN) {
			wev_on(d);
			return 0;
		}
		return n < 0 ? (int)-n : EPIPE;
	}
	wev_off(d);
	bs_pipe_put(&pool, &d->p);
	return 0;
}

/*
 * Bring the direction up to date: reading allowed only while the pipe has
 * room; EOF passed on once the pipe is empty.  (Reading only once the pipe
 * is empty, as the bench's floor relay does, was tried: 1 GiB each way
 * between TCP sockets it made no difference past the noise, and into a
 * UNIX client's socket, the sandbox path, down fell to 0.3-0.4x: a UNIX
 * socket wakes its writer only once its reader drained much of it, and
 * meanwhile the pipe keeps the upstream flowing.)
 */
static void
settle(struct dir *d)
{
	struct px_splice *s = d->s;

	/* Over its quota: what was read within it goes out first, and
	 * nothing more. */
	if (d->over && d->inpipe == 0) {
		finish(s, EDQUOT);
		return;
	}
	if (!d->eof && !d->over && (d->p.r < 0 || d->inpipe < d->p.cap)) {
		if (!d->rev_on) {
			event_add(d->rev, NULL);
			d->rev_on = 1;
		}
	} else {
		rev_off(d);
	}
	if (d->eof && d->inpipe == 0 && !d->shut) {
		d->shut = 1;
		/* RFC 9293 §3.6: a half-close; the other direction goes on.
		 * The second direction to end needs none: both sockets are
		 * read to their EOF, so the close in px_splice_free() sends
		 * the FIN (not a reset), one system call fewer a tunnel. */
		if (!s->d[d == &s->d[0]].shut)
			shutdown(d->to, SHUT_WR);
	}
	if (s->d[0].shut && s->d[1].shut)
		finish(s, 0);
}

/* D moves a stream: give its pipe (which may hold bytes) the stream's
 * size, while the budget allows; a kernel's refusal is final. */
static void
grow(struct dir *d)
{
	d->stream = 1;
	if (!d->p.big && bs_pipe_grow(&d->p, PIPE_BIG) < 0) {
		d->stream = 0;
		d->nogrow = 1;
	}
}

/*
 * D's pipe is empty: one recv(2) of at most ROOM bytes into the thread's
 * buffer and one send(2) of them to TO, whatever TO does not take going
 * into the pipe, ahead of any later byte (ROOM is at most the pipe's
 * size, so it all fits).  Returns the bytes read (> 0), 0 at FROM's EOF,
 * or a negative errno: FROM failed, -EAGAIN when it is empty.  *FULL is
 * set when TO's buffer is full; *ERR to TO's errno when it refused the
 * write.
 */
static ssize_t
copy(struct dir *d, size_t room, int *full, int *err)
{
	ssize_t n, w, k;

	if (room > COPY_MAX)
		room = COPY_MAX;
	n = px_io_recv(d->from, copybuf, room, 0);
	if (n <= 0)
		return n;
	w = px_io_send(d->to, copybuf, (size_t)n);
	if (w < 0 && w != -EAGAIN) {
		*err = (int)-w;
		return n;
	}
	if (w < 0)
		w = 0;
	if (w < n) {
		*full = 1;
		do
			k = write(d->p.w, copybuf + w, (size_t)(n - w));
		while (k < 0 && errno == EINTR);
		if (k != n - w) {
			*err = k < 0 ? errno : EIO;
			return n;
		}
		d->inpipe += (size_t)k;
	}
	return n;
}

static void
read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dir *d = arg;
	struct px_splice *s = d->s;
	int err = 0, full = 0, copied = 0;

	(void)fd;
	(void)what;
	px_loopcall_check();
	if (copybuf == NULL)
		copybuf = malloc(COPY_MAX);
	if (d->p.r < 0) {
		if ((d->stream ? bs_pipe_get_big(&pool, &d->p, PIPE_WANT)
			       : bs_pipe_get(&pool, &d->p, PIPE_WANT)) != 0) {
			finish(s, errno);
			return;
		}
		if (d->stream)
			grow(d);
	}
	for (;;) {
		ssize_t n;
		size_t room = d->p.cap - d->inpipe;

		if (d == &s->d[0] && s->quota != NULL) {
			uint64_t q = s->quota(s->qarg, 0);
			char x;
			ssize_t r;

			if (q == 0) {
				/* Spent: more bytes waiting is over the budget,
				 * EOF is the client's plain end. */
				r = px_io_recv(d->from, &x, 1, MSG_PEEK);
				if (r > 0)
					d->over = 1;
				else if (r == 0)
					d->eof = 1;
				else if (r != -EAGAIN && r != -EWOULDBLOCK) {
					finish(s, (int)-r);
					return;
				}
				break;
			}
			if (q < room)
				room = (size_t)q;
		}
		if (room == 0)
			break;
		copied = d->inpipe == 0 && copybuf != NULL;
		if (copied)
			n = copy(d, room, &full, &err);
		else
			n = bs_pump_in(d->from, &d->p, room);
		if (n > 0) {
			if (!copied)
				d->inpipe += (size_t)n;
			*d->count += (uint64_t)n;
			if (!d->p.big && !d->nogrow && (size_t)n >= d->p.cap / 2)
				grow(d);
			if (d == &s->d[0] && s->quota != NULL)
				(void)s->quota(s->qarg, (uint64_t)n);
			if (s->activity != NULL)
				event_base_gettimeofday_cached(s->base, s->activity);
			break;
		}
		if (n == 0) {
			d->eof = 1;
			break;
		}
		if (n == -EAGAIN)
			break;
		finish(s, (int)-n);
		return;
	}
	if (err == 0 && full)
		wev_on(d); /* TO just said it is full */
	else if (err == 0)
		err = drain(d);
	if (err != 0) {
		finish(s, err);
		return;
	}
	settle(d);
}

static void
write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dir *d = arg;
	int err;

	(void)fd;
	(void)what;
	px_loopcall_check();
	d->wev_on = 0; /* not persistent: it is no longer added */
	err = drain(d);
	if (err != 0) {
		finish(d->s, err);
		return;
	}
	if (d->s->activity != NULL)
		event_base_gettimeofday_cached(d->s->base, d->s->activity);
	settle(d);
}

struct px_splice *
px_splice_new(struct event_base *base, int a, int b, uint64_t *a_to_b, uint64_t *b_to_a,
    struct timeval *activity, px_splice_done_cb cb, void *arg)
{
	/* The size of struct event is the library's to know: one
	 * allocation holds the relay and, past it, its four events. */
	size_t at = px_mem_round(sizeof(struct px_splice));
	size_t step = px_mem_round(event_get_struct_event_size());
	struct px_splice *s = calloc(1, at + 4 * step);
	char *evs;
	int i;

	if (s == NULL)
		return NULL;
	evs = (char *)s + at;
	s->base = base;
	s->a = a;
	s->b = b;
	s->activity = activity;
	s->cb = cb;
	s->arg = arg;
	for (i = 0; i < 2; i++) {
		struct dir *d = &s->d[i];
		d->s = s;
		d->from = i == 0 ? a : b;
		d->to = i == 0 ? b : a;
		d->count = i == 0 ? a_to_b : b_to_a;
		d->p.r = d->p.w = -1;
		d->rev = (struct event *)(void *)(evs + (size_t)(2 * i) * step);
		d->wev = (struct event *)(void *)(evs + (size_t)(2 * i + 1) * step);
		if (event_assign(d->rev, base, d->from, EV_READ | EV_PERSIST, read_cb, d) < 0) {
			free(s);
			errno = EINVAL;
			return NULL;
		}
		/* Fails only on a loop without priorities (unit tests). */
		(void)event_priority_set(d->rev, PX_PRI_BULK);
	}
	for (i = 0; i < 2; i++) {
		event_add(s->d[i].rev, NULL);
		s->d[i].rev_on = 1;
	}
	return s;
}

void
px_splice_free(struct px_splice *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < 2; i++) {
		struct dir *d = &s->d[i];
		/* Off the loop before their memory goes, added or not (an
		 * event may also wait in the loop's active queue). */
		event_del(d->rev);
		if (d->wev_made)
			event_del(d->wev);
		if (d->p.r >= 0) {
			/* Bytes still in flight die with the tunnel. */
			if (d->inpipe > 0)
				bs_pipe_close(&d->p);
			else
				bs_pipe_put(&pool, &d->p);
		}
	}
	close(s->a);
	close(s->b);
	free(s);
}
