/*
 * proxy/flow/replace.c: placeholders replaced in the path, body and
 * WebSocket text frames of requests inside a terminated tunnel (see
 * replace.h).  The bytes are the codec's (proxy/proto/bodyph.h); this file
 * picks the secrets, holds the state in the tunnel and moves the bytes.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "conf/config.h"
#include "conf/inject.h"
#include "conf/secret.h"
#include "proxy/admin/stats.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/replace.h"
#include "proxy/proto/bodyph.h"
#include "proxy/proto/http.h"

/*
 * Add to B the placeholders of C's secrets bound to the tunnel's host and
 * port for the request target PATH (LEN bytes) with "replace" at WHERE,
 * each value written as ENC.  *FIRST is the first such secret's name.
 * Returns how many, or -ENOMEM.
 */
static long
gather(const struct px_conn *c, const char *path, size_t len, unsigned where,
    enum px_bph_enc enc, struct px_bph *b, const char **first)
{
	size_t i, n = cf_session_nsecrets(c->sess);

	for (i = 0; i < n && b->n < PX_BPH_MAX; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);
		const struct cf_inject *inj = cf_secret_binding(sec, c->tm->host.name, c->tm->port,
		    path, len);
		const char *ph = cf_session_placeholder(c->sess, i), *value;
		size_t vlen = 0;
		int rc;

		if (inj == NULL || inj->kind != CF_INJECT_REPLACE || !(inj->where & where) ||
		    ph == NULL || (value = cf_secret_value(sec, &vlen)) == NULL)
			continue;
		rc = px_bph_add(b, ph, strlen(ph), value, vlen, enc);
		if (rc == -ENOMEM)
			return -ENOMEM;
		if (rc == 0 && *first == NULL)
			*first = cf_secret_name(sec);
	}
	return (long)b->n;
}

/* Count a replacement of secret NAME for C (the stats, and the audit
 * line's secret when the request has none yet). */
static void
counted(struct px_conn *c, const char *name)
{
	if (name == NULL)
		return;
	if (c->tm->secret[0] == '\0')
		snprintf(c->tm->secret, sizeof(c->tm->secret), "%s", name);
	px_stats_secret(px_server_stats(c->srv), c->session, name, PX_SECRET_INJECTED);
}

int
px_replace_build_head(struct px_conn *c, const struct px_http_request *req, const char *query,
    size_t qlen, const char *extra, size_t elen, struct evbuffer *out)
{
	struct px_http_request r = *req;
	struct px_bph b;
	struct px_bph_buf path;
	const char *first = NULL;
	long n;
	int rc;

	memset(&b, 0, sizeof(b));
	memset(&path, 0, sizeof(path));
	n = gather(c, req->path, req->path_len, CF_REPLACE_PATH, PX_BPH_PATH, &b, &first);
	if (n > 0) {
		n = px_bph_path(&b, req->path, req->path_len, &path);
		if (n > 0) {
			r.path = (const char *)path.p;
			r.path_len = path.len;
			counted(c, first);
		}
	}
	px_bph_clear(&b);
	if (n < 0)
		return -ENOMEM;
	rc = px_http_build_tls_head(&r, c->tm->host.name, c->tm->port, query, qlen, extra, elen, out);
	px_bph_buf_wipe(&path);
	return rc;
}

/* The media type REQ's Content-Type names. */
static enum px_bph_media
media(const struct px_http_request *req)
{
	size_t k;

	for (k = 0; k < req->nheaders; k++)
		if (req->headers[k].name_len == 12 &&
		    strncasecmp(req->headers[k].name, "content-type", 12) == 0)
			return px_bph_media(req->headers[k].value, req->headers[k].value_len);
	return PX_BPH_MEDIA_NONE;
}

/* Refuse C's request: its body is over replace_max. */
static void
refuse_large(struct px_conn *c, const struct px_http_request *req, const char *name)
{
	char d[400];

	snprintf(d, sizeof(d), "the request body (%lld bytes) is larger than replace_max (%zu bytes), "
	    "the most the proxy holds to put the value of secret %s in it; raise replace_max in "
	    "[proxy], or send the body chunked (rewritten as it passes)", (long long)req->content_length,
	    px_conn_settings(c)->replace_max, name);
	px_conn_refuse(c, 413, CF_R_BAD_REQUEST, c->req.dec.rule, d);
}

int
px_replace_begin(struct px_conn *c, const struct px_http_request *req)
{
	struct px_bph_req *rp;
	enum px_bph_media m = PX_BPH_MEDIA_NONE;
	unsigned where;
	long n;

	px_bph_req_free(c->tm->rp);
	c->tm->rp = NULL;
	if (req->upgrade_websocket)
		where = CF_REPLACE_WEBSOCKET;
	else if ((req->chunked || req->content_length > 0) && (m = media(req)) != PX_BPH_MEDIA_NONE)
		where = CF_REPLACE_BODY;
	else
		return 0;
	if ((rp = calloc(1, sizeof(*rp))) == NULL)
		goto nomem;
	n = gather(c, req->path, req->path_len, where,
	    where == CF_REPLACE_WEBSOCKET ? PX_BPH_RAW : m == PX_BPH_MEDIA_FORM ? PX_BPH_FORM : PX_BPH_JSON,
	    &rp->set, &rp->secret);
	if (n <= 0) {
		px_bph_req_free(rp);
		if (n < 0)
			goto nomem;
		return 0;
	}
	if (where == CF_REPLACE_WEBSOCKET) {
		rp->mode = PX_BPH_WEBSOCKET;
		rp->ws.max = px_conn_settings(c)->replace_max;
	} else if (req->chunked) {
		struct px_http_limits lim;

		rp->mode = PX_BPH_CHUNKED;
		lim.max_headers = px_conn_settings(c)->max_headers;
		lim.max_header_bytes = px_conn_settings(c)->max_header_bytes;
		px_chunked_init(&rp->ch, &lim);
	} else {
		size_t hl = evbuffer_get_length(c->fwd->pending);
		unsigned char *h;

		if ((uint64_t)req->content_length > px_conn_settings(c)->replace_max) {
			refuse_large(c, req, rp->secret);
			px_bph_req_free(rp);
			return 1;
		}
		/* The head waits for the body: its length is not known yet. */
		rp->mode = PX_BPH_LENGTH;
		if ((h = evbuffer_pullup(c->fwd->pending, -1)) == NULL ||
		    px_bph_buf_add(&rp->head, h, hl) != 0) {
			px_bph_req_free(rp);
			goto nomem;
		}
		evbuffer_drain(c->fwd->pending, hl);
		/* The upstream cannot say "100 Continue" to a head it has
		 * not seen: the proxy says it, so the client sends the body
		 * now rather than after a timeout. */
		if (req->expect_continue && px_conn_cli_send(c, "HTTP/1.1 100 Continue\r\n\r\n", 25) != 0) {
			px_bph_req_free(rp);
			goto nomem;
		}
	}
	c->tm->rp = rp;
	return 0;
nomem:
	px_conn_free(c, "out of memory");
	return 1;
}

int
px_replace_has_body(const struct px_conn *c)
{
	return c->term && c->tm->rp != NULL && c->tm->rp->mode != PX_BPH_WEBSOCKET;
}

int
px_replace_body(struct px_conn *c, struct evbuffer *in, struct evbuffer *out, size_t n)
{
	struct px_bph_req *rp = c->tm->rp;
	struct px_bph_buf nb, nh;
	struct evbuffer *plain;
	unsigned char *p;
	int rc = -ENOMEM, done = 0;

	memset(&nb, 0, sizeof(nb));
	memset(&nh, 0, sizeof(nh));
	if ((p = evbuffer_pullup(in, (ev_ssize_t)n)) == NULL)
		return -ENOMEM;
	if (rp->mode == PX_BPH_LENGTH) {
		if (px_bph_buf_add(&rp->body, p, n) != 0)
			return -ENOMEM;
		evbuffer_drain(in, n);
		if (!c->fwd->req.done)
			return 0;
		if (px_bph_stream(&rp->set, &rp->st, rp->body.p, rp->body.len, 1, &nb) != 0 ||
		    px_bph_set_length((const char *)rp->head.p, rp->head.len, nb.len, &nh) != 0 ||
		    evbuffer_add(out, nh.p, nh.len) != 0 || evbuffer_add(out, nb.p, nb.len) != 0)
			goto out;
	} else {
		const char *why = NULL;
		ssize_t used;
		size_t pl;

		/* The decoded chunks; empty between calls. */
		if (rp->scratch == NULL && (rp->scratch = evbuffer_new()) == NULL)
			return -ENOMEM;
		plain = rp->scratch;
		used = px_chunked_decode(&rp->ch, (const char *)p, n, plain, &done, &why);
		if (used < 0 || (size_t)used != n) {
			evbuffer_drain(plain, evbuffer_get_length(plain));
			return used == -ENOMEM ? -ENOMEM : -EPROTO;
		}
		evbuffer_drain(in, n);
		pl = evbuffer_get_length(plain);
		p = pl > 0 ? evbuffer_pullup(plain, -1) : NULL;
		rc = px_bph_stream(&rp->set, &rp->st, p, pl, done, &nb);
		evbuffer_drain(plain, pl);
		if (rc != 0)
			goto out;
		rc = -ENOMEM;
		/* Chunked stays chunked: one chunk for what is decided, the
		 * last chunk at the end (the trailers are dropped). */
		if (nb.len > 0 && (evbuffer_add_printf(out, "%zx\r\n", nb.len) < 0 ||
		    evbuffer_add(out, nb.p, nb.len) != 0 || evbuffer_add(out, "\r\n", 2) != 0))
			goto out;
		if (done && evbuffer_add(out, "0\r\n\r\n", 5) != 0)
			goto out;
	}
	rc = 0;
	if (rp->st.replaced > rp->counted) {
		rp->counted = rp->st.replaced;
		counted(c, rp->secret);
	}
	if (c->fwd->req.done) {
		px_bph_req_free(rp);
		c->tm->rp = NULL;
	}
out:
	px_bph_buf_wipe(&nb);
	px_bph_buf_wipe(&nh);
	return rc;
}

/* A masking key from the CSPRNG (RFC 6455 §5.3: unpredictable). */
static void
ws_key(unsigned char key[4])
{
	if (RAND_bytes(key, 4) != 1)
		memset(key, 0, 4);
}

struct evbuffer *
px_replace_ws(struct px_conn *c, struct evbuffer *in)
{
	struct px_bph_req *rp = c->tm != NULL ? c->tm->rp : NULL;
	struct evbuffer *wsout;
	struct px_bph_buf nb;
	const char *why = NULL;
	size_t n = evbuffer_get_length(in);
	unsigned char *p;
	char d[200];
	int rc;

	if (rp == NULL || rp->mode != PX_BPH_WEBSOCKET)
		return in;
	/* The rewritten frames; the caller's send empties it. */
	if (rp->scratch == NULL && (rp->scratch = evbuffer_new()) == NULL)
		goto nomem;
	wsout = rp->scratch;
	if (n == 0)
		return wsout;
	memset(&nb, 0, sizeof(nb));
	if ((p = evbuffer_pullup(in, (ev_ssize_t)n)) == NULL)
		goto nomem;
	rc = px_bph_ws(&rp->set, &rp->ws, p, n, ws_key, &nb, &why);
	evbuffer_drain(in, n);
	if (rc == 0 && evbuffer_add(wsout, nb.p, nb.len) != 0)
		rc = -ENOMEM;
	px_bph_buf_wipe(&nb);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc != 0) {
		snprintf(d, sizeof(d), "websocket frames from the client the proxy does not pass: %s%s",
		    why != NULL ? why : "bad framing", rc == -EMSGSIZE ? " (replace_max)" : "");
		px_conn_free(c, d);
		return NULL;
	}
	if (rp->ws.st.replaced > rp->counted) {
		rp->counted = rp->ws.st.replaced;
		counted(c, rp->secret);
	}
	return wsout;
nomem:
	px_conn_free(c, "out of memory");
	return NULL;
}

int
px_replace_binds(const struct px_conn *c)
{
	size_t i, k, n = cf_session_nsecrets(c->sess);

	for (i = 0; i < n; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);

		for (k = 0; k < cf_secret_ninject(sec); k++) {
			const struct cf_inject *inj = cf_secret_inject(sec, k);

			if (inj->kind == CF_INJECT_REPLACE && inj->port == c->tm->port &&
			    strcmp(inj->host, c->tm->host.name) == 0)
				return 1;
		}
	}
	return 0;
}
