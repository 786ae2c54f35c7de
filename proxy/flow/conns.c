/*
 * proxy/flow/conns.c: the open client connections of one server (see conns.h).
 *
 * Touched only on the loop's thread, like the server that holds it: one
 * set per worker (worker.h).  The count against max_connections and the
 * sessions' shares are the workers' together, kept by worker.c.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "conf/config.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/conns.h"
#include "proxy/core/mem.h"
#include "proxy/core/server.h"
#include "proxy/core/conncount.h"
#include "proxy/core/worker.h"

/* Clients that wait for a slot, accepted in a burst past a full proxy
 * (take()); one more is refused over its share as before. */
#define WAITING_MAX 64

struct px_conns {
	TAILQ_HEAD(, px_conn) list;
	unsigned n;               /* this worker's, counted against max_connections */
	unsigned nrefusing;       /* refused over a share, answer in flight */
	struct event *idle_trim;  /* armed when the last connection closes */
	/* Accepted while the proxy was full, over a share only because it
	 * was (px_conns_add()), in the order they came; px_conns_wake()
	 * makes WAKE active, which tries them again and hands each that got
	 * a slot, or that is over its share with the proxy not full, to
	 * ADMIT. */
	TAILQ_HEAD(, px_conn) waiting;
	unsigned nwaiting;
	struct event *wake;
	px_conns_admit_fn admit;
};

static void wake_cb(evutil_socket_t fd, short what, void *arg);

/*
 * The proxy has had no connection for a moment (px_conns_remove() arms
 * this): give freed heap back to the system, so that RSS after a burst of
 * thousands of connections returns to its start instead of staying at the
 * peak, which glibc would keep.
 */
static void
idle_trim_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_conns *cs = arg;

	(void)fd;
	(void)what;
	if (cs->n == 0) {
		px_mem_trim();
	}
}

struct px_conns *
px_conns_new(struct event_base *base)
{
	struct px_conns *cs = calloc(1, sizeof(*cs));

	if (cs == NULL)
		return NULL;
	/*
	 * glibc trims the heap as soon as 128 KiB are free, and a relay's
	 * buffers come and go by more: a bulk stream took a page fault every
	 * 6.7 KB.  Keep up to 4 MiB (idle_trim_cb() gives it back when
	 * idle); setting one threshold stops the dynamic ones, so set both.
	 */
	(void)mallopt(M_TRIM_THRESHOLD, PX_MEM_TRIM_THRESHOLD);
	(void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
	TAILQ_INIT(&cs->list);
	TAILQ_INIT(&cs->waiting);
	cs->idle_trim = evtimer_new(base, idle_trim_cb, cs);
	cs->wake = event_new(base, -1, 0, wake_cb, cs);
	if (cs->idle_trim == NULL || cs->wake == NULL) {
		if (cs->idle_trim != NULL)
			event_free(cs->idle_trim);
		if (cs->wake != NULL)
			event_free(cs->wake);
		free(cs);
		errno = ENOMEM;
		return NULL;
	}
	return cs;
}

void
px_conns_free(struct px_conns *cs)
{
	if (cs == NULL)
		return;
	event_free(cs->idle_trim);
	event_free(cs->wake);
	free(cs);
}

/*
 * Take C's shares and its count (px_workers_take()).  A client over a
 * share only because the proxy is full (two workers accepted at once) would
 * have waited in the backlog with one worker, so it waits here, unread, up
 * to WAITING_MAX of them (AT_HEAD: back at the front after a failed try).
 */
static int
take(struct px_conns *cs, struct px_conn *c, unsigned *held, int at_head)
{
	struct px_server *srv = c->srv;
	int over = 0, change;

	change = px_workers_take(srv, c->sess != NULL ? c->session : NULL, c->is_unix ? c->uid : -1,
	    c->sess != NULL ? c->sess->max_connections : 0,
	    c->sess != NULL ? c->sess->max_connections_per_uid : 0, &c->share_sess, &c->share_uid,
	    held, &over);
	if (over == 0) {
		c->counted = 1;
		cs->n++;
		/* Another worker filled the proxy a moment ago: stop this
		 * loop's accepting now, not after the rest of a burst (its
		 * pause is on its way). */
		if (change >= 0)
			px_workers_limit(srv, change);
		else if (px_workers_full(srv) && !px_listeners_paused(srv))
			px_listeners_pause(srv, 1);
	} else if (over != -ENOMEM && px_workers_full(srv) && cs->nwaiting < WAITING_MAX) {
		/* Full now: the change back to not full comes to this loop
		 * after this callback (px_workers_limit()), and wakes C. */
		if (at_head)
			TAILQ_INSERT_HEAD(&cs->waiting, c, wait_entry);
		else
			TAILQ_INSERT_TAIL(&cs->waiting, c, wait_entry);
		c->waiting = 1;
		cs->nwaiting++;
		over = -EAGAIN;
	} else if (cs->nrefusing < REFUSING_MAX) {
		c->linger = 1;
		cs->nrefusing++;
	}
	return over;
}

int
px_conns_add(struct px_conn *c, unsigned *held, px_conns_admit_fn admit)
{
	struct px_conns *cs = px_server_conns(c->srv);

	TAILQ_INSERT_TAIL(&cs->list, c, entry);
	cs->admit = admit;
	/* The session's share, and the peer uid's within it, are checked
	 * here, before the request head: a client over its share is answered
	 * at once, so it never waits, and it never counts against
	 * [proxy] max_connections, so refusing it never fills the proxy for
	 * the other sessions. */
	return take(cs, c, held, 0);
}

int
px_conns_take_share(struct px_conn *c, unsigned *held)
{
	return px_workers_take_share(c->srv, c->session, c->is_unix ? c->uid : -1,
	    c->sess->max_connections, c->sess->max_connections_per_uid, &c->share_sess,
	    &c->share_uid, held);
}

/* The proxy is no longer full: try the waiting ones again, in order,
 * until one must wait again. */
static void
wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_conns *cs = arg;
	struct px_conn *c;
	unsigned held;
	int over;

	(void)fd;
	(void)what;
	while ((c = TAILQ_FIRST(&cs->waiting)) != NULL) {
		TAILQ_REMOVE(&cs->waiting, c, wait_entry);
		c->waiting = 0;
		cs->nwaiting--;
		held = 0;
		if ((over = take(cs, c, &held, 1)) == -EAGAIN)
			break;
		cs->admit(c, over, held);
	}
}

void
px_conns_wake(struct px_server *srv)
{
	struct px_conns *cs = px_server_conns(srv);

	if (!TAILQ_EMPTY(&cs->waiting))
		event_active(cs->wake, EV_TIMEOUT, 1);
}

int
px_conns_linger(struct px_conn *c)
{
	struct px_conns *cs = px_server_conns(c->srv);

	if (c->linger)
		return 1;
	if (cs->nrefusing >= REFUSING_MAX)
		return 0;
	c->linger = 1;
	cs->nrefusing++;
	return 1;
}

void
px_conns_remove(struct px_conn *c)
{
	struct px_server *srv = c->srv;
	struct px_conns *cs = px_server_conns(srv);
	int change;

	TAILQ_REMOVE(&cs->list, c, entry);
	if (c->waiting) {
		TAILQ_REMOVE(&cs->waiting, c, wait_entry);
		c->waiting = 0;
		cs->nwaiting--;
	}
	change = px_workers_release(srv, c->share_sess, c->share_uid, c->counted);
	c->share_sess = c->share_uid = NULL;
	if (c->linger)
		cs->nrefusing--;
	if (c->counted)
		cs->n--;
	if (change >= 0)
		px_workers_limit(srv, change);
	if (cs->n == 0) {
		/* Idle again: in a moment (libevent frees the bufferevents
		 * on its next turn, and a new client may come), give freed
		 * heap back to the system. */
		struct timeval tv = { IDLE_TRIM_S, 0 };
		event_add(cs->idle_trim, &tv);
	}
}

struct px_conn *
px_conns_first(const struct px_server *srv)
{
	return TAILQ_FIRST(&px_server_conns(srv)->list);
}

struct px_conn *
px_conns_next(const struct px_conn *c)
{
	return TAILQ_NEXT(c, entry);
}

unsigned
px_conns_count(const struct px_server *srv)
{
	return px_workers_count(srv);
}

struct relayed {
	const char *name;
	unsigned n;
	uint64_t up, down;
};

/* On each worker's loop: add up its own connections. */
static int
relayed_one(struct px_server *srv, void *arg)
{
	struct relayed *r = arg;
	const struct px_conn *c;

	TAILQ_FOREACH(c, &px_server_conns(srv)->list, entry) {
		if (r->name != NULL && strcmp(c->session, r->name) != 0)
			continue;
		r->n++;
		r->up += c->cli.bytes;
		r->down += c->up.bytes;
	}
	return 0;
}

unsigned
px_conns_relayed(const struct px_server *srv, const char *name, uint64_t *up, uint64_t *down)
{
	struct relayed r = { name, 0, 0, 0 };

	/* Every worker's connections, each read on its own loop. */
	(void)px_workers_each((struct px_server *)srv, relayed_one, &r);
	*up = r.up;
	*down = r.down;
	return r.n;
}

/* By comparison, not equality: a reload may move the limit past the count
 * either way, and the listeners must follow. */
void
px_conns_limit_check(struct px_server *srv)
{
	int change = px_workers_recheck(srv);

	if (change >= 0)
		px_workers_limit(srv, change);
	else if (px_workers_full(srv) != px_listeners_paused(srv))
		px_listeners_pause(srv, px_workers_full(srv));
}

