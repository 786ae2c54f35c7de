/*
 * proxy/flow/forward.c: the plain-HTTP forward path, the relay step of the flow
 * for an absolute-form request (decide.c hands it a connected or reused
 * upstream): the rebuilt request head, the body by its framing, the
 * response head and body back, then keep-alive: the upstream goes to this
 * connection's pool of idle upstreams and the next request head is read
 * (accept.c, through px_conn.next_request).  After a 101 the connection
 * becomes a tunnel (tunnel.c).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "conf/config.h"
#include "conf/parent.h"
#include "proxy/flow/minthold.h"
#include "proxy/flow/leakscan.h"
#include "proxy/flow/conn.h"
#include "proxy/proto/http.h"
#include "proxy/core/log.h"
#include "proxy/core/loopcall.h"
#include "proxy/flow/replace.h"
#include "proxy/flow/revoke.h"

static const struct px_phase fwd_phase;

/* ---- the pool of idle upstreams ----------------------------------------- */

static struct pooled *
pool_find(struct px_conn *c)
{
	size_t i;

	for (i = 0; c->fwd->pool != NULL && i < POOL_MAX; i++)
		if (c->fwd->pool[i].bev != NULL && c->fwd->pool[i].port == c->req.port &&
		    c->fwd->pool[i].parent == (c->req.parent != NULL) &&
		    cf_host_equal(&c->fwd->pool[i].host, &c->req.host))
			return &c->fwd->pool[i];
	return NULL;
}

static void
pool_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct pooled *p = arg;

	(void)bev;
	(void)what;
	/* An idle upstream closed or failed: forget it. */
	px_pool_drop(p);
}

static void
pool_read_cb(struct bufferevent *bev, void *arg)
{
	/* An idle upstream must not speak; one that does is dropped. */
	(void)bev;
	px_pool_drop(arg);
}

static void
pool_put(struct px_conn *c)
{
	size_t i, slot = 0;

	if (c->fwd->pool == NULL && (c->fwd->pool = calloc(POOL_MAX, sizeof(*c->fwd->pool))) == NULL) {
		bufferevent_free(c->up.bev);
		c->up.bev = NULL;
		return;
	}
	for (i = 0; i < POOL_MAX; i++)
		if (c->fwd->pool[i].bev == NULL) {
			slot = i;
			break;
		}
	if (i == POOL_MAX)
		px_pool_drop(&c->fwd->pool[0]);
	c->fwd->pool[slot].host = c->req.host;
	c->fwd->pool[slot].port = c->req.port;
	snprintf(c->fwd->pool[slot].addr, sizeof(c->fwd->pool[slot].addr), "%s", c->req.addr);
	c->fwd->pool[slot].peer = c->up_peer;
	c->fwd->pool[slot].generation = c->generation;
	c->fwd->pool[slot].rule = c->req.dec.rule;
	c->fwd->pool[slot].parent = c->req.parent != NULL;
	c->fwd->pool[slot].bev = c->up.bev;
	bufferevent_setcb(c->up.bev, pool_read_cb, NULL, pool_event_cb, &c->fwd->pool[slot]);
	bufferevent_enable(c->up.bev, EV_READ);
	c->up.bev = NULL;
}

int
px_forward_begin(struct px_conn *c)
{
	if (c->fwd == NULL && (c->fwd = calloc(1, sizeof(*c->fwd))) == NULL)
		return -1;
	if (c->fwd->pending == NULL && (c->fwd->pending = evbuffer_new()) == NULL)
		return -1;
	return 0;
}

int
px_forward_reuse(struct px_conn *c)
{
	struct pooled *pp = pool_find(c);

	/*
	 * Reuse an idle upstream only under the snapshot and rule that
	 * vetted its addresses: the decision made then still holds.
	 * Otherwise close it and treat the request as a new one.
	 */
	if (pp != NULL && (pp->generation != c->generation || pp->rule != c->req.dec.rule)) {
		px_pool_drop(pp);
		pp = NULL;
	}
	if (pp != NULL) {
		c->up.bev = pp->bev;
		c->up_peer = pp->peer;
		snprintf(c->req.addr, sizeof(c->req.addr), "%s", pp->addr);
		pp->bev = NULL;
		px_pool_drop(pp);
		c->req.via_parent = c->req.parent != NULL;
		if (c->req.parent != NULL && c->req.parent->names && px_parent_http_head(c) != 0) {
			px_conn_free(c, "out of memory");
			return 1;
		}
		px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, "reused upstream connection", NULL);
		px_conn_arm_timer(c, px_conn_settings(c)->idle_timeout_ms);
		px_forward_start(c);
		return 1;
	}
	return 0;
}

/* ---- request and response ----------------------------------------------- */

/* At most this many body bytes are copied rather than moved (below). */
#define FWD_COPY_MAX 4096

/*
 * Pass N bytes from IN to OUT.  A small piece behind bytes OUT already
 * holds (the head just built, typically) is copied into OUT's last
 * chain: inside a terminated tunnel each chain is sealed as a TLS record
 * of its own (bufferevent_openssl writes chain by chain), so a short
 * answer's head and body went out as two records, each with its fixed
 * cost.  Anything larger moves chain by chain, without a copy.
 */
static void
fwd_move(struct evbuffer *in, struct evbuffer *out, size_t n)
{
	if (n <= FWD_COPY_MAX && evbuffer_get_length(out) > 0) {
		unsigned char *p = evbuffer_pullup(in, (ev_ssize_t)n);

		if (p != NULL && evbuffer_add(out, p, n) == 0) {
			evbuffer_drain(in, n);
			return;
		}
	}
	evbuffer_remove_buffer(in, out, n);
}

/* Pass request-body bytes from the client to upstream, as far as framing
 * and back-pressure allow.  Returns 0; -EPROTO on bad framing; -EDQUOT when
 * the bytes would pass the rule's byte budget: none of them goes,
 * the budget counts as spent, and the caller closes the connection. */
static int
fwd_request_body(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	struct evbuffer *out = bufferevent_get_output(c->up.bev);
	size_t avail = evbuffer_get_length(in), n = 0;
	int rc;

	if (c->fwd->req.done || avail == 0)
		return 0;
	px_conn_touch(c);
	if (c->fwd->req.chunked) {
		struct evbuffer_iovec v[8];
		int nv = evbuffer_peek(in, -1, NULL, v, 8), i, done = 0;
		const char *why = NULL;
		for (i = 0; i < nv && i < 8 && !done; i++) {
			ssize_t used = px_chunked_scan(&c->fwd->req.ch, v[i].iov_base, v[i].iov_len, &done, &why);
			if (used < 0) {
				log_debug("bad chunked request body: %s", why);
				return -EPROTO;
			}
			n += (size_t)used;
		}
		if (done)
			c->fwd->req.done = 1;
	} else {
		n = avail < (uint64_t)c->fwd->req.left ? avail : (size_t)c->fwd->req.left;
		c->fwd->req.left -= (int64_t)n;
		if (c->fwd->req.left == 0)
			c->fwd->req.done = 1;
	}
	if (n > 0 && px_leakscan_body(c, in, n) != 0)
		return -EACCES;
	if (n > 0 && px_conn_up_budget(c) != NULL) {
		struct px_budget *b = px_conn_up_budget(c);
		uint64_t now = px_budget_now_ms();

		uint64_t left = px_budget_up_left(b, now);

		if (left < n) {
			/* The attempt spends what is left: the requests after
			 * it are refused until the window resets, as a tunnel
			 * closed at the budget leaves it spent. */
			px_budget_up_take(b, now, left);
			px_budget_up_exceeded(b);
			return -EDQUOT;
		}
		px_budget_up_take(b, now, n);
	}
	if (n > 0) {
		if (!px_replace_has_body(c))
			fwd_move(in, out, n);
		else if ((rc = px_replace_body(c, in, out, n)) < 0)
			return rc;
		c->cli.bytes += n;
	}
	(void)px_conn_throttle(&c->cli, &c->up);
	/* A body read whole leaves the read on, as a head does
	 * (px_forward_start()). */
	return 0;
}

/*
 * Send RESP's head to the client, after draining its HEAD_LEN bytes from
 * IN, followed by the first BODY bytes of IN (at most FWD_COPY_MAX; the
 * rest follows by its framing).  Both are built aside in one chain and
 * handed over together (px_conn_send_buffer()): one writev(2) at once on a
 * plain socket, and one TLS record, not two, inside a terminated tunnel.
 */
/* Per worker thread (worker.h), freed by px_forward_cleanup(). */
static _Thread_local struct evbuffer *aside;

void
px_forward_cleanup(void)
{
	if (aside != NULL)
		evbuffer_free(aside);
	aside = NULL;
}

static int
client_head(struct px_conn *c, const struct px_http_response *resp, int keep_alive,
    struct evbuffer *in, size_t head_len, size_t body)
{
	unsigned char *p;
	int rc;

	if (aside == NULL && (aside = evbuffer_new()) == NULL)
		return -ENOMEM;
	rc = px_http_build_client_head(resp, keep_alive, aside);
	evbuffer_drain(in, head_len);
	if (body > 0 && ((p = evbuffer_pullup(in, (ev_ssize_t)body)) == NULL ||
	    evbuffer_add(aside, p, body) != 0))
		rc = -ENOMEM;
	else
		evbuffer_drain(in, body);
	if (c->term)
		(void)evbuffer_pullup(aside, -1);
	if (px_conn_send_buffer(&c->cli, aside, evbuffer_get_length(aside)) != 0)
		rc = -ENOMEM;
	evbuffer_drain(aside, evbuffer_get_length(aside));
	return rc;
}

static void
fwd_finish(struct px_conn *c)
{
	/* Response complete: a plain-HTTP request gives back its hold on
	 * conns= (an idle keep-alive connection is no connection to the
	 * host). */
	if (!c->term) {
		px_budget_release(c->budget, 1);
		c->budget = NULL;
	}
	if (c->term) {
		/* Inside a terminated tunnel the one upstream stays with the
		 * tunnel; one that will not take another request ends the
		 * client's connection too (the client opens a new tunnel). */
		px_record_request(c);
		if (!c->fwd->resp.keep_alive || !c->fwd->req.done || c->up.eof || c->up.bev == NULL ||
		    evbuffer_get_length(bufferevent_get_input(c->up.bev)) != 0)
			c->fwd->cli_keep_alive = 0;
	} else if (c->up.bev != NULL) {
		if (c->fwd->resp.keep_alive && c->fwd->req.done && !c->up.eof &&
		    evbuffer_get_length(bufferevent_get_input(c->up.bev)) == 0)
			pool_put(c);
		else {
			bufferevent_free(c->up.bev);
			c->up.bev = NULL;
		}
	}
	if (!c->fwd->cli_keep_alive || !c->fwd->req.done || c->cli.eof) {
		px_conn_close_after_write(c);
		return;
	}
	/* Next request on this keep-alive connection, judged on its own. */
	c->next_request(c);
}

/* ---- what a response may not carry back (scrub.h) ------------------------ */

/*
 * Overwrite in place what the next N bytes of the body at the front of IN
 * carry of a value bound here: returns how many of them may go now (all
 * when FINAL, the body's end), or -ENOMEM.
 */
static long
fwd_scrub(struct px_conn *c, struct px_scrub *s, struct evbuffer *in, size_t n, int final)
{
	const char *name = NULL;
	size_t go, m;
	unsigned char *p;

	if (n == 0)
		return 0;
	if ((p = evbuffer_pullup(in, (ev_ssize_t)n)) == NULL)
		return -ENOMEM;
	go = px_scrub_stream(s, &c->tm->body, p, n, final, &m, &name);
	px_term_reflected(c, m, name, "body");
	return (long)go;
}

/*
 * Only an identity body can be scanned as it comes: a Content-Encoding
 * (the request asked for none) would hide a value.  The coding's name, or
 * NULL when RESP may pass.
 */
static const char *
fwd_coded(const struct px_http_response *resp, char *buf, size_t size)
{
	size_t i;

	if (resp->no_body)
		return NULL;
	for (i = 0; i < resp->nheaders; i++) {
		const struct px_http_header *f = &resp->headers[i];

		if (f->name_len == 16 && strncasecmp(f->name, "Content-Encoding", 16) == 0 &&
		    !(f->value_len == 8 && strncasecmp(f->value, "identity", 8) == 0)) {
			snprintf(buf, size, "%.*s", (int)(f->value_len < 32 ? f->value_len : 32), f->value);
			return buf;
		}
	}
	return NULL;
}

/*
 * A chunked body from a host values are bound to: decoded into the
 * tunnel's plain buffer, scanned there, and sent on as chunks of what may
 * go (as it is to an HTTP/1.0 client); the trailers are dropped.  Returns
 * the bytes of IN consumed, -EPROTO with *WHY, or -ENOMEM.
 */
static long
fwd_chunked_scrub(struct px_conn *c, struct px_scrub *s, struct evbuffer *in,
    struct evbuffer *out, int *done, const char **why)
{
	struct evbuffer_iovec v[8];
	int nv = evbuffer_peek(in, -1, NULL, v, 8), i;
	size_t used = 0, plen;
	long go;

	if (c->tm->plain == NULL && (c->tm->plain = evbuffer_new()) == NULL)
		return -ENOMEM;
	for (i = 0; i < nv && i < 8 && !*done; i++) {
		ssize_t r = px_chunked_decode(&c->fwd->resp.ch, v[i].iov_base, v[i].iov_len, c->tm->plain,
		    done, why);

		if (r < 0)
			return r == -ENOMEM ? -ENOMEM : -EPROTO;
		used += (size_t)r;
	}
	evbuffer_drain(in, used);
	plen = evbuffer_get_length(c->tm->plain);
	if ((go = fwd_scrub(c, s, c->tm->plain, plen, *done)) < 0)
		return go;
	if (go > 0) {
		if (!c->fwd->resp_dechunk)
			evbuffer_add_printf(out, "%lx\r\n", (unsigned long)go);
		evbuffer_remove_buffer(c->tm->plain, out, (size_t)go);
		if (!c->fwd->resp_dechunk)
			evbuffer_add(out, "\r\n", 2);
	}
	if (*done && !c->fwd->resp_dechunk)
		evbuffer_add(out, "0\r\n\r\n", 5);
	return (long)used;
}

/*
 * Pass on AVAIL bytes of the response body at IN to OUT as its framing
 * says, scanned with SCRUB when not NULL; *MOVED is how many went.
 * Returns 1 when C was freed, else 0.
 */
static int
fwd_response_body(struct px_conn *c, struct px_scrub *scrub, struct evbuffer *in,
    struct evbuffer *out, size_t avail, size_t *moved)
{
	if (c->fwd->resp.close_delimited) {
		long go = scrub != NULL ? fwd_scrub(c, scrub, in, avail, c->up.eof) : (long)avail;

		if (go < 0) {
			px_conn_free(c, "out of memory");
			return 1;
		}
		*moved = (size_t)go;
		c->up.bytes += *moved;
		fwd_move(in, out, *moved);
	} else if (c->fwd->resp.chunked && scrub != NULL) {
		const char *why = NULL;
		int done = 0;
		long used = fwd_chunked_scrub(c, scrub, in, out, &done, &why);

		if (used < 0) {
			px_conn_free(c, used == -ENOMEM ? "out of memory" : "bad chunked response");
			return 1;
		}
		*moved = (size_t)used;
		c->up.bytes += *moved;
		if (done)
			c->fwd->rstate = RS_DONE;
	} else if (c->fwd->resp.chunked) {
		struct evbuffer_iovec v[8];
		int nv = evbuffer_peek(in, -1, NULL, v, 8), i, done = 0;
		size_t n = 0;
		const char *why = NULL;
		for (i = 0; i < nv && i < 8 && !done; i++) {
			ssize_t used = c->fwd->resp_dechunk ?
			    px_chunked_decode(&c->fwd->resp.ch, v[i].iov_base, v[i].iov_len, out, &done, &why) :
			    px_chunked_scan(&c->fwd->resp.ch, v[i].iov_base, v[i].iov_len, &done, &why);
			if (used < 0) {
				px_conn_free(c, used == -ENOMEM ? "out of memory" : "bad chunked response");
				return 1;
			}
			n += (size_t)used;
		}
		if (c->fwd->resp_dechunk)
			evbuffer_drain(in, n);
		else
			fwd_move(in, out, n);
		c->up.bytes += n;
		*moved = n;
		if (done)
			c->fwd->rstate = RS_DONE;
	} else {
		size_t n = avail < (uint64_t)c->fwd->resp.left ? avail : (size_t)c->fwd->resp.left;

		if (scrub != NULL) {
			long go = fwd_scrub(c, scrub, in, n, (uint64_t)n == (uint64_t)c->fwd->resp.left);

			if (go < 0) {
				px_conn_free(c, "out of memory");
				return 1;
			}
			n = (size_t)go;
		}
		fwd_move(in, out, n);
		c->up.bytes += n;
		c->fwd->resp.left -= (int64_t)n;
		*moved = n;
		if (c->fwd->resp.left == 0)
			c->fwd->rstate = RS_DONE;
	}
	return 0;
}

/*
 * Pass on what upstream sent: the response head (parsed, rebuilt for the
 * client), then the body as its framing says.  Returns 1 when C left the
 * forward path (answered, closing, freed, or a tunnel after a 101): the
 * caller must not touch it; 0 when more is awaited.
 */
static int
fwd_response(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->up.bev);
	struct evbuffer *out = bufferevent_get_output(c->cli.bev);
	struct px_scrub *scrub = c->term ? px_term_scrub(c) : NULL;

	while (c->fwd->rstate != RS_DONE) {
		size_t avail = evbuffer_get_length(in), moved = 0;

		if (c->fwd->rstate == RS_HEAD) {
			struct px_http_response resp;
			struct px_http_limits lim;
			size_t head_len = 0, want;
			const char *why = NULL;
			unsigned char *data;
			int rc;

			if (avail == 0)
				return 0;
			lim.max_headers = px_conn_settings(c)->max_headers;
			lim.max_header_bytes = px_conn_settings(c)->max_header_bytes;
			want = avail > lim.max_header_bytes + 1 ? lim.max_header_bytes + 1 : avail;
			data = evbuffer_pullup(in, (ev_ssize_t)want);
			px_http_response_init(&resp, c->hdrs, c->nhdrs_cap);
			resp.resume = c->fwd->resp_rs;
			rc = px_http_parse_response((const char *)data, want, &lim, c->fwd->req_is_head,
			    &resp, &head_len, &why);
			if (rc == PX_HTTP_INCOMPLETE) {
				c->fwd->resp_rs = resp.resume;
				return 0;
			}
			/* Whatever follows (the body, the head after a 1xx) is
			 * parsed from its own start. */
			memset(&c->fwd->resp_rs, 0, sizeof(c->fwd->resp_rs));
			if (rc != PX_HTTP_OK) {
				if (c->up.bytes == 0) {
					char d[200];
					snprintf(d, sizeof(d), "upstream sent a malformed response: %s", why ? why : "?");
					px_conn_refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->req.dec.rule, d);
				} else {
					px_conn_free(c, "bad upstream response");
				}
				return 1;
			}
			if (resp.status == 407 && c->req.parent != NULL && c->req.parent->names && !c->term &&
			    c->up.bytes == 0) {
				px_parent_refused(c, (const char *)data, head_len);
				return 1;
			}
			if (scrub != NULL) {
				/* The status line and every field (Location
				 * too), overwritten where the parse points. */
				const char *name = NULL;
				char coding[40], d[200];
				size_t m = px_scrub_mask(scrub, data, head_len, &name);

				memset(&c->tm->body, 0, sizeof(c->tm->body));
				px_term_reflected(c, m, name, "header");
				if (fwd_coded(&resp, coding, sizeof(coding)) != NULL) {
					snprintf(d, sizeof(d), "the upstream answered with Content-Encoding: %s, "
					    "which the reflection scan cannot read", coding);
					if (c->up.bytes == 0)
						px_conn_refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->req.dec.rule, d);
					else
						px_conn_free(c, "a coded response the reflection scan cannot read");
					return 1;
				}
			}
			if (resp.informational) {
				/* RFC 9110 §15.2: no 1xx to an HTTP/1.0 client. */
				if (c->fwd->req_minor != 0)
					client_head(c, &resp, 1, in, head_len, 0);
				else
					evbuffer_drain(in, head_len);
				continue;
			}
			c->fwd->cli_keep_alive = c->fwd->req.keep_alive && !resp.close_delimited && !resp.upgrade_websocket;
			c->fwd->resp.keep_alive = resp.keep_alive;
			c->req.resp_status = resp.status;
			if (c->term)
				px_minthold_answer(c, resp.status);
			if (c->term && !resp.keep_alive)
				c->fwd->cli_keep_alive = 0;
			if (resp.upgrade_websocket && c->fwd->req_upgrade) {
				/* A reload with revoke = yes since the request
				 * was decided found no tunnel to revoke: judge
				 * it now, before the 101 reaches the client.  A
				 * terminated tunnel's requests are judged anew
				 * each, and the tunnel by the pass. */
				if (!c->term && px_revoke_late(c))
					return 1;
				client_head(c, &resp, 1, in, head_len, 0);
				c->up.bytes += head_len;
				/* RFC 9110 §7.8: after 101 the connection is a tunnel. */
				c->fwd->req.done = 1;
				px_tunnel_upgrade(c);
				return 1;
			}
			c->fwd->resp_dechunk = 0;
			if (resp.chunked && c->fwd->req_minor == 0) {
				/* An HTTP/1.0 client cannot take chunked: drop the
				 * coding and delimit the body by closing. */
				size_t k, kept = 0;
				for (k = 0; k < resp.nheaders; k++)
					if (!(resp.headers[k].name_len == 17 &&
					    strncasecmp(resp.headers[k].name, "Transfer-Encoding", 17) == 0))
						resp.headers[kept++] = resp.headers[k];
				resp.nheaders = kept;
				c->fwd->resp_dechunk = 1;
				c->fwd->cli_keep_alive = 0;
			}
			c->fwd->resp.chunked = resp.chunked;
			c->fwd->resp.close_delimited = resp.close_delimited;
			c->fwd->resp.left = resp.content_length > 0 ? resp.content_length : 0;
			{
				/* A short Content-Length body already here goes
				 * with the head (client_head()): one TLS record
				 * in a terminated tunnel, one writev(2) else. */
				size_t body = 0;

				if (!resp.no_body && !resp.chunked && !resp.close_delimited) {
					body = avail - head_len;
					if ((uint64_t)body > (uint64_t)c->fwd->resp.left)
						body = (size_t)c->fwd->resp.left;
					if (body > FWD_COPY_MAX)
						body = 0;
					/* Scanned here only when whole. */
					if (scrub != NULL && (uint64_t)body == (uint64_t)c->fwd->resp.left && body > 0) {
						const char *name = NULL;
						size_t m = px_scrub_mask(scrub, data + head_len, body, &name);

						px_term_reflected(c, m, name, "body");
					} else if (scrub != NULL) {
						body = 0;
					}
				}
				client_head(c, &resp, c->fwd->cli_keep_alive, in, head_len, body);
				c->up.bytes += head_len + body;
				c->fwd->resp.left -= (int64_t)body;
			}
			if (resp.chunked) {
				struct px_http_limits l2 = lim;
				px_chunked_init(&c->fwd->resp.ch, &l2);
			}
			if (resp.no_body || (!resp.chunked && !resp.close_delimited && c->fwd->resp.left == 0))
				c->fwd->rstate = RS_DONE;
			else
				c->fwd->rstate = RS_BODY;
			continue;
		}

		/* RS_BODY */
		if (avail == 0)
			break;
		px_conn_touch(c);
		if (fwd_response_body(c, scrub, in, out, avail, &moved) != 0)
			return 1;
		if (px_conn_throttle(&c->up, &c->cli))
			return 0;
		/* What is left waits for the bytes that tell whether it
		 * begins a value (scrub.h). */
		if (moved == 0 && c->fwd->rstate != RS_DONE)
			break;
	}
	if (c->fwd->rstate == RS_DONE) {
		fwd_finish(c);
		return 1;
	}
	return 0;
}

/* ---- the forward path's callbacks --------------------------------------- */

static void
fwd_cli_read_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	int rc;

	(void)bev;
	px_loopcall_check();
	if (c->fwd->req.done) {
		/* Early bytes of the next request: they wait, unread further,
		 * for this answer to be out (px_forward_start()). */
		bufferevent_disable(c->cli.bev, EV_READ);
		return;
	}
	if ((rc = fwd_request_body(c)) < 0)
		px_conn_free(c, rc == -EDQUOT ? cf_reason_code(CF_R_BUDGET_EXCEEDED) :
		    rc == -EACCES ? NULL : "bad request body");
}

/* The client drained: resume reading upstream. */
static void
fwd_cli_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	if (px_conn_resume(c, &c->cli, 1))
		(void)fwd_response(c);
}

static void
fwd_up_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	px_loopcall_check();
	(void)fwd_response(arg);
}

/* Upstream drained: resume reading the request body. */
static void
fwd_up_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	(void)px_conn_resume(c, &c->up, !c->fwd->req.done);
}

static void
fwd_cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (px_conn_side_event(c, &c->cli, what) <= 0)
		return;
	/* A client that shuts its write side after its request still gets
	 * its whole answer. */
	if (!c->fwd->req.done)
		px_conn_free(c, "client closed during the request body");
}

static void
fwd_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if ((what & BEV_EVENT_ERROR) && c->fwd->rstate == RS_HEAD && c->up.bytes == 0) {
		px_conn_refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->req.dec.rule,
		    "upstream failed before answering");
		return;
	}
	if (px_conn_side_event(c, &c->up, what) <= 0)
		return;
	if (fwd_response(c))
		return;
	if (c->fwd->rstate == RS_BODY && c->fwd->resp.close_delimited) {
		c->fwd->rstate = RS_DONE;
		c->fwd->cli_keep_alive = 0;
		fwd_finish(c);
	} else if (c->fwd->rstate == RS_HEAD && c->up.bytes == 0) {
		px_conn_refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->req.dec.rule,
		    px_tunnel_closed_detail(c, "upstream closed the connection without answering"));
	} else {
		px_conn_free(c, "upstream closed mid-response");
	}
}

/* Idle: an upstream that accepted the request and never answered gets a
 * 504 (the client is still waiting for a head); otherwise close. */
static void
fwd_timeout(struct px_conn *c)
{
	struct timeval now;

	event_base_gettimeofday_cached(px_server_base(c->srv), &now);
	if (px_conn_ms_since(&c->last_activity, &now) >= (long)px_conn_settings(c)->idle_timeout_ms &&
	    c->fwd->rstate == RS_HEAD && evbuffer_get_length(bufferevent_get_output(c->cli.bev)) == 0) {
		px_conn_refuse(c, 504, CF_R_TIMEOUT, c->req.dec.rule,
		    "upstream did not answer within idle_timeout");
		return;
	}
	px_conn_idle_timeout(c);
}

/* Request body and response in flight. */
static const struct px_phase fwd_phase = {
	.name = "forward",
	.cli_read = fwd_cli_read_cb, .cli_write = fwd_cli_write_cb,
	.cli_event = fwd_cli_event_cb,
	.up_read = fwd_up_read_cb, .up_write = fwd_up_write_cb,
	.up_event = fwd_up_event_cb,
	.timeout = fwd_timeout,
};

void
px_forward_start(struct px_conn *c)
{
	c->fwd->rstate = RS_HEAD;
	memset(&c->fwd->resp_rs, 0, sizeof(c->fwd->resp_rs));
	px_conn_enter(c, &fwd_phase);
	bufferevent_setwatermark(c->up.bev, EV_WRITE, 0, 0);
	bufferevent_setwatermark(c->cli.bev, EV_WRITE, 0, 0);
	c->cli.bytes += evbuffer_get_length(c->fwd->pending);
	/* The rebuilt head at once, not a loop pass and two epoll_ctl(2)
	 * later. */
	if (px_conn_send_buffer(&c->up, c->fwd->pending, evbuffer_get_length(c->fwd->pending)) != 0) {
		px_conn_free(c, "out of memory");
		return;
	}
	/* Only when it is off: on a TLS filter (a terminated tunnel, whose
	 * upstream reads between requests) every enable also tries an
	 * SSL_read that finds nothing, some 2,500 instructions a request. */
	if (!(bufferevent_get_enabled(c->up.bev) & EV_READ))
		bufferevent_enable(c->up.bev, EV_READ);
	if (!c->fwd->req.done) {
		bufferevent_enable(c->cli.bev, EV_READ);
		int rc = fwd_request_body(c);

		if (rc < 0) {
			px_conn_free(c, rc == -EDQUOT ? cf_reason_code(CF_R_BUDGET_EXCEEDED) :
		    rc == -EACCES ? NULL : "bad request body");
			return;
		}
	}
	/* A request read whole leaves the client's read on: a keep-alive
	 * client sends nothing until it has its answer, and turning the
	 * read off now and on again for the next request costs two
	 * epoll_ctl(2) a request.  Bytes that do come meanwhile (a
	 * pipelined request, an EOF) stop it then (fwd_cli_read_cb(),
	 * fwd_cli_event_cb()), and wait in its input for head_next(). */
}
