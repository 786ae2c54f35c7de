/*
 * proxy/flow/auth.c: the token step (see auth.h).  Every refusal is
 * written by px_conn_refuse() (the decision line, /metrics); the name a
 * client tried is put in its detail escaped, its token never.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "base/text.h"
#include "conf/config.h"
#include "conf/auth.h"
#include "proxy/admin/stats.h"
#include "proxy/core/log.h"
#include "proxy/flow/auth.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/conns.h"
#include "proxy/policy/authfail.h"
#include "proxy/proto/proxyauth.h"

static time_t
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* C's peer address into SS: 0, or -1. */
static int
peer_of(struct px_conn *c, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	memset(ss, 0, sizeof(*ss));
	return getpeername(bufferevent_getfd(c->cli.bev), (struct sockaddr *)ss, &len);
}

/* Refused before any comparison while C's address is blocked: 1 (C
 * answered), else 0. */
static int
blocked(struct px_conn *c, const struct sockaddr_storage *ss)
{
	unsigned left = px_authfail_blocked((const struct sockaddr *)ss, mono_s());
	char d[200];

	if (left == 0)
		return 0;
	c->req.retry_after = left;
	snprintf(d, sizeof(d), "too many wrong credentials from this address (%d within %d s): every "
	    "attempt is refused unread for %u s more", PX_AUTHFAIL_LIMIT, PX_AUTHFAIL_WINDOW_S, left);
	px_conn_refuse(c, 429, CF_R_PROXY_AUTH_BLOCKED, NULL, d);
	return 1;
}

/* A wrong credential (CR's name, NULL when none was read; WHY, or NULL
 * for "no such session or token"): counted against C's address, 407. */
static void
failed(struct px_conn *c, const struct sockaddr_storage *ss, const struct px_proxyauth *cr,
    const char *why)
{
	char name[4 * 64 + 1], d[600];

	if (px_authfail_failed((const struct sockaddr *)ss, mono_s()))
		log_warnx("%s: %d wrong credentials within %d s on an auth=token listener: refused "
		    "for %d s", c->peer, PX_AUTHFAIL_LIMIT, PX_AUTHFAIL_WINDOW_S, PX_AUTHFAIL_BLOCK_S);
	if (why != NULL) {
		snprintf(d, sizeof(d), "the credential is malformed: %s", why);
	} else if (cr != NULL && cr->name != NULL) {
		bs_escape(cr->name, cr->name_len < 64 ? cr->name_len : 64, name, sizeof(name), 0);
		snprintf(d, sizeof(d), "no session \"%s\" with that token", name);
	} else {
		snprintf(d, sizeof(d), "no session has that token");
	}
	px_conn_refuse(c, 407, CF_R_PROXY_AUTH_FAILED, NULL, d);
}

/* C is session S's from now on (HOW: PX_AUTH_HEADER or PX_AUTH_PREFACE):
 * 0, or -1 when over S's share (C refused). */
static int
auth_bind(struct px_conn *c, const struct cf_session *s, int how)
{
	struct bs_str b;
	unsigned held = 0;
	int over;

	bs_str_init(&b, c->session, sizeof(c->session));
	bs_str_add(&b, s->name);
	c->sess = s;
	c->auth = how;
	px_stats_conn_open(px_server_stats(c->srv), c->session);
	over = px_conns_take_share(c, &held);
	if (over != 0) {
		char d[200];

		snprintf(d, sizeof(d), "session %s holds %u connections, its max_connections",
		    c->session, held);
		px_conn_refuse(c, 503, over == -EDQUOT ? CF_R_SESSION_CONNECTION_LIMIT :
		    CF_R_UID_CONNECTION_LIMIT, NULL, d);
		return -1;
	}
	return 0;
}

/*
 * The credential a preface or a SOCKS5 sub-negotiation carried (RC from
 * px_proxyauth_preface() or px_proxyauth_socks(), CR, WHY), judged: on a
 * right one, USED bytes of the input are drained and C is bound to its
 * session.  Returns 0 then, or -1 with C refused (blocked, wrong, over
 * its share) or freed.
 */
static int
auth_credential(struct px_conn *c, int rc, const struct px_proxyauth *cr, const char *why,
    size_t used)
{
	struct sockaddr_storage ss;
	const struct cf_session *s;

	if (peer_of(c, &ss) != 0) {
		px_conn_free(c, "client error");
		return -1;
	}
	if (blocked(c, &ss))
		return -1;
	if (rc == PX_PROXYAUTH_BAD) {
		failed(c, &ss, NULL, why);
		return -1;
	}
	s = cf_auth_find(c->cfg, cr->name, cr->name_len, cr->token, cr->token_len);
	if (s == NULL) {
		failed(c, &ss, cr, NULL);
		return -1;
	}
	px_authfail_passed((const struct sockaddr *)&ss);
	evbuffer_drain(bufferevent_get_input(c->cli.bev), used);
	c->req.method[0] = '\0';   /* a refusal from here on names no request */
	return auth_bind(c, s, PX_AUTH_PREFACE);
}

int
px_auth_preface(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	size_t len = evbuffer_get_length(in), used = 0;
	struct px_proxyauth cr;
	const char *why = NULL;
	char *data;
	int rc;

	if (len > PX_PROXYAUTH_PREFACE_MAX)
		len = PX_PROXYAUTH_PREFACE_MAX;
	data = (char *)evbuffer_pullup(in, (ev_ssize_t)len);
	if (data == NULL) {
		px_conn_free(c, "out of memory");
		return -1;
	}
	rc = px_proxyauth_preface(data, len, &used, &cr, &why);
	if (rc == PX_PROXYAUTH_NONE)
		return 0;
	if (rc == PX_PROXYAUTH_INCOMPLETE)
		return -1;
	snprintf(c->req.method, sizeof(c->req.method), "POSTERN-TOKEN");
	if (auth_credential(c, rc, &cr, why, used) != 0)
		return -1;
	return 1;
}

int
px_auth_socks(struct px_conn *c)
{
	static const unsigned char passed[2] = { 0x01, 0x00 };
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	size_t len = evbuffer_get_length(in), used = 0;
	struct px_proxyauth cr;
	const char *why = NULL;
	unsigned char *data;
	int rc;

	/* At most 1 + 1 + 255 + 1 + 255 bytes. */
	if (len > 513)
		len = 513;
	data = evbuffer_pullup(in, (ev_ssize_t)len);
	if (data == NULL) {
		px_conn_free(c, "out of memory");
		return -1;
	}
	rc = px_proxyauth_socks(data, len, &used, &cr, &why);
	if (rc == PX_PROXYAUTH_INCOMPLETE)
		return -1;
	if (auth_credential(c, rc, &cr, why, used) != 0)
		return -1;
	evbuffer_add(bufferevent_get_output(c->cli.bev), passed, sizeof(passed));
	c->socks = 2;
	return 1;
}

/* The Proxy-Authorization header of REQ, or NULL; *N set when there are
 * several. */
static const struct px_http_header *
auth_header(const struct px_http_request *req, int *n)
{
	const struct px_http_header *h = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < req->nheaders; i++)
		if (req->headers[i].name_len == 19 &&
		    strncasecmp(req->headers[i].name, "proxy-authorization", 19) == 0) {
			h = &req->headers[i];
			(*n)++;
		}
	return h;
}

int
px_auth_request(struct px_conn *c, const struct px_http_request *req)
{
	const struct px_http_header *h;
	struct sockaddr_storage ss;
	struct px_proxyauth cr;
	const struct cf_session *s;
	const char *why = NULL;
	char buf[PX_PROXYAUTH_PREFACE_MAX];
	int n;

	if (c->auth == PX_AUTH_PREFACE) {
		/* Bound by its preface: a header the sandbox sets chooses
		 * nothing (and is never passed on: hop-by-hop). */
		if (c->sess != NULL && c->sess->has_token)
			return 0;
		px_conn_refuse(c, 407, CF_R_PROXY_AUTH_FAILED, NULL,
		    "this connection's session no longer has a token (the config changed)");
		return -1;
	}
	if (peer_of(c, &ss) != 0) {
		px_conn_free(c, "client error");
		return -1;
	}
	if (blocked(c, &ss))
		return -1;
	h = auth_header(req, &n);
	if (h == NULL) {
		px_conn_refuse(c, 407, CF_R_PROXY_AUTH_REQUIRED, NULL,
		    "this listener serves sessions by token: send Proxy-Authorization: Basic "
		    "base64(SESSION:TOKEN), e.g. curl -x http://SESSION:TOKEN@host:port, or "
		    "HTTP_PROXY=http://SESSION:TOKEN@host:port");
		return -1;
	}
	if (n > 1) {
		failed(c, &ss, NULL, "more than one Proxy-Authorization header");
		return -1;
	}
	if (px_proxyauth_header(h->value, h->value_len, buf, sizeof(buf), &cr, &why) != PX_PROXYAUTH_OK) {
		failed(c, &ss, NULL, why);
		return -1;
	}
	s = cf_auth_find(c->cfg, cr.name, cr.name_len, cr.token, cr.token_len);
	if (s == NULL) {
		failed(c, &ss, &cr, NULL);
		return -1;
	}
	px_authfail_passed((const struct sockaddr *)&ss);
	if (c->auth == PX_AUTH_HEADER) {
		/* Keep-alive: the connection stays its first session's. */
		if (strcmp(s->name, c->session) != 0) {
			char d[300];

			snprintf(d, sizeof(d), "this connection is session %s's; a request for session "
			    "%s needs a connection of its own", c->session, s->name);
			px_conn_refuse(c, 407, CF_R_PROXY_AUTH_FAILED, NULL, d);
			return -1;
		}
		c->sess = s;
		return 0;
	}
	return auth_bind(c, s, PX_AUTH_HEADER);
}
