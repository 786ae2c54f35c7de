/*
 * proxy/conns.c: the open client connections of one server (see conns.h).
 *
 * Touched only on the loop's thread, like the server that holds it.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "conf/config.h"
#include "proxy/conn.h"
#include "proxy/conns.h"
#include "proxy/server.h"
#include "proxy/share.h"

struct px_conns {
	TAILQ_HEAD(, px_conn) list;
	unsigned n;               /* counted against [proxy] max_connections */
	unsigned nrefusing;       /* refused over a share, answer in flight */
	struct px_share_list shares; /* per session and peer uid (share.c) */
	struct event *idle_trim;  /* armed when the last connection closes */
};

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
	if (cs->n == 0)
		malloc_trim(0);
}

struct px_conns *
px_conns_new(struct event_base *base)
{
	struct px_conns *cs = calloc(1, sizeof(*cs));

	if (cs == NULL)
		return NULL;
	/*
	 * glibc gives the top of the heap back to the system as soon as
	 * 128 KiB of it are free (M_TRIM_THRESHOLD), and a relay's buffers
	 * (TLS records, 64 KiB reads under a TLS filter, up to RELAY_HIGH
	 * of output) come and go by more than that: a bulk stream through a
	 * terminated tunnel took a page fault, a zeroed page, every 6.7 KB
	 * (40,000 per 256 MiB).  Up to 4 MiB stays; idle_trim_cb() gives it
	 * back once the proxy is idle.  Setting one threshold stops glibc's
	 * dynamic ones, so the mmap threshold is set too, above any buffer
	 * a relay allocates.
	 */
	(void)mallopt(M_TRIM_THRESHOLD, 4 << 20);
	(void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
	TAILQ_INIT(&cs->list);
	LIST_INIT(&cs->shares);
	cs->idle_trim = evtimer_new(base, idle_trim_cb, cs);
	if (cs->idle_trim == NULL) {
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
	free(cs);
}

int
px_conns_add(struct px_conn *c, unsigned *held)
{
	struct px_server *srv = c->srv;
	struct px_conns *cs = px_server_conns(srv);
	int over = 0;

	TAILQ_INSERT_TAIL(&cs->list, c, entry);
	/* The session's share, and the peer uid's within it, are checked
	 * here, before the request head: a client over its share is answered
	 * at once, so it never waits, and it never counts against
	 * [proxy] max_connections, so refusing it never fills the proxy for
	 * the other sessions. */
	if (c->sess != NULL)
		over = px_share_take(&cs->shares, c->session, c->is_unix ? c->uid : -1,
		    c->sess->max_connections, c->sess->max_connections_per_uid, &c->share_sess,
		    &c->share_uid, held);
	if (over == 0) {
		c->counted = 1;
		cs->n++;
		px_conns_limit_check(srv);
	} else if (cs->nrefusing < REFUSING_MAX) {
		c->linger = 1;
		cs->nrefusing++;
	}
	return over;
}

void
px_conns_remove(struct px_conn *c)
{
	struct px_server *srv = c->srv;
	struct px_conns *cs = px_server_conns(srv);

	TAILQ_REMOVE(&cs->list, c, entry);
	px_share_put(c->share_sess);
	px_share_put(c->share_uid);
	if (c->linger)
		cs->nrefusing--;
	if (c->counted) {
		cs->n--;
		px_conns_limit_check(srv);
	}
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
	return px_server_conns(srv)->n;
}

unsigned
px_conns_relayed(const struct px_server *srv, const char *name, uint64_t *up, uint64_t *down)
{
	const struct px_conn *c;
	unsigned n = 0;

	*up = *down = 0;
	TAILQ_FOREACH(c, &px_server_conns(srv)->list, entry) {
		if (name != NULL && strcmp(c->session, name) != 0)
			continue;
		n++;
		*up += c->cli.bytes;
		*down += c->up.bytes;
	}
	return n;
}

/* By comparison, not equality: a reload may move the limit past the count
 * either way, and the listeners must follow. */
void
px_conns_limit_check(struct px_server *srv)
{
	int full = px_server_conns(srv)->n >= cf_config_proxy(px_server_config(srv))->max_connections;

	if (full != px_listeners_paused(srv))
		px_listeners_pause(srv, full);
}
