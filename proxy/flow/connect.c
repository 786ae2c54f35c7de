/*
 * proxy/flow/connect.c: Happy Eyeballs connector (see connect.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <event2/event.h>

#include "base/tcp.h"
#include "proxy/flow/connect.h"
#include "proxy/core/mem.h"
#include "proxy/core/prio.h"

#define MAX_ATTEMPTS 16
#define ATTEMPT_DELAY_MS 250

/*
 * The connector, its slots and its events are one allocation: the events
 * (struct event's size is the library's, event_get_struct_event_size())
 * follow the slots, assigned rather than allocated one by one, and the
 * delay's only when a second address needs it.  EV_ON says an attempt's
 * event is added.
 */
struct attempt {
	int fd;
	int ev_on;
	struct event *ev;
	struct px_connector *c;
	size_t index;
};

struct px_connector {
	struct event_base *base;
	size_t n, next;
	struct event *delay;   /* starts the next attempt */
	struct event *timeout; /* gives up */
	int delay_made;
	int last_err;
	px_connect_cb cb;
	void *arg;
	/* One slot an address, as many as there are (most names have one
	 * or two): sized so, the connector stays within glibc's
	 * per-thread cache, where the 16 slots it had were 2.5 KB, malloc's
	 * slow path both ways. */
	struct slot {
		struct sockaddr_storage addr;
		socklen_t len;
		struct attempt att;
	} slot[];
};

static void start_next(struct px_connector *c);

static void
attempt_close(struct attempt *a)
{
	if (a->ev_on) {
		event_del(a->ev);
		a->ev_on = 0;
	}
	if (a->fd >= 0) {
		close(a->fd);
		a->fd = -1;
	}
}

static void
connector_free(struct px_connector *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		attempt_close(&c->slot[i].att);
	if (c->delay_made)
		event_del(c->delay);
	event_del(c->timeout);
	free(c);
}

static void
finish(struct px_connector *c, int fd, int err, size_t index)
{
	px_connect_cb cb = c->cb;
	void *arg = c->arg;

	connector_free(c);
	cb(fd, err, index, arg);
}

static int
live_attempts(const struct px_connector *c)
{
	size_t i;
	int live = 0;

	for (i = 0; i < c->n; i++)
		live += c->slot[i].att.fd >= 0;
	return live;
}

static void
attempt_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attempt *a = arg;
	struct px_connector *c = a->c;
	int err = 0;
	socklen_t len = sizeof(err);

	/* Writable and nothing else is an established connection: a failed
	 * one is reported readable too (libevent turns epoll's EPOLLERR and
	 * EPOLLHUP into both), and so is a server that spoke first; only
	 * then does SO_ERROR say which, one system call fewer a tunnel. */
	if ((what & EV_READ) && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	a->ev_on = 0; /* not persistent: it fired */
	if (err == 0) {
		int one = 1;
		size_t index = a->index;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		a->fd = -1; /* handed over */
		finish(c, (int)fd, 0, index);
		return;
	}
	c->last_err = err;
	attempt_close(a);
	/* A failure starts the next attempt at once (RFC 8305 §5). */
	if (c->next < c->n) {
		start_next(c);
	} else if (live_attempts(c) == 0) {
		finish(c, -1, c->last_err, 0);
	}
}

static void
delay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_connector *c = arg;

	(void)fd;
	(void)what;
	if (c->next < c->n)
		start_next(c);
	else if (live_attempts(c) == 0)
		finish(c, -1, c->last_err ? c->last_err : ECONNREFUSED, 0);
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	finish(arg, -1, ETIMEDOUT, 0);
}

static void
start_next(struct px_connector *c)
{
	struct timeval tv = { 0, ATTEMPT_DELAY_MS * 1000 };

	while (c->next < c->n) {
		struct attempt *a = &c->slot[c->next].att;
		const struct sockaddr *sa = (const struct sockaddr *)&c->slot[c->next].addr;
		int fd;

		a->index = c->next++;
		fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			c->last_err = errno;
			continue;
		}
		/* A loopback upstream (a hook's local service, a bench's sink)
		 * without a pacing timer on every send (base/tcp.h): bulk up
		 * to a loopback sink, 1 GiB, 4,050 against 2,500 MB/s where
		 * the default is BBR.  A remote one keeps the system's
		 * congestion control. */
		if (bs_addr_is_loopback(sa))
			(void)bs_tcp_reno(fd);
		if (connect(fd, sa, c->slot[a->index].len) != 0 && errno != EINPROGRESS) {
			c->last_err = errno;
			close(fd);
			continue;
		}
		a->fd = fd;
		a->c = c;
		/* Read as well as write: see attempt_cb().  The change costs
		 * no epoll_ctl(2): the upstream's reading replaces both with
		 * one modification, as it replaced the write alone. */
		a->ev_on = event_assign(a->ev, c->base, fd, EV_READ | EV_WRITE, attempt_cb, a) == 0;
		if (a->ev_on) {
			/* Fails only on a loop without priorities (unit tests). */
			(void)event_priority_set(a->ev, PX_PRI_BULK);
			a->ev_on = event_add(a->ev, NULL) == 0;
		}
		if (!a->ev_on) {
			c->last_err = ENOMEM;
			attempt_close(a);
			continue;
		}
		break;
	}
	/* Either the next attempt after the delay, or, when nothing is left
	 * and nothing is live, the failure report on the next loop turn. */
	if (c->next >= c->n && live_attempts(c) > 0)
		return;
	if (c->next >= c->n)
		tv.tv_usec = 0;
	if (!c->delay_made) {
		evtimer_assign(c->delay, c->base, delay_cb, c);
		/* Fails only on a loop without priorities (unit tests). */
		(void)event_priority_set(c->delay, PX_PRI_BULK);
		c->delay_made = 1;
	}
	event_add(c->delay, &tv);
}

struct px_connector *
px_connect_start(struct event_base *base, const struct sockaddr_storage *addrs,
    const socklen_t *lens, size_t n, unsigned timeout_ms, px_connect_cb cb, void *arg)
{
	struct px_connector *c;
	struct timeval tv;
	size_t i, at, step = px_mem_round(event_get_struct_event_size());
	char *evs;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (n > MAX_ATTEMPTS)
		n = MAX_ATTEMPTS;
	/* The events past the slots: the delay, the timeout, an attempt's
	 * each. */
	at = px_mem_round(sizeof(*c) + n * sizeof(c->slot[0]));
	c = malloc(at + (2 + n) * step);
	if (c == NULL)
		return NULL;
	evs = (char *)c + at;
	c->base = base;
	c->n = n;
	c->next = 0;
	c->delay = (struct event *)(void *)evs;
	c->timeout = (struct event *)(void *)(evs + step);
	c->delay_made = 0;
	c->last_err = 0;
	c->cb = cb;
	c->arg = arg;
	for (i = 0; i < n; i++) {
		memcpy(&c->slot[i].addr, &addrs[i], lens[i] <= sizeof(addrs[i]) ? lens[i] : sizeof(addrs[i]));
		c->slot[i].len = lens[i];
		memset(&c->slot[i].att, 0, sizeof(c->slot[i].att));
		c->slot[i].att.fd = -1;
		c->slot[i].att.ev = (struct event *)(void *)(evs + (2 + i) * step);
	}
	if (evtimer_assign(c->timeout, base, timeout_cb, c) != 0) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	/* Fails only on a loop without priorities (unit tests). */
	(void)event_priority_set(c->timeout, PX_PRI_BULK);
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	event_add(c->timeout, &tv);
	start_next(c);
	return c;
}

void
px_connect_cancel(struct px_connector *c)
{
	if (c != NULL)
		connector_free(c);
}
