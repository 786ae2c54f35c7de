/*
 * proxy/flow/h2tunnel.c: HTTP/2 inside a terminated TLS tunnel.  When
 * the client offered h2 and the upstream chose it (tunnel.c negotiates
 * ALPN: the client is given exactly what the upstream picked), both
 * decrypted streams go through one proxy/flow/h2 relay: this file does its I/O
 * on the connection's two TLS bufferevents, with back-pressure, and decides
 * each stream as term_decide() (decide.c) decides an HTTP/1.1 request:
 * :authority is the tunnel's host or 421, the session's rules in
 * CF_MODE_TLS with the path, a placeholder bound elsewhere is refused,
 * TRACE to a host a secret is bound to is refused, the secrets bound here
 * are put on a request that carries their placeholders as header edits.  Each stream
 * has its decision line and, once done, its request line ("proto":"h2").
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

#include "conf/config.h"
#include "conf/decide.h"
#include "conf/host.h"
#include "conf/inject.h"
#include "conf/secret.h"
#include "proxy/policy/budget.h"
#include "proxy/flow/leakscan.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/notice.h"
#include "proxy/flow/h2.h"
#include "proxy/proto/http.h"
#include "proxy/core/loopcall.h"
#include "proxy/admin/stats.h"

/* The most secrets put on one stream; their rendered values live here
 * only while px_h2_client_input() runs (the module copies them into its
 * never-indexed header fields), and are wiped as soon as it returns. */
#define T2_EDITS 8
#define T2_VAL (CF_SECRET_MAX * 3 + 256)
/* The request headers narrowed on every stream to a host a secret is bound
 * to (decide.c's narrowed[] says why): accept-encoding set to identity,
 * the others dropped (an edit without a value). */
static const struct px_h2_edit t2_narrowed[] = {
	{ "accept-encoding", "identity" }, { "sec-websocket-extensions", NULL },
	{ "range", NULL }, { "if-range", NULL },
};
#define T2_NARROWED (sizeof(t2_narrowed) / sizeof(t2_narrowed[0]))
static _Thread_local char t2_vals[T2_EDITS][T2_VAL];
static _Thread_local struct px_h2_edit t2_edits[T2_NARROWED + T2_EDITS];
static _Thread_local size_t t2_nvals;

static void
t2_wipe(void)
{
	size_t i;

	for (i = 0; i < t2_nvals; i++)
		OPENSSL_cleanse(t2_vals[i], sizeof(t2_vals[i]));
	t2_nvals = 0;
}

/* ---- I/O ------------------------------------------------------------- */

/* Take LEN bytes for side S unless its output is over RELAY_HIGH: then 0,
 * and the relay waits for px_h2_flush() from S's write callback.  Bytes
 * for an upstream that is gone are dropped (px_h2_upstream_eof() has
 * reset its streams). */
static ssize_t
t2_send(struct conn_side *s, const uint8_t *buf, size_t len)
{
	struct evbuffer *out;

	if (s->bev == NULL || s->eof)
		return (ssize_t)len;
	out = bufferevent_get_output(s->bev);
	if (evbuffer_get_length(out) >= RELAY_HIGH)
		return 0;
	if (evbuffer_add(out, buf, len) != 0)
		return -ENOMEM;
	return (ssize_t)len;
}

static ssize_t
t2_send_client(void *arg, const uint8_t *buf, size_t len)
{
	return t2_send(&((struct px_conn *)arg)->cli, buf, len);
}

static ssize_t
t2_send_upstream(void *arg, const uint8_t *buf, size_t len)
{
	return t2_send(&((struct px_conn *)arg)->up, buf, len);
}

/*
 * After the relay ran on C: RC is what it returned.  A relay that is over
 * (GOAWAY both ways, or a protocol error whose GOAWAY is queued) flushes
 * to the client and closes; another error closes at once.  Returns 0 when
 * C lives on, -1 when it is freed or closing.
 */
static int
t2_after(struct px_conn *c, int rc)
{
	const char *err = px_h2_error(c->tm->h2);

	if (rc < 0 && rc != -EPROTO) {
		px_conn_free(c, rc == -ENOMEM ? "out of memory" : "h2 relay failed");
		return -1;
	}
	if (px_h2_over(c->tm->h2) || (c->up.eof && c->cli.eof)) {
		if (err != NULL) {
			free(c->close_detail);
			c->close_detail = strdup(err);
			c->close_why = "h2_protocol_error";
		}
		px_conn_close_after_write(c);
		return -1;
	}
	return 0;
}

/* Feed what side S has read to the relay, one chunk at a time.  Returns
 * as t2_after(). */
static int
t2_feed(struct px_conn *c, struct conn_side *s)
{
	struct evbuffer *in = bufferevent_get_input(s->bev);
	struct evbuffer_iovec v;
	int rc = 0;

	px_conn_touch(c);
	while (rc == 0 && evbuffer_peek(in, -1, NULL, &v, 1) > 0 && v.iov_len > 0) {
		size_t n = v.iov_len;

		/* Every byte the client sends, frames and all,
		 * counts against the tunnel's up= budget; past it the
		 * tunnel closes, and nothing over it is fed to the relay. */
		if (s == &c->cli && c->budget != NULL && c->budget->up_max != 0) {
			uint64_t now = px_budget_now_ms(), left = px_budget_up_left(c->budget, now);

			if (left < n) {
				px_budget_up_take(c->budget, now, left);
				px_budget_up_exceeded(c->budget);
				px_conn_free(c, cf_reason_code(CF_R_BUDGET_EXCEEDED));
				return -1;
			}
			px_budget_up_take(c->budget, now, n);
		}

		if (s == &c->cli)
			rc = px_h2_client_input(c->tm->h2, v.iov_base, n);
		else
			rc = px_h2_upstream_input(c->tm->h2, v.iov_base, n);
		t2_wipe();
		s->bytes += n;
		evbuffer_drain(in, n);
	}
	return t2_after(c, rc);
}

static void
t2_read_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	px_loopcall_check();
	(void)t2_feed(c, px_conn_side_of(c, bev));
}

/* A side drained below the low watermark: what the relay holds may go. */
static void
t2_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	(void)t2_after(c, px_h2_flush(c->tm->h2));
}

/* The client gone: the connection ends (open streams are reported to the
 * audit by px_h2_free(), from px_conn_free()). */
static void
t2_cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_ERROR) {
		px_conn_free(c, "client error");
		return;
	}
	if (what & BEV_EVENT_EOF)
		px_conn_free(c, NULL);
}

/* The upstream gone: the streams it answered finish, the others are reset
 * to the client, which is sent GOAWAY. */
static void
t2_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	if (evbuffer_get_length(bufferevent_get_input(c->up.bev)) > 0 && t2_feed(c, &c->up) != 0)
		return;
	c->up.eof = 1;
	(void)t2_after(c, px_h2_upstream_eof(c->tm->h2));
}

/* Relaying HTTP/2 both ways, each stream decided on its own. */
static const struct px_phase h2_phase = {
	.name = "h2",
	.cli_read = t2_read_cb, .cli_write = t2_write_cb, .cli_event = t2_cli_event_cb,
	.up_read = t2_read_cb, .up_write = t2_write_cb, .up_event = t2_up_event_cb,
	.timeout = px_conn_idle_timeout,
};

/* ---- each stream ------------------------------------------------------ */

/* The secret of C's session whose placeholder R carries (in :path or a
 * header value) where that secret is not bound, or -1: every secret is
 * looked for, as misdirected() in decide.c does. */
static long
t2_misdirected(const struct px_conn *c, const struct px_h2_req *r)
{
	size_t i, k, n = cf_session_nsecrets(c->sess), plen = strlen(r->path);

	for (i = 0; i < n; i++) {
		int found = cf_session_has_placeholder(c->sess, i, r->path, plen) ||
		    (r->authority != NULL &&
		    cf_session_has_placeholder(c->sess, i, r->authority, strlen(r->authority)));

		for (k = 0; !found && k < r->nheaders; k++)
			found = cf_session_has_placeholder(c->sess, i, r->headers[k].value,
			    r->headers[k].valuelen);
		if (found && cf_secret_binding(cf_session_secret(c->sess, i), c->tm->host.name,
		    c->tm->port, r->path, plen) == NULL)
			return (long)i;
	}
	return -1;
}

/* The name of R's first header that a back end may take as the path
 * instead of :path (px_http_path_override()'s list), or NULL. */
static const char *
t2_path_override(const struct px_h2_req *r)
{
	size_t k;

	for (k = 0; k < r->nheaders; k++)
		if (px_http_is_path_override(r->headers[k].name, r->headers[k].namelen))
			return r->headers[k].name;
	return NULL;
}

/* The name of R's first header that a back end may take as the method
 * instead of :method (px_http_method_override()'s list), or NULL. */
static const char *
t2_method_override(const struct px_h2_req *r)
{
	size_t k;

	for (k = 0; k < r->nheaders; k++)
		if (px_http_is_method_override(r->headers[k].name, r->headers[k].namelen))
			return r->headers[k].name;
	return NULL;
}

/* The rule that allowed the stream, for its request line (the module
 * copies both while t2_decide() runs); "" without one: a note at all
 * marks the stream allowed, even if the module answers it later. */
static void
t2_note(struct px_conn *c, struct px_h2_verdict *v)
{
	static _Thread_local char at[300];

	at[0] = '\0';
	if (c->req.dec.rule != NULL)
		snprintf(at, sizeof(at), "%s:%d", c->req.dec.rule->file, c->req.dec.rule->line);
	v->note = c->req.dec.rule != NULL ? c->req.dec.rule->text : "";
	v->note_at = at;
	v->would = c->req.dec.would != CF_R_ALLOWED ? cf_reason_code(c->req.dec.would) : NULL;
}

/* Refuse R: STATUS with REASON's code (the module answers the stream),
 * and the stream's decision line with DETAIL. */
static void
t2_refuse(struct px_conn *c, struct px_h2_verdict *v, int status, enum cf_reason reason,
    const struct cf_rule *rule, const char *detail)
{
	v->action = PX_H2_REFUSE;
	v->status = status;
	v->reason = cf_reason_code(reason);
	px_record_decision(c, 0, reason, rule, detail, NULL);
	px_notice_refusal(c, reason, rule, detail);
}

/* Does R carry the session's placeholder of secret I in a header binding
 * INJ names (its value, or Basic's password)?  As carries_placeholder()
 * in decide.c. */
static int
t2_carries(const struct px_conn *c, size_t i, const struct cf_inject *inj,
    const struct px_h2_req *r)
{
	const char *ph = cf_session_placeholder(c->sess, i);
	size_t k, nl = strlen(inj->name), phlen = ph != NULL ? strlen(ph) : 0;

	for (k = 0; k < r->nheaders; k++)
		if (r->headers[k].namelen == nl && strncasecmp(r->headers[k].name, inj->name, nl) == 0 &&
		    cf_inject_carries(inj, r->headers[k].value, r->headers[k].valuelen, ph, phlen))
			return 1;
	return 0;
}

/* Put every secret of C's session bound to this host, port and path on
 * the stream as a header edit (conf/inject.h renders each; a query
 * binding never gets here: tunnel.c offers no h2 for such a host), when
 * the stream carries its placeholder there or the secret says inject_when
 * = always; to a host a secret is bound to (BOUND), the narrowed headers
 * first. */
static void
t2_inject(struct px_conn *c, const struct px_h2_req *r, struct px_h2_verdict *v, int bound)
{
	size_t i, n = cf_session_nsecrets(c->sess), plen = strlen(r->path), ne = 0;

	t2_nvals = 0;
	if (bound)
		for (ne = 0; ne < T2_NARROWED; ne++)
			t2_edits[ne] = t2_narrowed[ne];
	for (i = 0; i < n && t2_nvals < T2_EDITS; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);
		const struct cf_inject *inj = cf_secret_binding(sec, c->tm->host.name, c->tm->port,
		    r->path, plen);
		const char *value;
		size_t vlen = 0, k;
		int dup = 0;

		/* A minted secret's tunnel is never h2 (px_minthold_bound()):
		 * its own value is never sent.  Nor is a replace binding's. */
		if (inj == NULL || inj->kind == CF_INJECT_QUERY || inj->kind == CF_INJECT_REPLACE ||
		    cf_secret_kind(sec) != CF_SECRET_STATIC ||
		    (value = cf_secret_value(sec, &vlen)) == NULL)
			continue;
		if (!cf_secret_inject_always(sec) && !t2_carries(c, i, inj, r))
			continue;
		/* One value per header name, the first secret's, as the
		 * HTTP/1.1 path does (its later lines would replace it). */
		for (k = 0; k < ne; k++)
			dup |= t2_edits[k].value != NULL && strcasecmp(t2_edits[k].name, inj->name) == 0;
		if (dup || cf_inject_render(inj, value, vlen, t2_vals[t2_nvals], T2_VAL) < 0)
			continue;
		t2_edits[ne].name = inj->name;
		t2_edits[ne].value = t2_vals[t2_nvals];
		t2_nvals++;
		ne++;
		if (c->tm->secret[0] == '\0')
			snprintf(c->tm->secret, sizeof(c->tm->secret), "%s", cf_secret_name(sec));
		px_stats_secret(px_server_stats(c->srv), c->session, cf_secret_name(sec), PX_SECRET_INJECTED);
	}
	v->edits = t2_edits;
	v->nedits = ne;
	v->edit_set = c->tm->secret[0] ? c->tm->secret : NULL;
}

/* Is the method M (LEN bytes) TRACE or TRACK, in any case? */
static int
t2_is_trace(const char *m, size_t len)
{
	return len == 5 && (strncasecmp(m, "TRACE", 5) == 0 || strncasecmp(m, "TRACK", 5) == 0);
}

/* The TRACE or TRACK R asks for, by :method or a method-override header
 * (as trace_refused() in decide.c finds it), or NULL. */
static const char *
t2_trace(const struct px_h2_req *r)
{
	size_t k;

	if (t2_is_trace(r->method, strlen(r->method)))
		return r->method;
	for (k = 0; k < r->nheaders; k++)
		if (px_http_is_method_override(r->headers[k].name, r->headers[k].namelen) &&
		    t2_is_trace(r->headers[k].value, r->headers[k].valuelen))
			return r->headers[k].value;
	return NULL;
}

/* A stream is a new request: it starts from nothing of the last one but
 * the tunnel's upstream address, which its lines name. */
static void
t2_new_request(struct px_conn *c)
{
	char addr[sizeof(c->req.addr)];

	memcpy(addr, c->req.addr, sizeof(addr));
	memset(&c->req, 0, sizeof(c->req));
	memcpy(c->req.addr, addr, sizeof(addr));
}

/* Set C's current request (the audit's method, host, path without query,
 * placeholders cut) from R's or from a finished stream's fields. */
static void
t2_current(struct px_conn *c, const char *method, const char *path)
{
	size_t pl;

	c->req.mode = CF_MODE_TLS;
	c->req.host = c->tm->host;
	c->req.port = c->tm->port;
	snprintf(c->req.method, sizeof(c->req.method), "%s", method != NULL ? method : "");
	pl = path != NULL ? strcspn(path, "?") : 0;
	if (pl > sizeof(c->req.path) - 1)
		pl = sizeof(c->req.path) - 1;
	if (pl > 0)
		memcpy(c->req.path, path, pl);
	c->req.path[pl] = '\0';
	if (c->sess != NULL)
		px_conn_redact_path(c);
}

/*
 * One stream's request, judged as term_decide() judges an HTTP/1.1
 * request inside the tunnel, by the snapshot in force now.
 * RFC 9113 §8.3.1: :authority (or Host when there is none) names the
 * target; one naming another host or port is domain fronting, 421 (RFC
 * 9110 §15.5.20), on this stream only: the others go on.
 */
static void
t2_decide(void *arg, const struct px_h2_req *r, struct px_h2_verdict *v)
{
	struct px_conn *c = arg;
	struct cf_host ah;
	uint16_t aport = 0;
	const char *why = NULL, *over;
	long bad, bound;
	char d[CF_HOST_TEXT_MAX + 256];

	/* A new request: the current snapshot decides it (as accept.c
	 * does for each HTTP/1.1 request), so a reload that removes a secret
	 * stops its injection from the next stream on. */
	if (c->cfg != px_server_config(c->srv)) {
		cf_config_free(c->cfg);
		c->cfg = px_server_config_ref(c->srv);
	}
	c->generation = px_server_generation(c->srv);
	v->generation = c->generation;
	v->config = cf_config_hash(c->cfg);
	c->sess = cf_config_find_session(c->cfg, c->session);
	/* The close line's count, refused streams included, as accept.c
	 * counts every HTTP/1.1 request. */
	c->requests++;
	t2_new_request(c);
	c->tm->secret[0] = '\0';
	t2_current(c, r->method, r->path);
	if (c->sess == NULL) {
		t2_refuse(c, v, 403, CF_R_SESSION_REMOVED, NULL,
		    "this listener's session was removed from the config");
		return;
	}
	/* The values this snapshot binds here join what no response may
	 * carry back. */
	px_h2_set_scrub(c->tm->h2, px_term_scrub(c));
	if (r->method == NULL || r->path == NULL || r->path[0] != '/' || r->authority == NULL) {
		t2_refuse(c, v, 400, CF_R_BAD_REQUEST, NULL,
		    "an HTTP/2 request inside a terminated tunnel needs :method, :authority and "
		    "an origin-form :path");
		return;
	}
	if (cf_authority_parse(r->authority, strlen(r->authority), 0, &ah, &aport, &why) != 0 ||
	    !cf_host_equal(&ah, &c->tm->host) || (aport != 0 && aport != c->tm->port)) {
		snprintf(d, sizeof(d), "the :authority names %.*s, and this TLS tunnel goes to %s:%u "
		    "only", 64, why != NULL ? "something malformed" : r->authority, c->tm->host.name,
		    c->tm->port);
		t2_refuse(c, v, 421, CF_R_MISDIRECTED_REQUEST, NULL, d);
		return;
	}
	cf_decide(c->sess, CF_MODE_TLS, &c->req.host, c->req.port, r->path, strlen(r->path), r->method,
	    &c->req.dec);
	/* A grant for the tunnel's host and port speaks for each stream. */
	px_conn_grant(c);
	if (!c->req.dec.allow) {
		t2_refuse(c, v, 403, c->req.dec.reason, c->req.dec.rule, c->req.dec.detail);
		return;
	}
	if (c->req.dec.rule != NULL && c->req.dec.rule->path != NULL && (over = t2_path_override(r)) != NULL) {
		snprintf(d, sizeof(d), "the %.64s header can override the path, and allow_hosts = %s "
		    "(%s:%d) admits only paths under %s", over, c->req.dec.rule->text, c->req.dec.rule->file,
		    c->req.dec.rule->line, c->req.dec.rule->path);
		t2_refuse(c, v, 403, CF_R_PATH_NOT_ALLOWED, c->req.dec.rule, d);
		return;
	}
	if (c->req.dec.rule != NULL && c->req.dec.rule->methods != NULL && (over = t2_method_override(r)) != NULL) {
		snprintf(d, sizeof(d), "the %.64s header can override the method, and allow_hosts = %s "
		    "(%s:%d) admits only %s", over, c->req.dec.rule->text, c->req.dec.rule->file,
		    c->req.dec.rule->line, c->req.dec.rule->methods);
		t2_refuse(c, v, 403, CF_R_METHOD_NOT_ALLOWED, c->req.dec.rule, d);
		return;
	}
	bound = cf_session_bound_secret(c->sess, c->tm->host.name, c->tm->port);
	if (bound >= 0 && (over = t2_trace(r)) != NULL) {
		/* The upstream would echo the stream's headers, the value
		 * among them: as trace_refused() in decide.c. */
		snprintf(d, sizeof(d), "%.5s echoes the request back, with the value of secret %s put "
		    "on it: refused to %s:%u, which that secret is bound to", over,
		    cf_secret_name(cf_session_secret(c->sess, (size_t)bound)), c->tm->host.name,
		    c->tm->port);
		t2_refuse(c, v, 403, CF_R_METHOD_NOT_ALLOWED, c->req.dec.rule, d);
		return;
	}
	if ((bad = t2_misdirected(c, r)) >= 0) {
		const struct cf_secret *sec = cf_session_secret(c->sess, (size_t)bad);

		snprintf(d, sizeof(d), "the request carries the placeholder of secret %s, which may be "
		    "sent only where its inject lines say, not to %s:%u", cf_secret_name(sec),
		    c->tm->host.name, c->tm->port);
		px_stats_secret(px_server_stats(c->srv), c->session, cf_secret_name(sec), PX_SECRET_MISDIRECTED);
		t2_refuse(c, v, 403, CF_R_SECRET_MISDIRECTED, c->req.dec.rule, d);
		return;
	}
	if (px_leakscan_h2(c, r, c->tm->host.name, c->tm->port, d, sizeof(d))) {
		t2_refuse(c, v, 403, CF_R_SECRET_MISDIRECTED, c->req.dec.rule, d);
		return;
	}
	if (c->req.dec.rule != NULL && cf_rule_has_budget(c->req.dec.rule)) {
		/* Each stream counts against its rule's rps= (and is refused
		 * once its up= is spent); the bytes count in t2_feed(). */
		struct px_budget *b = px_budget_get(px_server_budgets(c->srv), c->session, c->req.dec.rule);
		enum px_budget_kind kind;
		unsigned retry;

		if (b == NULL || px_budget_admit_stream(b, px_budget_now_ms(), &kind, &retry) != 0) {
			snprintf(d, sizeof(d), "the %s budget of allow_hosts = %s (%s:%d) is spent in "
			    "session %s", b == NULL ? "(out of memory)" : px_budget_kind_name(kind),
			    c->req.dec.rule->text, c->req.dec.rule->file, c->req.dec.rule->line, c->session);
			t2_refuse(c, v, 429, CF_R_BUDGET_EXCEEDED, c->req.dec.rule, d);
			return;
		}
	}
	t2_inject(c, r, v, bound >= 0);
	v->action = PX_H2_FORWARD;
	v->leak = px_leakscan_h2_body(c, r, c->tm->host.name, c->tm->port, &v->leak_active);
	px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, NULL, NULL);
	t2_note(c, v);
}

/* A stream ended: its request line, as fwd_finish() writes one; for an
 * allowed stream it is its decision line too (px_record_decision() wrote
 * none), with the rule the verdict's note kept: the snapshot it came from
 * may be gone by now. */
static void
t2_done(void *arg, const struct px_h2_stream_info *info)
{
	struct px_conn *c = arg;
	struct px_reqline l = {
		.method = info->method, .path = c->req.path, .secret = info->edit_set,
		.proto = "h2", .status = info->status,
		.reason = info->refused ? info->reason : NULL,
		.bytes_up = info->bytes_up, .bytes_down = info->bytes_down,
		.decision = info->note != NULL ? "allow" : NULL,
		.rule = info->note != NULL && info->note[0] ? info->note : NULL,
		.rule_at = info->note_at,
		.would = info->note != NULL ? info->would : NULL,
		.generation = info->generation, .config = info->config,
	};

	t2_current(c, info->method, info->path);
	px_record_request_line(c, &l);
	if (info->reflected > 0)
		px_record_reflected(c, &l, info->reflected_name, info->reflected_where,
		    info->reflected);
	if (info->leak_hit)
		px_leakscan_h2_hit(c, info->leak, info->leak_needle, info->leak_enc);
}

void
px_h2tunnel_start(struct px_conn *c)
{
	static const struct px_h2_cbs cbs = {
		.send_client = t2_send_client, .send_upstream = t2_send_upstream,
		.decide = t2_decide, .done = t2_done,
	};

	c->tm->h2 = px_h2_new(&cbs, c);
	if (c->tm->h2 == NULL) {
		px_conn_free(c, "out of memory");
		return;
	}
	px_h2_set_scrub(c->tm->h2, px_term_scrub(c));
	px_conn_enter(c, &h2_phase);
	/* The write callbacks run once a side drained to half of RELAY_HIGH:
	 * what the relay held back (t2_send() said "full") goes then. */
	bufferevent_setwatermark(c->cli.bev, EV_WRITE, RELAY_HIGH / 2, 0);
	bufferevent_setwatermark(c->up.bev, EV_WRITE, RELAY_HIGH / 2, 0);
	bufferevent_enable(c->cli.bev, EV_READ | EV_WRITE);
	bufferevent_enable(c->up.bev, EV_READ | EV_WRITE);
	if (t2_after(c, px_h2_flush(c->tm->h2)) != 0)
		return;
	/* The upstream's SETTINGS may have come during the client's
	 * handshake, and the client's preface with its Finished. */
	if (evbuffer_get_length(bufferevent_get_input(c->up.bev)) > 0 && t2_feed(c, &c->up) != 0)
		return;
	if (evbuffer_get_length(bufferevent_get_input(c->cli.bev)) > 0)
		(void)t2_feed(c, &c->cli);
}
