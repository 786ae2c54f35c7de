/*
 * proxy/flow/decide.c: the decision and the lookup, the steps of the flow
 * between the request head (accept.c) and the relay: the rules decide
 * the request (cf_decide()), its name is resolved (a literal, a [hosts]
 * pin or DNS), every address is vetted, the upstream is connected, and the
 * connection goes to the tunnel (tunnel.c) or the forward path
 * (forward.c).  After a reload with revoke = yes, open tunnels are judged
 * here again.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/util.h>

#include "conf/config.h"
#include "conf/etchosts.h"
#include "conf/parent.h"
#include "conf/secret.h"
#include "proxy/policy/budget.h"
#include "proxy/policy/ask.h"
#include "proxy/flow/leakscan.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/conns.h"
#include "proxy/flow/connect.h"
#include "proxy/proto/dns.h"
#include "proxy/policy/grants.h"
#include "proxy/proto/http.h"
#include "proxy/core/log.h"
#include "proxy/core/prio.h"
#include "proxy/flow/replace.h"
#include "proxy/flow/revoke.h"
#include "proxy/flow/bridgereq.h"
#include "proxy/flow/awssign.h"
#include "proxy/proto/socks.h"
#include "proxy/admin/stats.h"
#include "proxy/core/decider.h"
#include "proxy/proto/decider.h"
#include "proxy/proto/mintmsg.h"
#include "proxy/flow/mint.h"
#include "proxy/flow/minthold.h"

#include <openssl/crypto.h>
#include <openssl/ssl.h>

/* Looking up and connecting: connect_timeout (and the resolver's own)
 * bound it, and this timer is the backstop. */
static void
lookup_timeout(struct px_conn *c)
{
	px_conn_free(c, "timeout");
}

/*
 * The client's read stays on while its request is looked up and
 * connected: a client sends nothing meanwhile (it waits for the 200 or
 * the answer), and turning the read off and on again is two epoll_ctl(2)
 * a tunnel.  Bytes that come anyway turn it off and wait in the input,
 * where the tunnel or the forward path takes them from, as bytes that
 * came with the head; the kernel's flow control holds the rest back.
 */
static void
lookup_cli_read(struct bufferevent *bev, void *arg)
{
	(void)arg;
	bufferevent_disable(bev, EV_READ);
}

/* An EOF is the next phase's to see: libevent has turned the read off,
 * and the socket says EOF again when the tunnel or the forward path
 * turns it on, as when it was off all along.  A failure closes. */
static void
lookup_cli_event(struct bufferevent *bev, short what, void *arg)
{
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR))
		return;
	px_conn_event_close(bev, what, arg);
}

static const struct px_phase lookup_phase = {
	.name = "lookup", .cli_read = lookup_cli_read, .cli_event = lookup_cli_event,
	.timeout = lookup_timeout,
};

/* ---- runtime grants and mode = ask --------------------------------------- */

/* Is C's refused request one to hold (mode = ask)? */
static int
askable(const struct px_conn *c)
{
	return c->sess->ask && !c->req.dec.allow && px_allowlist_refusal(c->req.dec.reason) &&
	    px_server_ask(c->srv) != NULL;
}

static void start_lookup(struct px_conn *c);
static void term_resume(struct px_conn *c);
static void term_go(struct px_conn *c, struct px_http_request *req, size_t head_len, long bound);

/* The answer to the question C waits on (ask.h). */
static void
ask_done(void *arg, unsigned id, enum px_ask_answer answer)
{
	struct px_conn *c = arg;
	char d[sizeof(c->req.dec.detail)];

	c->req.askw = NULL;
	c->req.ask_id = id;
	c->req.ask_answer = (int)answer;
	switch (answer) {
	case PX_ASK_GONE:
		px_conn_free(c, "client gone while asked");
		return;
	case PX_ASK_TIMEOUT:
		/* C->req.dec keeps the allowlist's refusal: the line to add is
		 * still the way to allow it (notice.c). */
		snprintf(d, sizeof(d), "no admin answered question %u within ask_timeout (%u ms); "
		    "the allowlist refused it: %.300s", id, px_conn_settings(c)->ask_timeout_ms,
		    c->req.dec.detail);
		px_conn_refuse(c, 403, CF_R_ASK_TIMEOUT, NULL, d);
		return;
	case PX_ASK_DENY_ONCE:
	case PX_ASK_DENY_SESSION:
		snprintf(d, sizeof(d), "an admin denied it (question %u: %s)", id,
		    px_ask_answer_word(answer));
		px_conn_admin_decides(c, 0, NULL, d);
		px_conn_refuse(c, 403, CF_R_DENIED_BY_ADMIN, NULL, d);
		return;
	default:
		snprintf(d, sizeof(d), "allowed by an admin (question %u: %s)", id,
		    px_ask_answer_word(answer));
		px_conn_admin_decides(c, 1, c->req.dec.rule, d);
		/* Looked up, vetted and connected as any allowed request. */
		start_lookup(c);
		return;
	}
}

/* The backstop: the question's timer answers first. */
static void
ask_backstop(struct px_conn *c)
{
	px_ask_leave(c->req.askw);
	c->req.askw = NULL;
	c->req.ask_answer = PX_ASK_TIMEOUT;
	px_conn_refuse(c, 403, CF_R_ASK_TIMEOUT, NULL, "no admin answered within ask_timeout");
}

/* Held: nothing is read from the client (as in the lookup phase); the
 * question watches its socket for it going away. */
static const struct px_phase ask_phase = {
	.name = "ask", .cli_event = px_conn_event_close, .timeout = ask_backstop,
};

/*
 * The N bytes of target T as a question shows them: each placeholder of
 * C's session, wherever it is, becomes "[placeholder]", and nothing after
 * it is cut (the admin sees all the request asks for).  Into *LEN; NULL
 * when out of memory.
 */
static char *
ask_path(const struct px_conn *c, const char *t, size_t n, size_t *len)
{
	static const char mark[] = "[placeholder]";
	size_t k, nph = cf_session_nsecrets(c->sess), i, o, pass;
	char *out = NULL;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0, o = 0; i < n;) {
			const char *ph = NULL;
			size_t pl = 0;

			for (k = 0; k < nph; k++) {
				ph = cf_session_placeholder(c->sess, k);
				pl = ph != NULL ? strlen(ph) : 0;
				if (pl > 0 && pl <= n - i && memcmp(t + i, ph, pl) == 0)
					break;
			}
			if (k < nph) {
				if (out != NULL)
					memcpy(out + o, mark, sizeof(mark) - 1);
				o += sizeof(mark) - 1;
				i += pl;
			} else {
				if (out != NULL)
					out[o] = t[i];
				o++;
				i++;
			}
		}
		if (out == NULL && (out = malloc(o + 1)) == NULL)
			return NULL;
	}
	out[o] = '\0';
	*len = o;
	return out;
}

/*
 * Hold C's request, which the allowlist refused in a session in ask mode,
 * on the question for its session, host, port, method and (plain HTTP)
 * target, a new one published if none is open.  REQ is its head (NULL for
 * SOCKS5), HEAD_LEN bytes at the start of the client's input, drained
 * once the question has what it keys on.  Out of memory, it is refused as
 * enforce mode would.
 */
static void
hold(struct px_conn *c, const struct px_http_request *req, size_t head_len)
{
	const struct cf_proxy_settings *p = px_conn_settings(c);
	struct px_ask *a = px_server_ask(c->srv);
	struct px_ask_q q;
	struct px_ask_req r;
	char h[CF_HOST_TEXT_MAX], *path = NULL;
	size_t path_len = 0;

	px_conn_host_text(c, h, sizeof(h));
	memset(&r, 0, sizeof(r));
	r.session = c->session;
	r.host = h;
	r.port = c->req.port;
	/* The method and target as sent, in full: c->req.method and c->req.path
	 * are cut to fit. */
	r.method = c->req.method[0] ? c->req.method : "CONNECT";
	if (req != NULL) {
		r.method = req->method;
		r.method_len = req->method_len;
	}
	if (req != NULL && c->req.mode == CF_MODE_HTTP) {
		r.target = req->path;
		r.target_len = req->path_len;
		path = ask_path(c, req->path, req->path_len, &path_len);
		r.path = path;
		r.path_len = path_len;
	}
	r.peer = c->peer;
	r.pid = c->is_unix ? c->pid : -1;
	r.uid = c->is_unix ? c->uid : -1;
	bufferevent_disable(c->cli.bev, EV_READ);
	px_conn_enter(c, &ask_phase);
	px_conn_arm_timer(c, p->ask_timeout_ms + 5000);
	px_ask_set_timeout(a, p->ask_timeout_ms);
	c->req.askw = NULL;
	if (r.target == NULL || path != NULL)
		c->req.askw = px_ask_hold(a, &r, bufferevent_getfd(c->cli.bev), ask_done, c, &c->req.ask_id);
	free(path);
	if (req != NULL) {
		evbuffer_drain(bufferevent_get_input(c->cli.bev), head_len);
		c->req.head_judged = 0;
	}
	if (c->req.askw == NULL) {
		c->req.ask_id = 0;
		px_conn_refuse(c, 403, c->req.dec.reason, c->req.dec.rule, c->req.dec.detail);
		return;
	}
	if (px_ask_find(a, c->req.ask_id, &q) == 0)
		log_info("session %s: %s %s:%u%s%s%s held on question %u (%s)", c->session,
		    q.method, h, c->req.port, q.path[0] ? " path " : "", q.path,
		    q.path_cut > 0 ? " (cut)" : "", c->req.ask_id, cf_reason_code(c->req.dec.reason));
}

/* ---- decider = ------------------------------------------------------------- */

/*
 * Does C's request go to its session's decider?  What the allowlist
 * refused by host, port, path or method does (never a deny rule, a
 * runtime grant's deny or anything else); with decider_ask = all so does
 * what it allowed, unless a runtime grant allowed it.
 */
static int
decidable(const struct px_conn *c)
{
	const struct cf_decider *d = c->sess->decider;

	if (d == NULL || px_server_deciders(c->srv) == NULL)
		return 0;
	if (c->req.dec.allow)
		return d->all && !c->req.granted;
	return px_allowlist_refusal(c->req.dec.reason);
}

/*
 * The decider's answer R for C (REASON: its reason, or how it failed),
 * from a question or the cache.  An allow of what the allowlist refused
 * becomes an allow with no rule, as an admin's answer in mode = ask: only
 * the host's own rule that refused another port, path or method may let
 * its address be private; a name no rule lists is vetted against every
 * never-reachable range.  Anything but an allow refuses.  C may be freed
 * on return.
 */
static void
decider_apply(struct px_conn *c, enum px_decider_result r, const char *reason, int cached)
{
	const struct cf_decider *d = c->sess->decider;
	struct cf_decision *dec = &c->req.dec;
	static const enum cf_reason why[] = {
		[PX_DECIDER_DENY] = CF_R_DECIDER_DENIED, [PX_DECIDER_TIMEOUT] = CF_R_DECIDER_TIMEOUT,
		[PX_DECIDER_BAD] = CF_R_DECIDER_BAD_ANSWER, [PX_DECIDER_DOWN] = CF_R_DECIDER_DOWN,
	};
	char detail[sizeof(dec->detail)];

	c->req.decider = (int)r + 1;
	if (r == PX_DECIDER_ALLOW) {
		if (!dec->allow) {
			dec->allow = 1;
			dec->reason = CF_R_ALLOWED;
			dec->would = CF_R_ALLOWED;
			dec->would_rule = dec->rule;
			dec->rule = NULL;
			snprintf(dec->detail, sizeof(dec->detail), "allowed by decider %s%s%s%s", d->text,
			    cached ? " (kept answer)" : "", reason[0] ? ": " : "", reason);
		}
		if (c->term)
			term_resume(c);
		else
			start_lookup(c);
		return;
	}
	if (r == PX_DECIDER_DENY)
		snprintf(detail, sizeof(detail), "decider %s denied it%s: %s", d->text,
		    cached ? " (kept answer)" : "", reason[0] ? reason : "(no reason given)");
	else
		snprintf(detail, sizeof(detail), "%s; the session's decider decides this request, "
		    "and without its answer it is refused", reason);
	px_conn_refuse(c, 403, why[r], NULL, detail);
}

static void
decider_done(void *arg, enum px_decider_result r, const char *reason, double seconds)
{
	struct px_conn *c = arg;

	c->req.dq = NULL;
	px_stats_decider(px_server_stats(c->srv), (unsigned)r, 0, seconds);
	decider_apply(c, r, reason, 0);
}

/* The backstop: the question's own timer answers first. */
static void
decider_backstop(struct px_conn *c)
{
	px_decider_cancel(c->req.dq);
	c->req.dq = NULL;
	decider_apply(c, PX_DECIDER_TIMEOUT, "no answer within decider_timeout", 0);
}

/* Held: nothing is read from the client, as in the lookup phase. */
static const struct px_phase decider_phase = {
	.name = "decider", .cli_event = px_conn_event_close, .timeout = decider_backstop,
};

/* Held inside a terminated tunnel: nothing is read from the client, the
 * head waits in its input. */
static const struct px_phase term_decider_phase = {
	.name = "decider", .cli_event = px_conn_event_close, .up_read = px_conn_held_up_read,
	.up_event = px_conn_held_up_event, .timeout = decider_backstop,
};

/* The ClientHello's server_name of C's terminated tunnel, or NULL. */
static const char *
term_sni(struct px_conn *c)
{
	SSL *ssl = bufferevent_openssl_get_ssl(c->cli.bev);

	return ssl != NULL ? SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) : NULL;
}

/*
 * Ask C's session's decider about C's request, made ready as if allowed
 * (as hold() does), and go on when it answers: an answer kept from an
 * earlier question for the same session, method, host, port and path
 * decides at once.  REQ is its head (NULL for SOCKS5), HEAD_LEN bytes at
 * the start of the client's input, drained here.  Inside a terminated
 * tunnel REQ is NULL: the head stays in the input, read again on an allow
 * (term_resume()).
 */
static void
decider_hold(struct px_conn *c, const struct px_http_request *req, size_t head_len)
{
	const struct cf_decider *d = c->sess->decider;
	struct px_deciders *ds = px_server_deciders(c->srv);
	const struct cf_rule *rule = c->req.dec.rule;
	struct px_decider_question q;
	char h[CF_HOST_TEXT_MAX], key[CF_HOST_TEXT_MAX + 400], reason[PX_DECIDER_REASON_MAX + 1];
	const char *path = c->req.mode == CF_MODE_HTTP || c->req.mode == CF_MODE_TLS ? c->req.path : NULL;
	int allow;

	if (req != NULL) {
		evbuffer_drain(bufferevent_get_input(c->cli.bev), head_len);
		c->req.head_judged = 0;
	}
	px_conn_host_text(c, h, sizeof(h));
	memset(&q, 0, sizeof(q));
	q.session = c->session;
	q.uid = c->is_unix ? (long)c->uid : -1;
	q.pid = c->is_unix ? (long)c->pid : -1;
	q.kind = c->term ? "tls" : c->socks ? "socks5" : c->req.mode == CF_MODE_HTTP ? "http" : "connect";
	q.method = c->req.method[0] ? c->req.method : "CONNECT";
	q.host = h;
	q.port = c->req.port;
	q.path = path;
	if (c->term)
		q.sni = term_sni(c);
	q.allowed = c->req.dec.allow;
	q.reason = cf_reason_code(c->req.dec.allow ? CF_R_ALLOWED : c->req.dec.reason);
	if (rule != NULL) {
		q.rule_text = rule->text;
		q.rule_file = rule->file;
		q.rule_line = rule->line;
	}
	snprintf(key, sizeof(key), "%s\n%s\n%s\n%u\n%s", c->session, q.method, h, c->req.port,
	    path != NULL ? path : "");
	if (px_decider_cached(ds, d, key, &allow, reason, sizeof(reason))) {
		px_stats_decider(px_server_stats(c->srv), allow ? PX_DECIDER_ALLOW : PX_DECIDER_DENY, 1, 0);
		decider_apply(c, allow ? PX_DECIDER_ALLOW : PX_DECIDER_DENY, reason, 1);
		return;
	}
	bufferevent_disable(c->cli.bev, EV_READ);
	px_conn_enter(c, c->term ? &term_decider_phase : &decider_phase);
	px_conn_arm_timer(c, d->timeout_ms + 5000);
	c->req.dq = px_decider_ask(ds, d, &q, key, decider_done, c);
	if (c->req.dq == NULL)
		px_conn_free(c, "out of memory");
}


static void
connected_cb(int fd, int err, size_t index, void *arg)
{
	struct px_conn *c = arg;
	char detail[256];

	c->req.connector = NULL;
	if (fd < 0) {
		/* RFC 1928 §6: the reply code says how the connect failed. */
		if (c->socks)
			c->req.socks_rep = err == ECONNREFUSED ? PX_SOCKS_REP_REFUSED :
			    err == ENETUNREACH ? PX_SOCKS_REP_NET_UNREACH :
			    err == EHOSTUNREACH || err == ETIMEDOUT ? PX_SOCKS_REP_HOST_UNREACH :
			    PX_SOCKS_REP_FAILURE;
		snprintf(detail, sizeof(detail), "could not connect to %s: %s",
		    c->req.lk != NULL && c->req.lk->naddrs == 1 ? c->req.addr : "any of its addresses", strerror(err));
		if (err == ETIMEDOUT)
			px_conn_refuse(c, 504, CF_R_TIMEOUT, c->req.dec.rule, detail);
		else
			px_conn_refuse(c, 502, CF_R_CONNECT_FAILURE, c->req.dec.rule, detail);
		return;
	}
	px_conn_sa_text((const struct sockaddr *)&c->req.lk->addrs[index], c->req.addr, sizeof(c->req.addr));
	memset(&c->up_peer, 0, sizeof(c->up_peer));
	memcpy(&c->up_peer, &c->req.lk->addrs[index],
	    c->req.lk->addrlens[index] < sizeof(c->up_peer) ? c->req.lk->addrlens[index] : sizeof(c->up_peer));
	free(c->req.lk);
	c->req.lk = NULL;
	c->up.bev = bufferevent_socket_new(px_server_base(c->srv), fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->up.bev == NULL) {
		close(fd);
		px_conn_refuse(c, 502, CF_R_CONNECT_FAILURE, c->req.dec.rule, "out of memory");
		return;
	}
	bufferevent_priority_set(c->up.bev, PX_PRI_BULK);
	px_conn_touch(c);
	px_conn_arm_timer(c, px_conn_settings(c)->idle_timeout_ms);
	if (c->req.mode == CF_MODE_CONNECT) {
		/*
		 * A reload with revoke = yes that landed while this tunnel was
		 * being looked up or connected found nothing to revoke: judge
		 * it now, before its first byte, as the revoke pass would have.
		 */
		if (px_revoke_late(c))
			return;
		px_tunnel_open(c);
		return;
	}
	px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, NULL, NULL);
	px_forward_start(c);
}

/*
 * Vet every address, not only the first 16 that px_connect_start() dials;
 * refuse the host if any one is refused.  proxy/proto/dns.c hands over every
 * answer or fails the name, so no address escapes this check.  Returns
 * 0, or a negative errno after refusing C.
 */
static int
vet_and_connect(struct px_conn *c)
{
	size_t i, bad;
	struct cf_decision ad;
	int e;

	for (i = 0; i < c->req.lk->naddrs; i++) {
		struct sockaddr *sa = (struct sockaddr *)&c->req.lk->addrs[i];
		if (sa->sa_family == AF_INET)
			((struct sockaddr_in *)(void *)sa)->sin_port = htons(c->req.port);
		else
			((struct sockaddr_in6 *)(void *)sa)->sin6_port = htons(c->req.port);
	}
	if (!cf_decide_addrs(c->cfg, c->sess, &c->req.dec, c->req.lk->addrs, c->req.lk->naddrs, &ad, &bad)) {
		px_conn_sa_text((const struct sockaddr *)&c->req.lk->addrs[bad], c->req.addr, sizeof(c->req.addr));
		px_conn_refuse(c, 403, ad.reason, ad.rule, ad.detail);
		return -EACCES;
	}
	if (c->req.lk->naddrs == 1)
		px_conn_sa_text((const struct sockaddr *)&c->req.lk->addrs[0], c->req.addr, sizeof(c->req.addr));
	if (c->req.parent != NULL) {
		px_parent_connect(c);
		return 0;
	}
	/* Connect only to what was vetted: these very sockaddrs. */
	c->req.connector = px_connect_start(px_server_base(c->srv), c->req.lk->addrs, c->req.lk->addrlens, c->req.lk->naddrs,
	    px_conn_settings(c)->connect_timeout_ms, connected_cb, c);
	if (c->req.connector == NULL) {
		e = errno;
		px_conn_refuse(c, 502, CF_R_CONNECT_FAILURE, c->req.dec.rule, strerror(e));
		return -e;
	}
	return 0;
}

static void
dns_cb(int status, const struct px_dns_result *res, const char *errmsg, void *arg)
{
	struct px_conn *c = arg;
	char detail[800], h[CF_HOST_TEXT_MAX];
	size_t i;

	c->req.dnsq = NULL;
	if (status != 0) {
		int listed;
		px_conn_host_text(c, h, sizeof(h));
		/* The proxy asks DNS only; a name the admin knows from
		 * /etc/hosts is the one case where that surprises. */
		listed = cf_etchosts_file_lists("/etc/hosts", c->req.host.name);
		snprintf(detail, sizeof(detail), "%s could not be resolved: %s%s%s%s", h,
		    errmsg ? errmsg : px_dns_strerror(status),
		    listed ? "; /etc/hosts lists it, but /etc/hosts is not read: pin it in [hosts] (" : "",
		    listed ? h : "", listed ? " = ADDRESS)" : "");
		px_conn_refuse(c, status == PX_DNS_TIMEOUT ? 504 : 502, CF_R_DNS_FAILURE, c->req.dec.rule, detail);
		return;
	}
	c->req.lk->naddrs = res->naddrs < PX_DNS_MAX_ADDRS ? res->naddrs : PX_DNS_MAX_ADDRS;
	for (i = 0; i < c->req.lk->naddrs; i++) {
		c->req.lk->addrs[i] = res->addrs[i];
		c->req.lk->addrlens[i] = res->addrlens[i];
	}
	vet_and_connect(c);
}

/* ---- secrets: where a placeholder may go, what is injected ------------- */

/*
 * The secret of C's session whose placeholder REQ carries (its target or
 * any header value) to HOST:PORT, where that secret is not bound (issue
 * 15: a placeholder never leaves for another host), or -1.
 * Every secret is looked for, not only the first found: a request may carry
 * one bound placeholder and one that is not.
 */
static long
misdirected(const struct px_conn *c, const struct px_http_request *req, const char *host,
    uint16_t port)
{
	size_t i, k, n = cf_session_nsecrets(c->sess);

	for (i = 0; i < n; i++) {
		int found = cf_session_has_placeholder(c->sess, i, req->target, req->target_len);

		for (k = 0; !found && k < req->nheaders; k++)
			found = cf_session_has_placeholder(c->sess, i, req->headers[k].value,
			    req->headers[k].value_len);
		if (found && cf_secret_binding(cf_session_secret(c->sess, i), host, port, req->path,
		    req->path_len) == NULL)
			return (long)i;
	}
	return -1;
}

/* Refuse C's request: it carries the placeholder of secret I to a place
 * that secret is not bound to.  Counted per secret in /metrics. */
static void
refuse_misdirected(struct px_conn *c, long i)
{
	const struct cf_secret *sec = cf_session_secret(c->sess, (size_t)i);
	char h[CF_HOST_TEXT_MAX], d[512];

	px_conn_host_text(c, h, sizeof(h));
	snprintf(d, sizeof(d), "the request carries the placeholder of secret %s, which may be sent only "
	    "where its inject lines say, not to %s:%u%s", cf_secret_name(sec), h, c->req.port,
	    c->req.mode == CF_MODE_HTTP ? " over plain HTTP" : "");
	px_stats_secret(px_server_stats(c->srv), c->session, cf_secret_name(sec), PX_SECRET_MISDIRECTED);
	px_conn_refuse(c, 403, CF_R_SECRET_MISDIRECTED, c->req.dec.rule, d);
}

/* Is header F named NAME (case-insensitively)? */
static int
header_is(const struct px_http_header *f, const char *name)
{
	size_t nl = strlen(name);

	return f->name_len == nl && strncasecmp(f->name, name, nl) == 0;
}

/* Drop from REQ's table every header named NAME (the binding's value
 * replaces them).  Only the table changes, not the bytes it points to. */
static void
drop_header(struct px_http_request *req, const char *name)
{
	size_t i, kept = 0;

	for (i = 0; i < req->nheaders; i++)
		if (!header_is(&req->headers[i], name))
			req->headers[kept++] = req->headers[i];
	req->nheaders = kept;
}

/*
 * Does REQ carry the session's placeholder of secret I where binding INJ
 * puts the value (a header of its name, Basic's password, its query
 * parameter)?  Only such a request is given the value, unless the secret
 * says inject_when = always.
 */
static int
carries_placeholder(const struct px_conn *c, size_t i, const struct cf_inject *inj,
    const struct px_http_request *req)
{
	const char *ph = cf_session_placeholder(c->sess, i);
	size_t k, phlen = ph != NULL ? strlen(ph) : 0;

	if (inj->kind == CF_INJECT_QUERY)
		return cf_inject_carries(inj, req->path, req->path_len, ph, phlen);
	for (k = 0; k < req->nheaders; k++)
		if (header_is(&req->headers[k], inj->name) &&
		    cf_inject_carries(inj, req->headers[k].value, req->headers[k].value_len, ph, phlen))
			return 1;
	return 0;
}

/*
 * The request headers dropped on every request to a host a secret is
 * bound to, so that the answer reflects the value, if it does, whole and
 * readable to the response scan: no compressed or ranged answer, no
 * compressed WebSocket frames.  Accept-Encoding comes back as "identity".
 */
static const char *const narrowed[] = {
	"Accept-Encoding", "Sec-WebSocket-Extensions", "Range", "If-Range", NULL,
};

/*
 * The head to send upstream for REQ inside C's terminated tunnel, with the
 * session's secrets for this host, port and path put on it (conf/inject.h)
 * where REQ carries their placeholder, or always under inject_when =
 * always.  To a host a secret is bound to (BOUND), the narrowed headers
 * are dropped and Accept-Encoding is "identity".  The rendered values are
 * wiped once copied.  A minted secret's token (proxy/flow/minthold.h)
 * takes the place of a value.  Returns 0, -ENOMEM, -EAGAIN when a minted
 * token is not ready (C->req.mint_sec says whose), or -ENOSPC when the
 * reflection scan can take no more tokens.
 */
static int
build_injected_head(struct px_conn *c, struct px_http_request *req, int bound)
{
	static _Thread_local char extra[2 * (CF_SECRET_MAX * 3 + 256) + 64];
	static _Thread_local char val[CF_SECRET_MAX * 3 + 256];
	static const char identity[] = "Accept-Encoding: identity\r\n";
	static _Thread_local char minted[PX_MINT_TOKEN_MAX + 1];
	char query[CF_SECRET_MAX * 3 + 256];
	size_t elen = 0, qlen = 0, i, n = cf_session_nsecrets(c->sess);
	int rc;

	c->tm->secret[0] = '\0';
	c->tm->mint_secret[0] = '\0';
	if (bound) {
		for (i = 0; narrowed[i] != NULL; i++)
			drop_header(req, narrowed[i]);
		memcpy(extra, identity, sizeof(identity) - 1);
		elen = sizeof(identity) - 1;
	}
	for (i = 0; i < n; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);
		const struct cf_inject *inj = cf_secret_binding(sec, c->tm->host.name, c->tm->port,
		    req->path, req->path_len);
		const char *value;
		size_t vlen = 0;
		long r;

		/* An aws-sigv4 secret re-signs instead (px_awssign_request()). */
		if (inj == NULL || cf_secret_aws(sec) != NULL)
			continue;
		if (inj->kind == CF_INJECT_REPLACE)
			continue; /* px_replace_build_head() */
		if (px_mint_kind(sec)) {
			/* A minted token, not the secret's own value. */
			if (!cf_secret_inject_always(sec) && !carries_placeholder(c, i, inj, req))
				continue;
			if ((r = px_minthold_value(c, i, minted, sizeof(minted))) < 0) {
				c->req.mint_sec = i;
				return -EAGAIN;
			}
			value = minted;
			vlen = (size_t)r;
			/* A token the reflection scan cannot look for is not
			 * sent: the tunnel ends, and a new one scans anew. */
			if (px_term_scrub_minted(c, sec, inj, value, vlen) != 0) {
				OPENSSL_cleanse(minted, sizeof(minted));
				return -ENOSPC;
			}
		} else if ((value = cf_secret_value(sec, &vlen)) == NULL) {
			continue;
		}
		if (!cf_secret_inject_always(sec) && !carries_placeholder(c, i, inj, req))
			continue;
		if (inj->kind == CF_INJECT_QUERY) {
			if (qlen > 0)
				continue;
			r = cf_inject_render(inj, value, vlen, query, sizeof(query));
			if (r < 0)
				continue;
			qlen = (size_t)r;
		} else {
			size_t nl = strlen(inj->name), w;

			r = cf_inject_render(inj, value, vlen, val, sizeof(val));
			if (r < 0)
				continue;
			/* "NAME: VALUE\r\n", copied as it is: only the bytes
			 * written are wiped (the buffers are some 12 KiB each,
			 * and wiping them whole was an eighth of a request). */
			w = nl + 2 + (size_t)r + 2;
			if (w < sizeof(extra) - elen) {
				memcpy(extra + elen, inj->name, nl);
				memcpy(extra + elen + nl, ": ", 2);
				memcpy(extra + elen + nl + 2, val, (size_t)r);
				memcpy(extra + elen + nl + 2 + (size_t)r, "\r\n", 3);
			}
			OPENSSL_cleanse(val, (size_t)r + 1);
			if (w >= sizeof(extra) - elen)
				continue;
			drop_header(req, inj->name);
			elen += w;
		}
		if (c->tm->secret[0] == '\0')
			snprintf(c->tm->secret, sizeof(c->tm->secret), "%s", cf_secret_name(sec));
		px_stats_secret(px_server_stats(c->srv), c->session, cf_secret_name(sec), PX_SECRET_INJECTED);
	}
	rc = px_replace_build_head(c, req, qlen ? query : NULL, qlen, elen ? extra : NULL, elen,
	    c->fwd->pending);
	OPENSSL_cleanse(extra, elen);
	OPENSSL_cleanse(minted, sizeof(minted));
	if (qlen > 0)
		OPENSSL_cleanse(query, qlen + 1);
	return rc;
}

/*
 * A path rule vouches for the request line's path only, and some back ends
 * take the path from a header instead (X-Original-URL on IIS, Symfony...).
 * Refused, not stripped: a stripped header silently sends a request other
 * than the one the client made, while a 403 tells the agent, and the audit
 * log, what was refused and why.  Returns 1 after refusing C, else 0.
 */
static int
path_overridden(struct px_conn *c, const struct px_http_request *req)
{
	size_t nl = 0;
	const char *name;
	char d[sizeof(c->req.dec.detail)];

	if (c->req.dec.rule == NULL || c->req.dec.rule->path == NULL ||
	    (name = px_http_path_override(req, &nl)) == NULL)
		return 0;
	snprintf(d, sizeof(d),
	    "the %.*s header can override the path, and allow_hosts = %s (%s:%d) admits only paths under %s",
	    (int)(nl < 64 ? nl : 64), name, c->req.dec.rule->text, c->req.dec.rule->file,
	    c->req.dec.rule->line, c->req.dec.rule->path);
	px_conn_refuse(c, 403, CF_R_PATH_NOT_ALLOWED, c->req.dec.rule, d);
	return 1;
}

/*
 * Under a rule narrowed by method (methods=), a request that carries a
 * header some back ends take as the method instead of the request line's
 * (px_http_method_override()) is refused, as path_overridden() refuses a
 * path override: the rule could not vouch for the method the back end
 * runs.  Returns 1 after refusing C, else 0.
 */
static int
method_overridden(struct px_conn *c, const struct px_http_request *req)
{
	size_t nl = 0;
	const char *name;
	char d[sizeof(c->req.dec.detail)];

	if (c->req.dec.rule == NULL || c->req.dec.rule->methods == NULL ||
	    (name = px_http_method_override(req, &nl)) == NULL)
		return 0;
	snprintf(d, sizeof(d),
	    "the %.*s header can override the method, and allow_hosts = %s (%s:%d) admits only %s",
	    (int)(nl < 64 ? nl : 64), name, c->req.dec.rule->text, c->req.dec.rule->file,
	    c->req.dec.rule->line, c->req.dec.rule->methods);
	px_conn_refuse(c, 403, CF_R_METHOD_NOT_ALLOWED, c->req.dec.rule, d);
	return 1;
}

/*
 * Take REQ's framing for the forward path, plain or terminated alike.
 * Chunks that came with the head are checked before anything goes
 * upstream (RFC 9112 §7.1), so a bad one is a 400 and upstream sees
 * nothing; later ones are checked as they stream.  Returns 0, or -EPROTO
 * after refusing C.
 */
static int
take_framing(struct px_conn *c, const struct px_http_request *req, size_t head_len)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	struct px_http_limits lim;
	struct px_chunked probe;
	struct evbuffer_ptr pos;
	struct evbuffer_iovec v[8];
	int nv, k, done = 0;
	const char *cwhy = NULL;

	c->fwd->req.keep_alive = req->keep_alive;
	c->fwd->req_minor = req->minor;
	c->fwd->req_is_head = req->is_head;
	c->fwd->req_upgrade = req->upgrade_websocket;
	c->fwd->req.chunked = req->chunked;
	c->fwd->req.left = req->content_length > 0 ? req->content_length : 0;
	c->fwd->req.done = !req->chunked && c->fwd->req.left == 0;
	if (!req->chunked)
		return 0;
	lim.max_headers = px_conn_settings(c)->max_headers;
	lim.max_header_bytes = px_conn_settings(c)->max_header_bytes;
	px_chunked_init(&c->fwd->req.ch, &lim);
	probe = c->fwd->req.ch;
	if (evbuffer_ptr_set(in, &pos, head_len, EVBUFFER_PTR_SET) != 0)
		return 0;
	nv = evbuffer_peek(in, -1, &pos, v, 8);
	for (k = 0; k < nv && k < 8 && !done; k++) {
		if (px_chunked_scan(&probe, v[k].iov_base, v[k].iov_len, &done, &cwhy) < 0) {
			char d[200];
			snprintf(d, sizeof(d), "malformed chunked body: %s", cwhy ? cwhy : "bad framing");
			if (!c->term)
				c->req.host.kind = 0;
			px_conn_refuse(c, 400, CF_R_BAD_REQUEST, NULL, d);
			return -EPROTO;
		}
	}
	return 0;
}

/*
 * The budgets of rule R, for C's new tunnel or plain-HTTP
 * request (CONN: a connection to the host, held in C->budget) or a request
 * inside C's terminated tunnel (held in C->tm->req_budget): admitted, or
 * refused with 429 budget_exceeded, saying which budget and when it frees
 * up (Retry-After for the rps and up windows).  Returns 1 after refusing C
 * (or closing it, out of memory), else 0.
 */
static int
budget_refused(struct px_conn *c, const struct cf_rule *r, int conn)
{
	struct px_budget **slot = conn ? &c->budget : &c->tm->req_budget, *b;
	enum px_budget_kind kind;
	unsigned retry = 0;
	char d[sizeof(c->req.dec.detail)], lim[128], when[64];

	/* A keep-alive connection's last request, or a tunnel's last
	 * request, gives its hold back: this one is judged anew. */
	px_budget_release(*slot, conn);
	*slot = NULL;
	if (r == NULL || !cf_rule_has_budget(r))
		return 0;
	b = px_budget_get(px_server_budgets(c->srv), c->session, r);
	if (b == NULL) {
		px_conn_free(c, "out of memory");
		return 1;
	}
	if (px_budget_admit(b, px_budget_now_ms(), conn, &kind, &retry) == 0) {
		*slot = b;
		return 0;
	}
	cf_rule_budget_text(r, lim, sizeof(lim));
	if (retry != 0)
		snprintf(when, sizeof(when), "it frees up in %us", retry);
	else
		snprintf(when, sizeof(when), "it frees up when one of them closes");
	if (kind == PX_BUDGET_UP)
		snprintf(d, sizeof(d), "the up budget of allow_hosts = %s (%s:%d) is spent in session %s: "
		    "%llu of %llu bytes sent up in this window; %s", r->text, r->file, r->line, c->session,
		    (unsigned long long)b->up_used, (unsigned long long)b->up_max, when);
	else if (kind == PX_BUDGET_RPS)
		snprintf(d, sizeof(d), "the rps budget of allow_hosts = %s (%s:%d) is spent in session %s: "
		    "more than %u requests a second; %s", r->text, r->file, r->line, c->session, b->rps, when);
	else
		snprintf(d, sizeof(d), "the conns budget of allow_hosts = %s (%s:%d) is spent in session %s: "
		    "%u connections to it are open; %s", r->text, r->file, r->line, c->session, b->open, when);
	c->req.retry_after = retry;
	px_conn_refuse(c, 429, CF_R_BUDGET_EXCEEDED, r, d);
	return 1;
}

/* Is the method M (LEN bytes) TRACE or TRACK, in any case?  Both echo the
 * request they got, headers and all, back to the client. */
static int
is_trace(const char *m, size_t len)
{
	return len == 5 && (strncasecmp(m, "TRACE", 5) == 0 || strncasecmp(m, "TRACK", 5) == 0);
}

/*
 * To a host a secret of C's session is bound to (secret BOUND), a TRACE or
 * TRACK, by its request line or a method-override header
 * (px_http_is_method_override()), is refused: the upstream would echo the
 * request with the value put on it.  Returns 1 after refusing C, else 0.
 */
static int
trace_refused(struct px_conn *c, const struct px_http_request *req, long bound)
{
	const char *m = req->method;
	size_t k, ml = req->method_len;
	char d[sizeof(c->req.dec.detail)];

	for (k = 0; !is_trace(m, ml) && k < req->nheaders; k++)
		if (px_http_is_method_override(req->headers[k].name, req->headers[k].name_len) &&
		    is_trace(req->headers[k].value, req->headers[k].value_len)) {
			m = req->headers[k].value;
			ml = req->headers[k].value_len;
		}
	if (!is_trace(m, ml))
		return 0;
	snprintf(d, sizeof(d), "%.5s echoes the request back, with the value of secret %s put on it: "
	    "refused to %s:%u, which that secret is bound to", m,
	    cf_secret_name(cf_session_secret(c->sess, (size_t)bound)), c->tm->host.name, c->tm->port);
	px_conn_refuse(c, 403, CF_R_METHOD_NOT_ALLOWED, c->req.dec.rule, d);
	return 1;
}

/*
 * A request read inside a terminated tunnel, judged on its own by the
 * snapshot in force now (CF_MODE_TLS).  A Host naming another host is
 * domain fronting: 421 (RFC 9110 §15.5.20).  A failed upstream handshake
 * makes every request a 502.  What the session's decider decides waits
 * for its answer (decider_hold(), then term_resume()).
 */
static void
term_decide(struct px_conn *c, struct px_http_request *req, size_t head_len)
{
	size_t pl;
	long bad, bound;

	c->req.mode = CF_MODE_TLS;
	c->req.host = c->tm->host;
	c->req.port = c->tm->port;
	c->tm->secret[0] = '\0';
	c->req.resp_status = 0;
	c->req.up0 = c->cli.bytes;
	c->req.down0 = c->up.bytes;
	if (req->form == PX_TARGET_ORIGIN) {
		/* The audit line keeps the path without its query.  The path
		 * lies in the head's buffer, not NUL-terminated: look no
		 * further than its length. */
		const char *q = memchr(req->path, '?', req->path_len);

		pl = q != NULL ? (size_t)(q - req->path) : req->path_len;
		if (pl > sizeof(c->req.path) - 1)
			pl = sizeof(c->req.path) - 1;
		memcpy(c->req.path, req->path, pl);
		c->req.path[pl] = '\0';
		px_conn_redact_path(c);
	}
	if (req->form != PX_TARGET_ORIGIN || req->is_connect) {
		px_conn_refuse(c, 400, CF_R_BAD_REQUEST, NULL,
		    "inside a TLS tunnel postern terminates, requests are in origin form (GET /path)");
		return;
	}
	if (req->has_host_header && (!cf_host_equal(&req->host_hdr, &c->tm->host) ||
	    (req->host_hdr_port != 0 && req->host_hdr_port != c->tm->port))) {
		char d[CF_HOST_TEXT_MAX + 200];
		char hh[CF_HOST_TEXT_MAX];

		cf_host_format(&req->host_hdr, hh, sizeof(hh));
		snprintf(d, sizeof(d), "the Host header names %s, and this TLS tunnel goes to %s:%u "
		    "only", hh, c->tm->host.name, c->tm->port);
		px_conn_refuse(c, 421, CF_R_MISDIRECTED_REQUEST, NULL, d);
		return;
	}
	cf_decide(c->sess, CF_MODE_TLS, &c->req.host, c->req.port, req->path, req->path_len, c->req.method,
	    &c->req.dec);
	/* A grant for the tunnel's host and port speaks for its requests;
	 * they are never held (mode = ask asks the CONNECT). */
	px_conn_grant(c);
	/* What the allowlist refused by host, port, path or method goes to
	 * the session's decider (decidable()), made ready as if allowed. */
	if (!c->req.dec.allow && !decidable(c)) {
		px_conn_refuse(c, 403, c->req.dec.reason, c->req.dec.rule, c->req.dec.detail);
		return;
	}
	if (c->req.dec.allow && (path_overridden(c, req) || method_overridden(c, req)))
		return;
	bound = cf_session_bound_secret(c->sess, c->tm->host.name, c->tm->port);
	if (bound >= 0 && trace_refused(c, req, bound))
		return;
	if ((bad = misdirected(c, req, c->tm->host.name, c->tm->port)) >= 0) {
		refuse_misdirected(c, bad);
		return;
	}
	if (px_minthold_repo_refused(c, req->path, req->path_len) ||
	    px_leakscan_request(c, req, c->tm->host.name, c->tm->port))
		return;
	/* A request inside the tunnel counts against its rule's rps and up
	 * budgets; the tunnel itself already holds a connection. */
	if (budget_refused(c, c->req.dec.rule, 0))
		return;
	if (decidable(c)) {
		decider_hold(c, NULL, 0);
		return;
	}
	term_go(c, req, head_len, bound);
}

/*
 * The decider allowed C's request held inside its terminated tunnel: its
 * head, still at the start of the client's input (C->req.head_judged
 * bytes), is parsed again and goes on as an allowed request.
 */
static void
term_resume(struct px_conn *c)
{
	const struct cf_proxy_settings *p = px_conn_settings(c);
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	size_t head_len = c->req.head_judged, used = 0;
	struct px_http_request req;
	struct px_http_limits lim;
	const char *why = NULL;
	unsigned char *data;
	int status = 400;

	lim.max_headers = p->max_headers;
	lim.max_header_bytes = p->max_header_bytes;
	data = head_len > 0 && c->hdrs != NULL ? evbuffer_pullup(in, (ev_ssize_t)head_len) : NULL;
	if (data == NULL) {
		px_conn_free(c, "out of memory");
		return;
	}
	px_http_request_init(&req, c->hdrs, c->nhdrs_cap);
	if (px_http_parse_request((const char *)data, head_len, &lim, &req, &used, &status, &why) !=
	    PX_HTTP_OK || used != head_len) {
		px_conn_free(c, "the held request head changed");
		return;
	}
	term_go(c, &req, head_len,
	    cf_session_bound_secret(c->sess, c->tm->host.name, c->tm->port));
}

/*
 * C's allowed request REQ inside its terminated tunnel (HEAD_LEN bytes of
 * head; BOUND as term_decide() found it) goes upstream, with the
 * session's secrets put on it where their bindings say.
 */
static void
term_go(struct px_conn *c, struct px_http_request *req, size_t head_len, long bound)
{
	int rc = 0;

	if (c->tm->fail[0] != '\0') {
		/* The upstream failed its handshake (term_fail says how). */
		px_conn_refuse(c, 502, CF_R_UPSTREAM_TLS_FAILED, c->req.dec.rule, c->tm->fail);
		return;
	}
	if (c->up.bev == NULL || c->up.eof) {
		px_conn_refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->req.dec.rule,
		    px_tunnel_closed_detail(c, "the upstream closed the tunnel's connection"));
		return;
	}
	if (px_awssign_request(c, req, head_len, term_resume) != 0)
		return;
	if (px_forward_begin(c) != 0 || (rc = build_injected_head(c, req, bound >= 0)) != 0) {
		if (rc == -EAGAIN) {
			/* A minted token is not ready: wait, and go on anew. */
			px_minthold(c, c->req.mint_sec, term_resume);
			return;
		}
		if (rc == -ENOSPC) {
			px_conn_free(c, "the tunnel's reflection scan holds too many minted tokens");
			return;
		}
		px_conn_free(c, "out of memory");
		return;
	}
	px_awssign_note(c);
	if (take_framing(c, req, head_len) < 0 || px_replace_begin(c, req) != 0)
		return;
	evbuffer_drain(bufferevent_get_input(c->cli.bev), head_len);
	c->req.head_judged = 0;
	px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, NULL, NULL);
	px_forward_start(c);
}

/*
 * The decision: who may go where, by this connection's snapshot.
 */
void
px_decide(struct px_conn *c, struct px_http_request *req, size_t head_len)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);

	c->req.head_judged = head_len;
	if (c->sess == NULL) {
		px_conn_refuse(c, 403, CF_R_SESSION_REMOVED, NULL,
		    "this listener's session was removed from the config");
		return;
	}
	/* Inside a terminated tunnel every request is the upstream's: the
	 * session request is answered on the session's own socket only. */
	if (c->term) {
		term_decide(c, req, head_len);
		return;
	}
	if (px_bridgereq_is(req)) {
		px_bridgereq_answer(c);
		return;
	}
	if (px_namereq_is(req)) {
		px_namereq_answer(c, req);
		return;
	}
	if (!req->is_connect && req->form != PX_TARGET_ABSOLUTE) {
		px_conn_refuse(c, 400, CF_R_BAD_REQUEST, NULL,
		    "this is postern, an HTTP proxy, not a web server: send requests in absolute form "
		    "(GET http://host/path) or CONNECT host:port, e.g. by setting HTTP_PROXY and HTTPS_PROXY");
		return;
	}

	c->req.mode = req->is_connect ? CF_MODE_CONNECT : CF_MODE_HTTP;
	c->req.host = req->host;
	c->req.port = req->port;
	if (c->req.mode == CF_MODE_HTTP) {
		size_t pl = req->path_len < sizeof(c->req.path) - 1 ? req->path_len : sizeof(c->req.path) - 1;
		memcpy(c->req.path, req->path, pl);
		c->req.path[pl] = '\0';
	}
	if (c->req.mode == CF_MODE_HTTP)
		px_conn_redact_path(c);
	/* A CONNECT the session terminates TLS for is judged as the tunnel
	 * of requests it is: a path rule admits it, and judges each request
	 * inside (term_decide()). */
	cf_decide(c->sess, c->req.mode == CF_MODE_CONNECT && px_tunnel_terminates(c) ? CF_MODE_TLS : c->req.mode,
	    &c->req.host, c->req.port, c->req.mode == CF_MODE_HTTP ? req->path : NULL,
	    c->req.mode == CF_MODE_HTTP ? req->path_len : 0, c->req.mode == CF_MODE_HTTP ? c->req.method : NULL,
	    &c->req.dec);
	px_conn_grant(c);
	/* mode = ask: the request is made ready as if allowed (its head
	 * consumed, its upstream head built, every other check made) and
	 * held at the point where it would be looked up. */
	if (!c->req.dec.allow && !askable(c) && !decidable(c)) {
		px_conn_refuse(c, 403, c->req.dec.reason, c->req.dec.rule, c->req.dec.detail);
		return;
	}
	/* Plain HTTP carries no injection (a secret is put only on requests
	 * inside TLS), and no placeholder leaves for a host its secret is not
	 * bound to. */
	if (c->req.mode == CF_MODE_HTTP) {
		char h[CF_HOST_TEXT_MAX];
		long bad;

		px_conn_host_text(c, h, sizeof(h));
		bad = misdirected(c, req, h, c->req.port);

		if (bad >= 0) {
			refuse_misdirected(c, bad);
			return;
		}
		if (px_leakscan_request(c, req, h, c->req.port))
			return;
	}
	/* Nor in the name it asks for: an encoded secret in a DNS label. */
	if (px_leakscan_host(c, c->req.host.name, c->req.port, 1))
		return;
	if (c->req.mode == CF_MODE_HTTP && c->req.dec.allow && (path_overridden(c, req) ||
	    method_overridden(c, req)))
		return;
	if (budget_refused(c, c->req.dec.rule, 1))
		return;

	if (c->req.mode == CF_MODE_HTTP) {
		if (px_forward_begin(c) != 0 || px_http_build_upstream_head(req, c->fwd->pending) != 0) {
			px_conn_free(c, "out of memory");
			return;
		}
		if (take_framing(c, req, head_len) < 0)
			return;
	}
	/* The head is consumed (a held one by hold(), once its question has
	 * it); any bytes after it are the body, a pipelined request, or
	 * (CONNECT) the client's first flight. */
	if (decidable(c)) {
		decider_hold(c, req, head_len);
		return;
	}
	if (!c->req.dec.allow) {
		hold(c, req, head_len);
		return;
	}
	evbuffer_drain(in, head_len);
	c->req.head_judged = 0;
	start_lookup(c);
}

/*
 * C's request is allowed by name and port: look its host up (a literal, a
 * [hosts] pin or DNS), vet every address and connect (vet_and_connect()).
 * C may be freed or closing on return.
 */
static void
start_lookup(struct px_conn *c)
{
	const struct cf_proxy_settings *p = px_conn_settings(c);

	px_conn_enter(c, &lookup_phase);
	px_conn_arm_timer(c, p->connect_timeout_ms + 30000);
	c->req.parent = cf_session_parent(c->sess, &c->req.host);
	if (!c->is_unix && !c->nodelay) {
		int one = 1;

		/* As on the upstream side (connect.c): a relay writes what it
		 * has as it comes, and with Nagle a second small write (a
		 * streamed answer's next record, an SSE event) would wait for
		 * the client's delayed ACK, 40 ms on Linux.  The listener
		 * normally gave it (listen.c's tcp_nodelay()); when it could
		 * not, it is set now, for the first allowed request: a
		 * refusal is one write. */
		(void)setsockopt(bufferevent_getfd(c->cli.bev), IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
		c->nodelay = 1;
	}

	/* A pooled upstream takes the request at once, the client's read
	 * left on (px_forward_start() says why). */
	if (c->req.mode == CF_MODE_HTTP && px_forward_reuse(c))
		return;
	free(c->req.lk);
	/* Not zeroed: 64 addresses are 8 KB, and every path below writes
	 * the addresses it counts in naddrs before anything reads them. */
	c->req.lk = malloc(sizeof(*c->req.lk));
	if (c->req.lk != NULL)
		c->req.lk->naddrs = 0;
	if (c->req.lk == NULL) {
		px_conn_free(c, "out of memory");
		return;
	}
	if (c->req.mode == CF_MODE_CONNECT) {
		/* A tunnel parses no more heads: give the header table back. */
		free(c->hdrs);
		c->hdrs = NULL;
		c->nhdrs_cap = 0;
	}
	if (c->req.host.kind != CF_HOST_NAME) {
		struct sockaddr_storage *ss = &c->req.lk->addrs[0];
		memset(ss, 0, sizeof(*ss));
		if (c->req.host.kind == CF_HOST_IPV4) {
			struct sockaddr_in *sin = (struct sockaddr_in *)ss;
			sin->sin_family = AF_INET;
			sin->sin_addr = c->req.host.addr.v4;
			c->req.lk->addrlens[0] = sizeof(*sin);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
			sin6->sin6_family = AF_INET6;
			sin6->sin6_addr = c->req.host.addr.v6;
			c->req.lk->addrlens[0] = sizeof(*sin6);
		}
		c->req.lk->naddrs = 1;
		vet_and_connect(c);
		return;
	}
	{
		/* A name pinned in [hosts] takes its addresses from there,
		 * vetted below exactly like a DNS answer. */
		const struct cf_pin *pin = cf_config_pin(c->cfg, c->req.host.name);
		if (pin != NULL) {
			size_t i;
			_Static_assert(CF_PIN_MAX_ADDRS <= PX_DNS_MAX_ADDRS, "a pin fits a lookup");
			for (i = 0; i < pin->naddrs && i < CF_PIN_MAX_ADDRS; i++) {
				c->req.lk->addrs[i] = pin->addrs[i];
				c->req.lk->addrlens[i] = pin->addrs[i].ss_family == AF_INET ?
				    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
			}
			c->req.lk->naddrs = i;
			vet_and_connect(c);
			return;
		}
	}
	c->req.dnsq = px_dns_resolve(px_server_dns(c->srv), c->req.host.name, dns_cb, c);
	if (c->req.dnsq == NULL)
		px_conn_refuse(c, 502, CF_R_DNS_FAILURE, c->req.dec.rule, "could not start a DNS lookup");
}

/*
 * A SOCKS5 CONNECT (RFC 1928 §4) is an HTTP CONNECT in another framing:
 * the same decision (a terminated host judged as its tunnel), then the
 * same lookup, vetting and connect; px_tunnel_open() answers it in SOCKS5.
 */
void
px_decide_socks(struct px_conn *c)
{
	if (c->sess == NULL) {
		px_conn_refuse(c, 403, CF_R_SESSION_REMOVED, NULL,
		    "this listener's session was removed from the config");
		return;
	}
	c->req.mode = CF_MODE_CONNECT;
	c->req.path[0] = '\0';
	cf_decide(c->sess, px_tunnel_terminates(c) ? CF_MODE_TLS : CF_MODE_CONNECT, &c->req.host, c->req.port,
	    NULL, 0, NULL, &c->req.dec);
	px_conn_grant(c);
	if (!c->req.dec.allow && askable(c) && !decidable(c)) {
		hold(c, NULL, 0);
		return;
	}
	if (!c->req.dec.allow && !decidable(c)) {
		px_conn_refuse(c, 403, c->req.dec.reason, c->req.dec.rule, c->req.dec.detail);
		return;
	}
	if (c->req.dec.allow && budget_refused(c, c->req.dec.rule, 1))
		return;
	if (decidable(c)) {
		decider_hold(c, NULL, 0);
		return;
	}
	start_lookup(c);
}
