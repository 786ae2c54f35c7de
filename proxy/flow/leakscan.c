/*
 * proxy/flow/leakscan.c: the session's own secrets and canaries in what a
 * request sends (leakscan.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <openssl/crypto.h>

#include "conf/canary.h"
#include "conf/decide.h"
#include "conf/secret.h"
#include "proxy/admin/stats.h"
#include "proxy/core/audit.h"
#include "proxy/core/log.h"
#include "proxy/core/server.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/h2.h"
#include "proxy/flow/leakscan.h"
#include "proxy/proto/http.h"
#include "proxy/proto/leak.h"

/* What the audit shows for a host name that spells a needle. */
#define REDACTED_HOST "redacted.invalid"

/* What a needle of the scan is. */
struct needle {
	size_t idx;	/* the secret's (cf_session_secret()) or the canary's */
	int canary;
	int value;	/* the secret's value, not its placeholder */
	char name[72];	/* the secret's, or the canary's variable */
};

/* Where a chunked body's decoder stands (lenient: the framing is judged
 * by px_chunked_scan(); this only skips it). */
enum dechunk { DC_SIZE = 0, DC_EXT, DC_SIZE_LF, DC_DATA, DC_DATA_CR, DC_DATA_LF, DC_REST };

/* A session's needles, made once for the snapshot (cf_session_memo())
 * and read by every connection of it: not changed once made. */
struct table {
	struct px_leak *leak;
	struct needle n[PX_LEAK_NEEDLES];
	uint64_t canaries;	/* their bits */
};

struct px_leakscan {
	/* The snapshot (a reference: its session and the session's table
	 * stay valid) and session it was made for; scans of earlier ones,
	 * which an HTTP/2 stream still open may use, until the connection
	 * ends. */
	struct cf_config *cfg;
	const struct cf_session *sess;
	struct px_leakscan *older;
	const struct table *t;
	/* The body of the request in progress. */
	uint64_t active;
	int chunked;
	enum dechunk dc;
	uint64_t left;
	struct px_leak_carry carry;
};

void
px_leakscan_free(struct px_leakscan *ls)
{
	while (ls != NULL) {
		struct px_leakscan *older = ls->older;

		px_leak_carry_free(&ls->carry);
		cf_config_free(ls->cfg);
		free(ls);
		ls = older;
	}
}

/* Add LEN bytes at S as needle N of T, for session SESS (too short or
 * too many: left out, the raw-form checks still hold for placeholders). */
static void
add(struct table *t, const struct cf_session *sess, const char *s, size_t len, struct needle n)
{
	long i;

	if (s == NULL || len < PX_LEAK_MIN || len > PX_LEAK_MAX)
		return;
	if ((i = px_leak_add(t->leak, s, len)) < 0) {
		log_warnx("session %s: a secret is left out of the leak scan: %s", sess->name,
		    strerror((int)-i));
		return;
	}
	t->n[i] = n;
	snprintf(t->n[i].name, sizeof(t->n[i].name), "%s", n.canary ?
	    cf_session_canary_env(sess, n.idx) : cf_secret_name(cf_session_secret(sess, n.idx)));
	if (n.canary)
		t->canaries |= 1ULL << i;
}

static void
table_free(void *p)
{
	struct table *t = p;

	if (t != NULL)
		px_leak_free(t->leak);
	free(t);
}

/* SESS's needles: its canaries, and each secret's placeholder and value. */
static struct table *
table_new(const struct cf_session *sess)
{
	struct table *t;
	size_t i, n;

	if ((t = calloc(1, sizeof(*t))) == NULL || (t->leak = px_leak_new()) == NULL) {
		free(t);
		return NULL;
	}
	n = cf_session_ncanaries(sess);
	for (i = 0; i < n; i++) {
		char v[CF_PLACEHOLDER_MAX + 1];
		long len = cf_session_canary_value(sess, i, v, sizeof(v));

		if (len > 0)
			add(t, sess, v, (size_t)len, (struct needle){ .idx = i, .canary = 1 });
		OPENSSL_cleanse(v, sizeof(v));
	}
	n = cf_session_nsecrets(sess);
	for (i = 0; i < n; i++) {
		const char *ph = cf_session_placeholder(sess, i), *v;
		size_t vlen = 0;

		if (ph != NULL)
			add(t, sess, ph, strlen(ph), (struct needle){ .idx = i });
		v = cf_secret_value(cf_session_secret(sess, i), &vlen);
		add(t, sess, v, vlen, (struct needle){ .idx = i, .value = 1 });
	}
	return t;
}

/* C's scan, made the first time; NULL when its session has no secrets nor
 * canaries (or memory ran out: the raw checks of decide.c stay). */
static struct px_leakscan *
get(struct px_conn *c)
{
	struct px_leakscan *ls = c->leak;
	const struct table *t;

	if (ls != NULL && ls->cfg == c->cfg && ls->sess == c->sess)
		return ls;
	if (c->sess == NULL || c->cfg == NULL ||
	    (cf_session_nsecrets(c->sess) == 0 && cf_session_ncanaries(c->sess) == 0))
		return NULL;
	/* The session's table, made by the first connection that needs it. */
	if ((t = cf_session_memo(c->sess)) == NULL) {
		struct table *nt = table_new(c->sess);

		if (nt == NULL)
			return NULL;
		t = cf_session_memo_set(c->sess, nt, table_free);
	}
	if ((ls = calloc(1, sizeof(*ls))) == NULL)
		return NULL;
	ls->t = t;
	ls->cfg = cf_config_ref(c->cfg);
	ls->sess = c->sess;
	ls->older = c->leak;
	/* Only HTTP/2 streams outlive the request that made the scan. */
	if (c->tm == NULL || c->tm->h2 == NULL) {
		px_leakscan_free(ls->older);
		ls->older = NULL;
	}
	c->leak = ls;
	c->leak_free = px_leakscan_free;
	return ls;
}

/* The needles that may not go to HOST:PORT with target PATH: the
 * canaries, and the secrets not bound there. */
static uint64_t
active_for(const struct px_leakscan *ls, const char *host, uint16_t port, const char *path,
    size_t plen)
{
	uint64_t m = ls->t->canaries;
	size_t i, n = px_leak_count(ls->t->leak);

	for (i = 0; i < n; i++)
		if (!ls->t->n[i].canary && cf_secret_binding(cf_session_secret(ls->sess, ls->t->n[i].idx),
		    host, port, path, plen) == NULL)
			m |= 1ULL << i;
	return m;
}

/*
 * Say what HIT is into D (SIZE bytes), found in WHERE (WLEN bytes) of a
 * request of C to HOST:PORT; count it, and write the alert line for a
 * canary.  Never a value: names, the place and the encoding.
 */
static void
describe(struct px_conn *c, const struct px_leakscan *ls, const struct px_leak_hit *hit,
    const char *where, const char *host, uint16_t port, char *d, size_t size)
{
	const struct needle *n = &ls->t->n[hit->needle];
	const char *enc = px_leak_enc_name(hit->enc);

	if (n->canary) {
		const char *var = n->name;
		struct px_json j;

		snprintf(d, size, "the request carries canary %s (%s, in the %s): a decoy no request "
		    "may carry, to %s:%u or anywhere", var, enc, where, host, port);
		px_stats_canary(px_server_stats(c->srv), c->session, var);
		px_json_begin(&j, "alert");
		px_json_str(&j, "kind", "canary");
		px_json_str(&j, "session", c->session);
		px_json_str(&j, "peer", c->peer);
		px_json_str(&j, "name", var);
		px_json_str(&j, "host", host);
		px_json_num(&j, "port", port);
		px_json_str(&j, "where", where);
		px_json_str(&j, "encoding", enc);
		px_json_emit(&j, px_server_audit(c->srv));
		log_warnx("ALERT: session %s (%s) sent canary %s (%s, in the %s) to %s:%u", c->session,
		    c->peer, var, enc, where, host, port);
		return;
	}
	snprintf(d, size, "the request carries the %s of secret %s (%s, in the %s), which may be sent "
	    "only where its inject lines say, not to %s:%u", n->value ? "value" : "placeholder",
	    n->name, enc, where, host, port);
	px_stats_secret(px_server_stats(c->srv), c->session, n->name, PX_SECRET_MISDIRECTED);
}

/* Does S[0..LEN) hold a needle of ACTIVE?  An error (no memory) counts
 * as one: what cannot be scanned does not go. */
static int
look(const struct px_leakscan *ls, uint64_t active, const void *s, size_t len,
    struct px_leak_hit *hit)
{
	int r = px_leak_find(ls->t->leak, active, s, len, hit);

	if (r < 0) {
		hit->needle = 0;
		hit->enc = PX_LEAK_RAW;
	}
	return r != 0;
}

/* The target carries a needle: cut the query from the path the audit
 * shows, and the path too when it is there. */
static void
redact_path(struct px_conn *c, const struct px_leakscan *ls)
{
	char *q = strchr(c->req.path, '?');
	struct px_leak_hit hit;

	if (q != NULL)
		snprintf(q, sizeof(c->req.path) - (size_t)(q - c->req.path), "?[redacted]");
	if (px_leak_find(ls->t->leak, ls->active, c->req.path, strlen(c->req.path), &hit) != 0)
		snprintf(c->req.path, sizeof(c->req.path), "/[redacted]");
}

int
px_leakscan_request(struct px_conn *c, const struct px_http_request *req, const char *host,
    uint16_t port)
{
	struct px_leakscan *ls = get(c);
	struct px_leak_hit hit;
	char where[96], d[640];
	size_t k;

	if (ls == NULL)
		return 0;
	ls->active = active_for(ls, host, port, req->path, req->path_len);
	ls->chunked = req->chunked;
	ls->dc = DC_SIZE;
	ls->left = 0;
	px_leak_carry_free(&ls->carry);
	if (ls->active == 0)
		return 0;
	if (look(ls, ls->active, req->target, req->target_len, &hit)) {
		snprintf(where, sizeof(where), "target");
		goto found;
	}
	for (k = 0; k < req->nheaders; k++)
		if (look(ls, ls->active, req->headers[k].value, req->headers[k].value_len, &hit)) {
			snprintf(where, sizeof(where), "header %.*s",
			    (int)(req->headers[k].name_len < 64 ? req->headers[k].name_len : 64),
			    req->headers[k].name);
			goto found;
		}
	return 0;
found:
	if (strcmp(where, "target") == 0)
		redact_path(c, ls);
	describe(c, ls, &hit, where, host, port, d, sizeof(d));
	px_conn_refuse(c, 403, CF_R_SECRET_MISDIRECTED, c->req.dec.rule, d);
	return 1;
}

int
px_leakscan_host(struct px_conn *c, const char *host, uint16_t port, int refuse)
{
	struct px_leakscan *ls = get(c);
	struct px_leak_hit hit;
	uint64_t active;
	char d[640];

	if (ls == NULL)
		return 0;
	active = active_for(ls, host, port, NULL, 0);
	if (active == 0 || px_leak_host(ls->t->leak, active, host, strlen(host), &hit) == 0)
		return 0;
	/* The name spells the secret: no line shows it. */
	if (host == c->req.host.name)
		snprintf(c->req.host.name, sizeof(c->req.host.name), "%s", REDACTED_HOST);
	describe(c, ls, &hit, "host name", REDACTED_HOST, port, d, sizeof(d));
	if (refuse) {
		px_conn_refuse(c, 403, CF_R_SECRET_MISDIRECTED, c->req.dec.rule, d);
	} else {
		c->close_why = cf_reason_code(CF_R_SECRET_MISDIRECTED);
		free(c->close_detail);
		c->close_detail = strdup(d);
	}
	return 1;
}

/* Feed the payload bytes of P[0..LEN), a piece of a chunked body, to the
 * scan, past the framing. */
static int
dechunk(struct px_leakscan *ls, const unsigned char *p, size_t len, struct px_leak_hit *hit)
{
	size_t i = 0;
	int r;

	while (i < len) {
		unsigned char ch = p[i];

		switch (ls->dc) {
		case DC_SIZE:
			if (ch >= '0' && ch <= '9')
				ls->left = ls->left * 16 + (ch - '0');
			else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
				ls->left = ls->left * 16 + ((ch | 0x20) - 'a' + 10);
			else if (ch == '\r')
				ls->dc = DC_SIZE_LF;
			else if (ch == '\n')
				ls->dc = ls->left ? DC_DATA : DC_REST;
			else
				ls->dc = DC_EXT;
			i++;
			break;
		case DC_EXT:
			if (ch == '\r')
				ls->dc = DC_SIZE_LF;
			else if (ch == '\n')
				ls->dc = ls->left ? DC_DATA : DC_REST;
			i++;
			break;
		case DC_SIZE_LF:
			ls->dc = ls->left ? DC_DATA : DC_REST;
			i++;
			break;
		case DC_DATA: {
			size_t n = len - i < ls->left ? len - i : (size_t)ls->left;

			if ((r = px_leak_feed(ls->t->leak, ls->active, &ls->carry, p + i, n, hit)) != 0)
				return r;
			i += n;
			if ((ls->left -= n) == 0)
				ls->dc = DC_DATA_CR;
			break;
		}
		case DC_DATA_CR:
			ls->dc = ch == '\r' ? DC_DATA_LF : DC_SIZE;
			i += ch == '\r' || ch == '\n';
			break;
		case DC_DATA_LF:
			ls->dc = DC_SIZE;
			i += ch == '\n';
			break;
		case DC_REST:
			/* Trailers: scanned as they are. */
			return px_leak_feed(ls->t->leak, ls->active, &ls->carry, p + i, len - i, hit);
		}
	}
	return 0;
}

int
px_leakscan_body(struct px_conn *c, struct evbuffer *in, size_t n)
{
	struct px_leakscan *ls = c->leak;
	struct evbuffer_iovec v[16];
	struct evbuffer_ptr at;
	struct px_leak_hit hit;
	char h[CF_HOST_TEXT_MAX], d[640];
	int r = 0;

	if (ls == NULL || ls->active == 0 || n == 0)
		return 0;
	evbuffer_ptr_set(in, &at, 0, EVBUFFER_PTR_SET);
	while (n > 0 && r == 0) {
		int nv = evbuffer_peek(in, (ev_ssize_t)n, &at, v, 16), i;

		if (nv <= 0)
			break;
		for (i = 0; i < nv && i < 16 && n > 0 && r == 0; i++) {
			size_t len = v[i].iov_len < n ? v[i].iov_len : n;

			r = ls->chunked ? dechunk(ls, v[i].iov_base, len, &hit) :
			    px_leak_feed(ls->t->leak, ls->active, &ls->carry, v[i].iov_base, len, &hit);
			n -= len;
			evbuffer_ptr_set(in, &at, len, EVBUFFER_PTR_ADD);
		}
	}
	if (r == 0)
		return 0;
	px_conn_host_text(c, h, sizeof(h));
	if (r < 0)
		snprintf(d, sizeof(d), "the request body could not be scanned for secrets: %s",
		    strerror(-r));
	else
		describe(c, ls, &hit, "body", h, c->req.port, d, sizeof(d));
	/* The head went upstream: the connection is cut, and its close line
	 * says why. */
	c->close_why = cf_reason_code(CF_R_SECRET_MISDIRECTED);
	free(c->close_detail);
	c->close_detail = strdup(d);
	log_info("session %s: request body to %s:%u cut: %s", c->session, h, c->req.port, d);
	return -EACCES;
}

int
px_leakscan_h2(struct px_conn *c, const struct px_h2_req *r, const char *host, uint16_t port,
    char *d, size_t size)
{
	struct px_leakscan *ls = get(c);
	struct px_leak_hit hit;
	char where[96];
	uint64_t active;
	size_t k;

	if (ls == NULL)
		return 0;
	active = active_for(ls, host, port, r->path, strlen(r->path));
	if (active == 0)
		return 0;
	if (look(ls, active, r->path, strlen(r->path), &hit)) {
		snprintf(where, sizeof(where), "target");
		goto found;
	}
	if (r->authority != NULL && look(ls, active, r->authority, strlen(r->authority), &hit)) {
		snprintf(where, sizeof(where), "header :authority");
		goto found;
	}
	for (k = 0; k < r->nheaders; k++)
		if (look(ls, active, r->headers[k].value, r->headers[k].valuelen, &hit)) {
			snprintf(where, sizeof(where), "header %.*s",
			    (int)(r->headers[k].namelen < 64 ? r->headers[k].namelen : 64),
			    r->headers[k].name);
			goto found;
		}
	return 0;
found:
	describe(c, ls, &hit, where, host, port, d, size);
	return 1;
}

const struct px_leak *
px_leakscan_h2_body(struct px_conn *c, const struct px_h2_req *r, const char *host, uint16_t port,
    uint64_t *active)
{
	struct px_leakscan *ls = get(c);

	*active = 0;
	if (ls == NULL)
		return NULL;
	*active = active_for(ls, host, port, r->path, strlen(r->path));
	return *active != 0 ? ls->t->leak : NULL;
}

void
px_leakscan_h2_hit(struct px_conn *c, const struct px_leak *leak, size_t needle, int enc)
{
	struct px_leakscan *ls = c->leak;
	struct px_leak_hit hit = { needle, (enum px_leak_enc)enc };
	char d[640];

	while (ls != NULL && ls->t->leak != leak)
		ls = ls->older;
	if (ls == NULL || needle >= px_leak_count(ls->t->leak))
		return;
	const char *host = c->tm != NULL ? c->tm->host.name : c->req.host.name;
	struct px_json j;

	describe(c, ls, &hit, "body", host, c->req.port, d, sizeof(d));
	/* The stream's decision line was its allow: this is its refusal,
	 * written when its DATA was cut. */
	px_json_begin(&j, "decision");
	px_json_str(&j, "session", c->session);
	px_json_str(&j, "peer", c->peer);
	px_json_str(&j, "method", c->req.method);
	px_json_str(&j, "host", host);
	px_json_num(&j, "port", c->req.port);
	px_json_str(&j, "path", c->req.path);
	px_json_str(&j, "tls", "terminated");
	px_json_str(&j, "proto", "h2");
	px_json_str(&j, "decision", "deny");
	px_json_str(&j, "reason", cf_reason_code(CF_R_SECRET_MISDIRECTED));
	px_json_str(&j, "detail", d);
	px_json_emit(&j, px_server_audit(c->srv));
	log_info("session %s: HTTP/2 stream reset: %s", c->session, d);
}

size_t
px_leakscan_canary_env(const struct px_conn *c, const char **names, const char **values,
    size_t max, char *buf, size_t size)
{
	size_t i, k = 0, used = 0, n = cf_session_ncanaries(c->sess);

	for (i = 0; i < n && k < max; i++) {
		long len = cf_session_canary_value(c->sess, i, buf + used, size - used);

		if (len < 0)
			break;
		names[k] = cf_session_canary_env(c->sess, i);
		values[k++] = buf + used;
		used += (size_t)len + 1;
	}
	return k;
}
