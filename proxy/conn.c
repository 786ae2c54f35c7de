/*
 * proxy/conn.c: one client connection, from its first byte to its close:
 * the request head, the decision, the lookup, the connection upstream, and
 * then either a CONNECT tunnel (with the SNI check) or the plain-HTTP
 * forward path with keep-alive and per-host upstream reuse.
 *
 * The connection owns everything it starts (bufferevents, timer, DNS query,
 * connector, SNI inspector, idle upstreams) and cancels all of it in
 * conn_free(), so no callback can fire into freed memory.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "conf/config.h"
#include "conf/etchosts.h"
#include "proxy/audit.h"
#include "proxy/connect.h"
#include "proxy/dns.h"
#include "proxy/http.h"
#include "proxy/log.h"
#include "proxy/loopcall.h"
#include "proxy/prio.h"
#include "proxy/server.h"
#include "proxy/sni.h"
#include "proxy/tally.h"
#include "proxy/splice.h"
#include "proxy/stats.h"

/* Per-direction buffer bound: reading from one side stops while the other
 * side's output holds this much (libevent's le-proxy back-pressure). */
#define RELAY_HIGH (256 * 1024)
#define SNI_MAX_BYTES (64 * 1024)
#define POOL_MAX 4
/* Seconds of no connection at all before freed heap is given back. */
#define IDLE_TRIM_S 2
/* A connection refused over its share at accept, before its request head
 * was read, keeps reading (and discarding) for this long after its 503 is
 * out, so that its request bytes arriving late do not make the kernel
 * reset the connection and lose the answer.  At most REFUSING_MAX linger
 * at a time; beyond that a refusal closes as soon as its answer is
 * written. */
#define LINGER_MS 1000
#define REFUSING_MAX 256

enum conn_state {
	CS_HEAD = 1,    /* reading a request head */
	CS_LOOKUP,      /* resolving and connecting */
	CS_SNI,         /* tunnel open, holding the client's first flight */
	CS_TUNNEL,      /* relaying bytes both ways */
	CS_FWD,         /* plain HTTP: request body and response in flight */
	CS_CLOSING,     /* flushing the last bytes to the client */
};

enum resp_state {
	RS_HEAD = 1,
	RS_BODY,
	RS_DONE,
};

/* What a lookup produced, kept only until the connection is made: an idle
 * tunnel should cost as little memory as possible. */
struct lookup {
	struct sockaddr_storage addrs[PX_DNS_MAX_ADDRS];
	socklen_t addrlens[PX_DNS_MAX_ADDRS];
	size_t naddrs;
};

/* An upstream peer's address and port: 28 bytes, not a sockaddr_storage,
 * since every tunnel keeps one for revoke = yes. */
union peer_sa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/*
 * An idle upstream, with what vetted it: the snapshot (generation), and the
 * allowing rule whose "private" flag or address decided the address check.
 */
struct pooled {
	char key[CF_HOST_TEXT_MAX + 8];
	char addr[INET6_ADDRSTRLEN + 8];
	union peer_sa peer;
	unsigned long generation;
	const struct cf_rule *rule;
	struct bufferevent *bev;
};

/*
 * One direction of a connection (relayd's se_in/se_out): its bufferevent
 * (NULL once the splice relay owns the socket), whether it has sent EOF,
 * whether its write half is to be shut once its output is flushed (the
 * other side sent EOF), and the bytes read from it and passed on.
 */
struct conn_side {
	struct bufferevent *bev;
	int eof;
	int shut_pending;
	uint64_t bytes;
};

/* One HTTP message of the forward path, request or response. */
struct conn_msg {
	/*
	 * Where the parse of a head still incomplete stopped (proxy/http.h):
	 * the next read resumes there.  Parsed again from its start on every
	 * read, a head sent one byte at a time would cost CPU in the square
	 * of its length.  Zero: no head in progress.
	 */
	struct px_http_resume rs;
	int keep_alive;
	int chunked;
	struct px_chunked ch;
	int64_t left;              /* Content-Length bytes still to pass */
	int close_delimited;       /* response: the body ends at EOF */
	int done;                  /* request: the body is all passed */
};

struct px_conn {
	TAILQ_ENTRY(px_conn) entry;
	struct px_server *srv;
	struct conn_side cli;      /* the client's half */
	struct conn_side up;       /* the upstream's half, once connected */
	enum conn_state state;
	struct event *timer;
	int head_timer_armed;
	struct timeval last_activity;
	struct timeval started;

	/* Who. */
	char session[72];
	char peer[96];
	long pid, uid;
	int is_unix;
	/* What it holds of its session's and its uid's share (share.c),
	 * whether it counts against [proxy] max_connections (a refusal over a
	 * share does not: it must not fill the proxy for everyone else), and
	 * whether it lingers after its refusal (1) or has shut down its
	 * writing side and now only drains (2). */
	struct px_share *share_sess, *share_uid;
	int counted;
	int linger;

	/* The snapshot that decided the current request. */
	struct cf_config *cfg;
	const struct cf_session *sess;
	unsigned long generation;

	/* The current request. */
	enum cf_mode mode;
	char method[24];
	struct cf_host host;
	uint16_t port;
	char path[256];
	char upkey[CF_HOST_TEXT_MAX + 8];
	char addr[INET6_ADDRSTRLEN + 8];
	union peer_sa up_peer;     /* the upstream's address, once connected */
	struct cf_decision dec;
	/* Its decision line is written (record_decision()), or waits for the
	 * SNI check (allow_pending); a failure after it is told in the close
	 * line instead: close_why, close_detail. */
	int decided, allow_pending;
	const char *close_why;
	char close_detail[256];
	struct px_dns_query *dnsq;
	struct px_connector *connector;
	struct lookup *lk;         /* addresses, only while connecting */
	struct evbuffer *pending;  /* the upstream head, built at parse time */
	unsigned requests;

	/* Forward path state: the request and the response, one struct each. */
	struct conn_msg req, resp;
	int req_is_head, req_upgrade, req_minor;
	int resp_dechunk;          /* decode a chunked answer for HTTP/1.0 */
	enum resp_state rstate;
	int cli_keep_alive;
	struct px_http_header *hdrs;
	size_t nhdrs_cap;
	struct pooled *pool;       /* POOL_MAX idle upstreams, made on first use */

	/* Tunnel state. */
	struct px_splice *spl;     /* the zero-copy relay, once switched */
	int splice_pending;        /* waiting for buffered bytes to go out */
	struct px_sni *sni;
	size_t sni_fed;
	int connect_answered;      /* the 200 is written */
	struct timeval sni_deadline; /* the first flight is complete by then */
};

static void conn_free(struct px_conn *c, const char *why);
static void cli_read_cb(struct bufferevent *bev, void *arg);
static void cli_write_cb(struct bufferevent *bev, void *arg);
static void cli_event_cb(struct bufferevent *bev, short what, void *arg);
static void up_read_cb(struct bufferevent *bev, void *arg);
static void up_write_cb(struct bufferevent *bev, void *arg);
static void up_event_cb(struct bufferevent *bev, short what, void *arg);
static void handle_head(struct px_conn *c);

/* ---- small helpers ------------------------------------------------------ */

/* The address of SA as text (no port), into BUF of SIZE bytes. */
static char *
sa_text(const struct sockaddr *sa, char *buf, size_t size)
{
	buf[0] = '\0';
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf, (socklen_t)size);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf, (socklen_t)size);
	return buf;
}

static void
touch(struct px_conn *c)
{
	event_base_gettimeofday_cached(c->srv->base, &c->last_activity);
}

static long
ms_since(const struct timeval *then, const struct timeval *now)
{
	return (now->tv_sec - then->tv_sec) * 1000L + (now->tv_usec - then->tv_usec) / 1000L;
}

static void
arm_timer(struct px_conn *c, unsigned ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_add(c->timer, &tv);
}

static const struct cf_proxy_settings *
settings(const struct px_conn *c)
{
	return cf_config_proxy(c->srv->cfg);
}

static void
host_text(const struct px_conn *c, char *buf, size_t size)
{
	cf_host_format(&c->host, buf, size);
}

/* ---- the audit record --------------------------------------------------- */

/*
 * One audit record, by name (smokescreen's one decision line): every line
 * the proxy writes for a connection is built here, by record(), from the
 * connection and these fields, so that a decision, a revoke and a close
 * name the same things the same way.  NULL and zero fields are left out.
 */
struct rec {
	const char *event;         /* "decision", "revoke" or "close" */
	const char *decision;      /* decision: "allow" or "deny" */
	int has_reason;
	enum cf_reason reason;     /* decision, revoke */
	const struct cf_rule *rule;
	const char *sni;           /* the ClientHello's server_name */
	const char *detail;
	const char *why;           /* close: why it closed, NULL for a plain end */
	int current;               /* judged by the server's current snapshot */
};

static void
record(struct px_conn *c, const struct rec *r)
{
	struct px_server *srv = c->srv;
	struct px_json j;
	char h[CF_HOST_TEXT_MAX];
	int is_close = strcmp(r->event, "close") == 0;

	px_json_begin(&j, r->event);
	px_json_str(&j, "session", c->session);
	px_json_str(&j, "peer", c->peer);
	if (c->is_unix) {
		px_json_num(&j, "pid", c->pid);
		px_json_num(&j, "uid", c->uid);
	}
	px_json_str(&j, "method", c->method[0] ? c->method : NULL);
	if (c->host.kind != 0) {
		host_text(c, h, sizeof(h));
		px_json_str(&j, "host", h);
		px_json_num(&j, "port", c->port);
	}
	if (c->mode == CF_MODE_HTTP && c->path[0])
		px_json_str(&j, "path", c->path);
	px_json_str(&j, "address", c->addr[0] ? c->addr : NULL);
	if (r->decision != NULL)
		px_json_str(&j, "decision", r->decision);
	if (r->has_reason)
		px_json_str(&j, "reason", cf_reason_code(r->reason));
	if (r->rule != NULL) {
		char at[300];
		snprintf(at, sizeof(at), "%s:%d", r->rule->file, r->rule->line);
		px_json_str(&j, "rule", r->rule->text);
		px_json_str(&j, "rule_at", at);
	}
	if (r->sni != NULL && r->sni[0])
		px_json_str(&j, "sni", r->sni);
	if (is_close) {
		struct timeval now;

		event_base_gettimeofday_cached(srv->base, &now);
		px_json_num(&j, "requests", c->requests);
		px_json_num(&j, "bytes_up", (int64_t)c->cli.bytes);
		px_json_num(&j, "bytes_down", (int64_t)c->up.bytes);
		px_json_num(&j, "duration_ms", ms_since(&c->started, &now));
		if (r->why != NULL)
			px_json_str(&j, "why", r->why);
	}
	if (r->detail != NULL && r->detail[0])
		px_json_str(&j, "detail", r->detail);
	if (r->current) {
		px_json_num(&j, "generation", (int64_t)srv->generation);
		px_json_str(&j, "config", cf_config_hash(srv->cfg));
	} else {
		px_json_num(&j, "generation", (int64_t)c->generation);
		px_json_str(&j, "config", cf_config_hash(c->cfg ? c->cfg : srv->cfg));
	}
	px_json_emit(&j, srv->audit);
}

/*
 * The one decision line of the current request, and its count in
 * /metrics: written once, when the request is allowed (its upstream is
 * connected, and for a checked tunnel its ClientHello passed) or refused.
 * A failure after the allow (the upstream times out or answers badly) is
 * no second decision: it is the close line's "why".
 */
static void
record_decision(struct px_conn *c, int allow, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail, const char *sni)
{
	struct rec r = { .event = "decision", .decision = allow ? "allow" : "deny", .has_reason = 1,
		.reason = reason, .rule = rule, .detail = detail, .sni = sni };

	if (c->decided)
		return;
	c->decided = 1;
	c->allow_pending = 0;
	px_stats_decision(c->srv->metrics, c->session, reason, rule);
	record(c, &r);
}

/* A tunnel held for the SNI check is allowed once its first flight
 * passes; closed or revoked before that, it was allowed as it stood. */
static void
record_pending_allow(struct px_conn *c)
{
	if (c->allow_pending)
		record_decision(c, 1, CF_R_ALLOWED, c->dec.rule, NULL, NULL);
}

/* ---- responses and closing ---------------------------------------------- */

/* A lingering refusal: throw away whatever the client still sends. */
static void
linger_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	(void)arg;
	evbuffer_drain(in, evbuffer_get_length(in));
}

/* The last bytes are out: close, or for a lingering refusal shut down
 * writing and wait (at most LINGER_MS) for the client to close. */
static void
closing_flushed(struct px_conn *c)
{
	if (c->linger == 0) {
		conn_free(c, NULL);
		return;
	}
	if (c->linger == 1) {
		c->linger = 2;
		shutdown(bufferevent_getfd(c->cli.bev), SHUT_WR);
	}
}

static void
close_after_write(struct px_conn *c)
{
	c->state = CS_CLOSING;
	if (c->up.bev != NULL) {
		bufferevent_free(c->up.bev);
		c->up.bev = NULL;
	}
	bufferevent_setwatermark(c->cli.bev, EV_WRITE, 0, 0);
	if (c->linger) {
		bufferevent_setcb(c->cli.bev, linger_read_cb, cli_write_cb, cli_event_cb, c);
		bufferevent_enable(c->cli.bev, EV_READ);
		arm_timer(c, LINGER_MS);
	} else {
		bufferevent_disable(c->cli.bev, EV_READ);
		bufferevent_setcb(c->cli.bev, NULL, cli_write_cb, cli_event_cb, c);
	}
	if (evbuffer_get_length(bufferevent_get_output(c->cli.bev)) == 0)
		closing_flushed(c);
	else
		bufferevent_enable(c->cli.bev, EV_WRITE);
}

static const char *
status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

/*
 * Refuse the current request: STATUS with a text/plain body for a person
 * and an agent, X-Postern-Reason for machines, an audit line, and close.
 * AUDITED: the caller has written the audit line and the human log line
 * itself (the SNI check, whose line carries the server_name), so neither is
 * written twice.
 */
static void
refuse_ex(struct px_conn *c, int status, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail, int audited)
{
	struct evbuffer *out = bufferevent_get_output(c->cli.bev);
	char body[2048], sugg[512], h[CF_HOST_TEXT_MAX], what[600];
	int n;

	if (!audited) {
		if (c->decided) {
			/* Allowed, then failed upstream: the close line says so. */
			c->close_why = cf_reason_code(reason);
			snprintf(c->close_detail, sizeof(c->close_detail), "%s", detail ? detail : "");
		} else {
			record_decision(c, 0, reason, rule, detail, NULL);
		}
	}
	sugg[0] = '\0';
	if (c->sess != NULL && c->host.kind != 0 &&
	    (reason == CF_R_HOST_NOT_ALLOWED || reason == CF_R_PORT_NOT_ALLOWED ||
	    reason == CF_R_PATH_NOT_ALLOWED || reason == CF_R_PRIVATE_ADDRESS ||
	    reason == CF_R_DENIED_BY_RULE)) {
		struct cf_decision d;
		memset(&d, 0, sizeof(d));
		d.reason = reason;
		d.rule = rule;
		cf_suggest(c->sess, c->mode, &c->host, c->port, c->path, strlen(c->path), &d,
		    sugg, sizeof(sugg));
	}
	if (c->host.kind != 0) {
		host_text(c, h, sizeof(h));
		snprintf(what, sizeof(what), "%s %s:%u%s%s", c->method[0] ? c->method : "request", h,
		    c->port, c->path[0] ? " path " : "", c->path);
	} else {
		snprintf(what, sizeof(what), "%s", c->method[0] ? c->method : "request");
	}
	n = snprintf(body, sizeof(body),
	    "postern refused this request: %s\n"
	    "%s\n"
	    "%s\n"
	    "%s%s%s"
	    "(session %s, config %s, generation %lu)\n",
	    cf_reason_code(reason), what, detail ? detail : "",
	    sugg[0] ? "To allow it, an admin can " : "", sugg, sugg[0] ? "\n" : "",
	    c->session, cf_config_path(c->srv->cfg), c->srv->generation);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(body))
		n = sizeof(body) - 1;
	if (c->srv->human && !audited) {
		/* For a person at a terminal: the pattern to pass to --allow
		 * (cf_suggest() words it "pass --allow 'PATTERN'" in run),
		 * told once per host:port, reason and pattern (a client that
		 * retries would fill the terminal); the summary at the end
		 * counts the repeats (tally.h). */
		static const char lead[] = "pass --allow '";
		char patbuf[CF_HOST_TEXT_MAX + 600];
		const char *pat = NULL;
		char where[CF_HOST_TEXT_MAX + 8];

		if (strncmp(sugg, lead, sizeof(lead) - 1) == 0) {
			const char *p = sugg + sizeof(lead) - 1;
			size_t k = strcspn(p, "'");

			if (p[k] == '\'' && k < sizeof(patbuf)) {
				memcpy(patbuf, p, k);
				patbuf[k] = '\0';
				pat = patbuf;
			}
		}
		if (c->host.kind != 0)
			snprintf(where, sizeof(where), "%s:%u", h, c->port);
		else
			snprintf(where, sizeof(where), "%s", what);
		if (px_tally_add(c->srv->tally, where, cf_reason_code(reason), pat) == 1) {
			if (pat != NULL)
				log_notice("refused %s: %s (%s); to allow it: --allow '%s'", what,
				    cf_reason_code(reason), detail ? detail : "", pat);
			else
				log_notice("refused %s: %s (%s)%s%s", what, cf_reason_code(reason),
				    detail ? detail : "", sugg[0] ? "; " : "", sugg);
		}
	}
	evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %d\r\n"
	    "X-Postern-Reason: %s\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n"
	    "\r\n",
	    status, status_text(status), n, cf_reason_code(reason));
	evbuffer_add(out, body, (size_t)n);
	close_after_write(c);
}

static void
refuse(struct px_conn *c, int status, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail)
{
	refuse_ex(c, status, reason, rule, detail, 0);
}

static void
pool_drop(struct pooled *p)
{
	if (p->bev != NULL)
		bufferevent_free(p->bev);
	memset(p, 0, sizeof(*p));
}

static void
conn_free(struct px_conn *c, const char *why)
{
	struct px_server *srv = c->srv;
	struct rec r = { .event = "close", .why = why };
	struct timeval now;
	size_t i;

	record_pending_allow(c);
	if (why == NULL && c->close_why != NULL) {
		r.why = c->close_why;
		r.detail = c->close_detail;
	}
	record(c, &r);
	event_base_gettimeofday_cached(srv->base, &now);

	px_stats_conn_close(srv->metrics, c->session, c->cli.bytes, c->up.bytes,
	    ms_since(&c->started, &now) / 1000.0, c->mode == CF_MODE_CONNECT && c->addr[0]);

	px_dns_cancel(c->dnsq);
	px_connect_cancel(c->connector);
	px_splice_free(c->spl);
	px_sni_free(c->sni);
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->cli.bev != NULL)
		bufferevent_free(c->cli.bev);
	if (c->up.bev != NULL)
		bufferevent_free(c->up.bev);
	for (i = 0; c->pool != NULL && i < POOL_MAX; i++)
		pool_drop(&c->pool[i]);
	free(c->pool);
	free(c->lk);
	if (c->pending != NULL)
		evbuffer_free(c->pending);
	free(c->hdrs);
	cf_config_free(c->cfg);
	TAILQ_REMOVE(&srv->conns, c, entry);
	px_share_put(c->share_sess);
	px_share_put(c->share_uid);
	if (c->linger)
		srv->nrefusing--;
	if (c->counted) {
		srv->nconns--;
		px_conn_limit_check(srv);
	}
	free(c);
	if (srv->nconns == 0 && srv->idle_trim != NULL) {
		/* Idle again: in a moment (libevent frees the bufferevents
		 * on its next turn, and a new client may come), give freed
		 * heap back to the system (engine.c). */
		struct timeval tv = { IDLE_TRIM_S, 0 };
		event_add(srv->idle_trim, &tv);
	}
}

/* By comparison, not equality: a reload may move the limit past nconns
 * either way, and the listeners must follow. */
void
px_conn_limit_check(struct px_server *srv)
{
	int full = srv->nconns >= cf_config_proxy(srv->cfg)->max_connections;

	if (full != srv->paused) {
		srv->paused = full;
		px_listeners_pause(srv, full);
	}
}

void
px_conn_close_all(struct px_server *srv)
{
	struct px_conn *c;

	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		conn_free(c, "shutdown");
}

/* ---- timers ------------------------------------------------------------- */

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_conn *c = arg;
	const struct cf_proxy_settings *p = settings(c);
	struct timeval now;
	long idle;

	(void)fd;
	(void)what;
	event_base_gettimeofday_cached(c->srv->base, &now);
	switch (c->state) {
	case CS_HEAD:
		if (c->head_timer_armed || c->requests == 0) {
			/* Slowloris: the head did not arrive in header_timeout. */
			if (evbuffer_get_length(bufferevent_get_input(c->cli.bev)) > 0) {
				c->host.kind = 0;
				c->method[0] = '\0';
				refuse(c, 408, CF_R_TIMEOUT, NULL,
				    "the request head did not arrive within header_timeout");
			} else {
				conn_free(c, "header_timeout");
			}
			return;
		}
		/* An idle keep-alive connection: the idle timeout applies. */
		__attribute__((fallthrough));
	case CS_TUNNEL:
	case CS_FWD:
	case CS_SNI:
		idle = ms_since(&c->last_activity, &now);
		if (c->state == CS_SNI && c->sni_fed > 0) {
			conn_free(c, "sni_timeout");
			return;
		}
		if (idle >= (long)p->idle_timeout_ms) {
			if (c->state == CS_FWD && c->rstate == RS_HEAD &&
			    evbuffer_get_length(bufferevent_get_output(c->cli.bev)) == 0) {
				/* Upstream accepted the request and never answered. */
				refuse(c, 504, CF_R_TIMEOUT, c->dec.rule,
				    "upstream did not answer within idle_timeout");
				return;
			}
			conn_free(c, "idle_timeout");
			return;
		}
		arm_timer(c, (unsigned)(p->idle_timeout_ms - (unsigned long)idle));
		return;
	case CS_LOOKUP:
	case CS_CLOSING:
		conn_free(c, "timeout");
		return;
	}
}

/* ---- relaying ----------------------------------------------------------- */

/*
 * Move everything readable from SRC to DST, stopping SRC while DST's output
 * is over RELAY_HIGH; DST's write callback resumes it (le-proxy's scheme).
 */
static void
relay(struct px_conn *c, struct bufferevent *src, struct bufferevent *dst, uint64_t *count)
{
	struct evbuffer *in = bufferevent_get_input(src);
	struct evbuffer *out = bufferevent_get_output(dst);
	size_t n = evbuffer_get_length(in);

	if (n == 0)
		return;
	*count += n;
	touch(c);
	evbuffer_add_buffer(out, in);
	if (evbuffer_get_length(out) >= RELAY_HIGH) {
		bufferevent_disable(src, EV_READ);
		bufferevent_setwatermark(dst, EV_WRITE, RELAY_HIGH / 2, 0);
	}
}

/* Half-close: after EOF from one side and once its bytes are flushed, the
 * other side's write half is shut (so an HTTP client that shuts its write
 * side still gets its whole answer). */
static void
maybe_shutdown(struct px_conn *c)
{
	if (c->up.bev != NULL && c->cli.eof && c->up.shut_pending &&
	    evbuffer_get_length(bufferevent_get_output(c->up.bev)) == 0) {
		c->up.shut_pending = 0;
		shutdown(bufferevent_getfd(c->up.bev), SHUT_WR);
	}
	if (c->up.eof && c->cli.shut_pending &&
	    evbuffer_get_length(bufferevent_get_output(c->cli.bev)) == 0) {
		c->cli.shut_pending = 0;
		shutdown(bufferevent_getfd(c->cli.bev), SHUT_WR);
	}
	if (c->cli.eof && c->up.eof && !c->up.shut_pending && !c->cli.shut_pending)
		conn_free(c, NULL);
}

static void
splice_done_cb(int err, void *arg)
{
	struct px_conn *c = arg;

	conn_free(c, err == 0 ? NULL : strerror(err));
}

/*
 * Hand an open tunnel to the splice(2) relay once nothing is buffered in
 * user space any more: the first flight held for the SNI check, a server's
 * banner, must reach the other side first and in order.  Returns 0 when
 * the tunnel was handed over, 1 when bytes are still buffered, -1 when it
 * stays on bufferevents (a side already closed, or no resources).
 */
static int
tunnel_to_splice(struct px_conn *c)
{
	int cfd, ufd;

	if (c->cli.eof || c->up.eof)
		return -1;
	if (evbuffer_get_length(bufferevent_get_input(c->cli.bev)) > 0 ||
	    evbuffer_get_length(bufferevent_get_input(c->up.bev)) > 0 ||
	    evbuffer_get_length(bufferevent_get_output(c->cli.bev)) > 0 ||
	    evbuffer_get_length(bufferevent_get_output(c->up.bev)) > 0)
		return 1;
	cfd = bufferevent_getfd(c->cli.bev);
	ufd = bufferevent_getfd(c->up.bev);
	if (cfd < 0 || ufd < 0)
		return -1;
	c->spl = px_splice_new(c->srv->base, cfd, ufd, &c->cli.bytes, &c->up.bytes,
	    &c->last_activity, splice_done_cb, c);
	if (c->spl == NULL)
		return -1;
	/* The relay owns the sockets now: the bufferevents let go of them. */
	bufferevent_setfd(c->cli.bev, -1);
	bufferevent_setfd(c->up.bev, -1);
	bufferevent_free(c->cli.bev);
	bufferevent_free(c->up.bev);
	c->cli.bev = c->up.bev = NULL;
	c->splice_pending = 0;
	return 0;
}

/* The buffered bytes are out (a write callback): switch if we can. */
static void
splice_retry(struct px_conn *c)
{
	int rc = tunnel_to_splice(c);

	if (rc <= 0 && c->splice_pending && c->spl == NULL) {
		/* Stay on bufferevents for good. */
		c->splice_pending = 0;
		bufferevent_enable(c->cli.bev, EV_READ);
		bufferevent_enable(c->up.bev, EV_READ);
	}
}

static void
tunnel_start(struct px_conn *c)
{
	int rc;

	c->state = CS_TUNNEL;
	if (!c->cli.eof && !c->up.eof) {
		/* Pass on what is buffered, reading nothing more meanwhile;
		 * the write callbacks switch to splice once it is out. */
		c->cli.bytes += evbuffer_get_length(bufferevent_get_input(c->cli.bev));
		c->up.bytes += evbuffer_get_length(bufferevent_get_input(c->up.bev));
		evbuffer_add_buffer(bufferevent_get_output(c->up.bev), bufferevent_get_input(c->cli.bev));
		evbuffer_add_buffer(bufferevent_get_output(c->cli.bev), bufferevent_get_input(c->up.bev));
		rc = tunnel_to_splice(c);
		if (rc == 0)
			return;
		if (rc == 1) {
			c->splice_pending = 1;
			bufferevent_setcb(c->cli.bev, cli_read_cb, cli_write_cb, cli_event_cb, c);
			bufferevent_setcb(c->up.bev, up_read_cb, up_write_cb, up_event_cb, c);
			bufferevent_setwatermark(c->cli.bev, EV_WRITE, 0, 0);
			bufferevent_setwatermark(c->up.bev, EV_WRITE, 0, 0);
			bufferevent_disable(c->cli.bev, EV_READ);
			bufferevent_disable(c->up.bev, EV_READ);
			bufferevent_enable(c->cli.bev, EV_WRITE);
			bufferevent_enable(c->up.bev, EV_WRITE);
			return;
		}
	}
	bufferevent_setcb(c->cli.bev, cli_read_cb, cli_write_cb, cli_event_cb, c);
	bufferevent_setcb(c->up.bev, up_read_cb, up_write_cb, up_event_cb, c);
	bufferevent_enable(c->cli.bev, EV_READ);
	bufferevent_enable(c->up.bev, EV_READ);
	if (!c->cli.eof)
		relay(c, c->cli.bev, c->up.bev, &c->cli.bytes);
	else
		maybe_shutdown(c);
}

/* ---- the SNI check ------------------------------------------------------ */

/* The first flight must be complete header_timeout after FROM. */
static void
sni_set_deadline(struct px_conn *c, const struct timeval *from)
{
	unsigned ms = settings(c)->header_timeout_ms;
	struct timeval d = { (time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000) };

	timeradd(from, &d, &c->sni_deadline);
}

/* Answer the CONNECT once (RFC 9110 §9.3.6: any 2xx means the tunnel is
 * open), and start the SNI deadline there. */
static void
connect_answer(struct px_conn *c)
{
	struct timeval now;

	if (c->connect_answered)
		return;
	c->connect_answered = 1;
	evbuffer_add_printf(bufferevent_get_output(c->cli.bev),
	    "HTTP/1.1 200 Connection established\r\n\r\n");
	event_base_gettimeofday_cached(c->srv->base, &now);
	sni_set_deadline(c, &now);
}

static void
sni_step(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	size_t len = evbuffer_get_length(in);
	enum px_sni_result r;
	enum cf_sni_mode mode = settings(c)->sni;
	struct cf_host name;
	char got_name[CF_HOST_TEXT_MAX];
	const char *why = NULL;
	int pass = 0;

	if (len > c->sni_fed && c->sni_fed == 0) {
		/* The first bytes: the deadline counts from the 200, or from
		 * now when the client stayed silent past it (a silent tunnel
		 * holds nothing; the idle timeout governs it). */
		struct timeval now;
		event_base_gettimeofday_cached(c->srv->base, &now);
		if (ms_since(&c->sni_deadline, &now) >= 0)
			sni_set_deadline(c, &now);
	}
	if (len > c->sni_fed && c->sni == NULL) {
		c->sni = px_sni_new(SNI_MAX_BYTES);
		if (c->sni == NULL) {
			conn_free(c, "out of memory");
			return;
		}
	}
	if (len > c->sni_fed) {
		size_t want = len > SNI_MAX_BYTES + 1 ? SNI_MAX_BYTES + 1 : len;
		unsigned char *data;
		if (want <= c->sni_fed) {
			r = PX_SNI_TOO_BIG;
			goto decide;
		}
		data = evbuffer_pullup(in, (ev_ssize_t)want);
		if (data == NULL) {
			conn_free(c, "out of memory");
			return;
		}
		r = px_sni_feed(c->sni, data + c->sni_fed, want - c->sni_fed);
		c->sni_fed = want;
		touch(c);
	} else if (c->cli.eof) {
		r = c->sni_fed == 0 ? PX_SNI_NOT_TLS : PX_SNI_BAD;
	} else {
		connect_answer(c);
		return;
	}
decide:
	switch (r) {
	case PX_SNI_NEED_MORE:
		if (c->cli.eof) {
			why = "the client closed in the middle of its ClientHello";
			break;
		}
		/* Partial hello: it must be complete by the one deadline set
		 * at the 200.  The timer is armed for what is left of it, never
		 * re-armed for a full header_timeout: a client feeding a byte at
		 * a time must not hold its buffered bytes for ever. */
		connect_answer(c);
		{
			struct timeval now;
			long left;
			event_base_gettimeofday_cached(c->srv->base, &now);
			left = -ms_since(&c->sni_deadline, &now);
			arm_timer(c, left > 0 ? (unsigned)left : 1);
		}
		bufferevent_disable(c->cli.bev, EV_READ);
		bufferevent_enable(c->cli.bev, EV_READ);
		return;
	case PX_SNI_HELLO:
		if (px_sni_name(c->sni, &name) == 1) {
			if (cf_host_equal(&name, &c->host))
				pass = 1;
			else
				why = "the TLS server_name differs from the CONNECT host";
		} else if (mode == CF_SNI_STRICT) {
			why = "sni = strict and the ClientHello carries no server_name";
		} else {
			pass = 1;
		}
		break;
	case PX_SNI_NOT_TLS:
		if (mode == CF_SNI_STRICT)
			why = "sni = strict and the first bytes are not a TLS ClientHello";
		else
			pass = 1;
		break;
	case PX_SNI_BAD:
	case PX_SNI_TOO_BIG:
	default:
		why = c->sni != NULL ? px_sni_why(c->sni) : NULL;
		if (why == NULL)
			why = "malformed ClientHello";
		break;
	}
	if (!pass) {
		char got[CF_HOST_TEXT_MAX];

		got[0] = '\0';
		if (r == PX_SNI_HELLO && px_sni_name(c->sni, &name) == 1)
			cf_host_format(&name, got, sizeof(got));
		c->allow_pending = 0;
		record_decision(c, 0, CF_R_SNI_MISMATCH, c->dec.rule, why, got);
		if (c->srv->human) {
			char h[CF_HOST_TEXT_MAX], where[CF_HOST_TEXT_MAX + 8];
			host_text(c, h, sizeof(h));
			snprintf(where, sizeof(where), "%s:%u", h, c->port);
			if (px_tally_add(c->srv->tally, where, "sni_mismatch", NULL) == 1)
				log_notice("refused the tunnel to %s:%u: sni_mismatch (%s%s%s)", h,
				    c->port, why, got[0] ? ": " : "", got);
		}
		/* The held bytes never reach upstream: drop them with the tunnel.
		 * When the whole ClientHello came before the proxy answered
		 * (pipelined with the CONNECT), the client still reads HTTP:
		 * answer 403 so it can tell a refusal from a crash. */
		if (!c->connect_answered) {
			px_sni_free(c->sni);
			c->sni = NULL;
			refuse_ex(c, 403, CF_R_SNI_MISMATCH, c->dec.rule, why, 1);
			return;
		}
		conn_free(c, "sni_mismatch");
		return;
	}
	got_name[0] = '\0';
	if (r == PX_SNI_HELLO && px_sni_name(c->sni, &name) == 1)
		cf_host_format(&name, got_name, sizeof(got_name));
	record_decision(c, 1, CF_R_ALLOWED, c->dec.rule, NULL, got_name);
	px_sni_free(c->sni);
	c->sni = NULL;
	connect_answer(c);
	arm_timer(c, settings(c)->idle_timeout_ms);
	tunnel_start(c);
}

/* ---- upstream connection ------------------------------------------------ */

/*
 * Judge the connected tunnel C (a CONNECT, or a plain-HTTP request after its
 * 101 Switching Protocols, judged with its path) by the server's current
 * snapshot, on the full decision: the name and port, then the address it is
 * connected to (deny_hosts address rules, the never-reachable ranges unless
 * the allowing rule says "private", the proxy's own listeners).  A refused
 * tunnel is logged as "revoke" and closed, after a 403 when ANSWER (the
 * client still waits for the answer to its CONNECT): returns 1, and C is
 * freed or closing.  Returns 0 when the tunnel may stay.
 */
static int
revoke_tunnel(struct px_conn *c, int answer)
{
	struct px_server *srv = c->srv;
	const struct cf_session *s;
	struct cf_decision d, ad;
	struct rec r = { .event = "revoke", .has_reason = 1, .current = 1 };

	s = cf_config_find_session(srv->cfg, c->session);
	if (s != NULL) {
		cf_decide(s, c->mode, &c->host, c->port, c->mode == CF_MODE_HTTP ? c->path : NULL,
		    c->mode == CF_MODE_HTTP ? strlen(c->path) : 0, &d);
		if (d.allow) {
			cf_decide_addr(srv->cfg, s, &d, &c->up_peer.sa, &ad);
			if (ad.allow)
				return 0;
			d = ad;
		}
	} else {
		memset(&d, 0, sizeof(d));
		d.reason = CF_R_SESSION_REMOVED;
		snprintf(d.detail, sizeof(d.detail), "session %s was removed", c->session);
	}
	record_pending_allow(c);
	r.reason = d.reason;
	r.detail = d.detail;
	record(c, &r);
	if (answer)
		refuse_ex(c, 403, d.reason, d.rule, d.detail, 1);
	else
		conn_free(c, "revoked by reload");
	return 1;
}

static void fwd_start(struct px_conn *c);

static void
connected_cb(int fd, int err, size_t index, void *arg)
{
	struct px_conn *c = arg;
	char detail[256];

	c->connector = NULL;
	if (fd < 0) {
		snprintf(detail, sizeof(detail), "could not connect to %s: %s",
		    c->lk != NULL && c->lk->naddrs == 1 ? c->addr : "any of its addresses", strerror(err));
		if (err == ETIMEDOUT)
			refuse(c, 504, CF_R_TIMEOUT, c->dec.rule, detail);
		else
			refuse(c, 502, CF_R_CONNECT_FAILURE, c->dec.rule, detail);
		return;
	}
	sa_text((const struct sockaddr *)&c->lk->addrs[index], c->addr, sizeof(c->addr));
	memset(&c->up_peer, 0, sizeof(c->up_peer));
	memcpy(&c->up_peer, &c->lk->addrs[index],
	    c->lk->addrlens[index] < sizeof(c->up_peer) ? c->lk->addrlens[index] : sizeof(c->up_peer));
	free(c->lk);
	c->lk = NULL;
	c->up.bev = bufferevent_socket_new(c->srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->up.bev == NULL) {
		close(fd);
		refuse(c, 502, CF_R_CONNECT_FAILURE, c->dec.rule, "out of memory");
		return;
	}
	bufferevent_priority_set(c->up.bev, PX_PRI_BULK);
	touch(c);
	arm_timer(c, settings(c)->idle_timeout_ms);
	if (c->mode == CF_MODE_CONNECT) {
		/*
		 * A reload with revoke = yes that landed while this tunnel was
		 * being looked up or connected found nothing to revoke: judge
		 * it now, before its first byte, as the revoke pass would have.
		 */
		if (c->generation != c->srv->generation && cf_config_proxy(c->srv->cfg)->revoke &&
		    revoke_tunnel(c, 1))
			return;
		c->connect_answered = 0;
		if (settings(c)->sni == CF_SNI_OFF) {
			record_decision(c, 1, CF_R_ALLOWED, c->dec.rule, NULL, NULL);
			connect_answer(c);
			tunnel_start(c);
			return;
		}
		/* The inspector (an OpenSSL object of several KiB) is made when
		 * the client's first bytes arrive, so an idle tunnel stays small. */
		c->state = CS_SNI;
		c->allow_pending = 1;
		/* Upstream may speak first (SMTP, SSH servers): its bytes flow
		 * to the client; only the client's are held for the check. */
		bufferevent_setcb(c->cli.bev, cli_read_cb, cli_write_cb, cli_event_cb, c);
		bufferevent_setcb(c->up.bev, up_read_cb, up_write_cb, up_event_cb, c);
		bufferevent_enable(c->up.bev, EV_READ);
		bufferevent_enable(c->cli.bev, EV_READ);
		/* The 200 is written by sni_step(), unless a whole ClientHello
		 * that fails the check is already here (pipelined): then 403. */
		sni_step(c);
		return;
	}
	record_decision(c, 1, CF_R_ALLOWED, c->dec.rule, NULL, NULL);
	fwd_start(c);
}

/*
 * Vet every address, not only the first 16 that px_connect_start() dials;
 * refuse the host if any one is refused.  proxy/dns.c hands over every
 * answer or fails the name, so no address escapes this check.
 */
static int
vet_and_connect(struct px_conn *c)
{
	size_t i, bad;
	struct cf_decision ad;

	for (i = 0; i < c->lk->naddrs; i++) {
		struct sockaddr *sa = (struct sockaddr *)&c->lk->addrs[i];
		if (sa->sa_family == AF_INET)
			((struct sockaddr_in *)(void *)sa)->sin_port = htons(c->port);
		else
			((struct sockaddr_in6 *)(void *)sa)->sin6_port = htons(c->port);
	}
	if (!cf_decide_addrs(c->cfg, c->sess, &c->dec, c->lk->addrs, c->lk->naddrs, &ad, &bad)) {
		sa_text((const struct sockaddr *)&c->lk->addrs[bad], c->addr, sizeof(c->addr));
		refuse(c, 403, ad.reason, ad.rule, ad.detail);
		return -1;
	}
	if (c->lk->naddrs == 1)
		sa_text((const struct sockaddr *)&c->lk->addrs[0], c->addr, sizeof(c->addr));
	/* Connect only to what was vetted: these very sockaddrs. */
	c->connector = px_connect_start(c->srv->base, c->lk->addrs, c->lk->addrlens, c->lk->naddrs,
	    settings(c)->connect_timeout_ms, connected_cb, c);
	if (c->connector == NULL) {
		refuse(c, 502, CF_R_CONNECT_FAILURE, c->dec.rule, strerror(errno));
		return -1;
	}
	return 0;
}

static void
dns_cb(int status, const struct px_dns_result *res, const char *errmsg, void *arg)
{
	struct px_conn *c = arg;
	char detail[800], h[CF_HOST_TEXT_MAX];
	size_t i;

	c->dnsq = NULL;
	if (status != 0) {
		int listed;
		host_text(c, h, sizeof(h));
		/* The proxy asks DNS only; a name the admin knows from
		 * /etc/hosts is the one case where that surprises. */
		listed = cf_etchosts_file_lists("/etc/hosts", c->host.name);
		snprintf(detail, sizeof(detail), "%s could not be resolved: %s%s%s%s", h,
		    errmsg ? errmsg : px_dns_strerror(status),
		    listed ? "; /etc/hosts lists it, but /etc/hosts is not read: pin it in [hosts] (" : "",
		    listed ? h : "", listed ? " = ADDRESS)" : "");
		refuse(c, status == PX_DNS_TIMEOUT ? 504 : 502, CF_R_DNS_FAILURE, c->dec.rule, detail);
		return;
	}
	c->lk->naddrs = res->naddrs < PX_DNS_MAX_ADDRS ? res->naddrs : PX_DNS_MAX_ADDRS;
	for (i = 0; i < c->lk->naddrs; i++) {
		c->lk->addrs[i] = res->addrs[i];
		c->lk->addrlens[i] = res->addrlens[i];
	}
	vet_and_connect(c);
}

/* ---- the forward path --------------------------------------------------- */

static struct pooled *
pool_find(struct px_conn *c, const char *key)
{
	size_t i;

	for (i = 0; c->pool != NULL && i < POOL_MAX; i++)
		if (c->pool[i].bev != NULL && strcmp(c->pool[i].key, key) == 0)
			return &c->pool[i];
	return NULL;
}

static void
pool_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct pooled *p = arg;

	(void)bev;
	(void)what;
	/* An idle upstream closed or failed: forget it. */
	pool_drop(p);
}

static void
pool_read_cb(struct bufferevent *bev, void *arg)
{
	/* An idle upstream must not speak; one that does is dropped. */
	(void)bev;
	pool_drop(arg);
}

static void
pool_put(struct px_conn *c)
{
	size_t i, slot = 0;

	if (c->pool == NULL && (c->pool = calloc(POOL_MAX, sizeof(*c->pool))) == NULL) {
		bufferevent_free(c->up.bev);
		c->up.bev = NULL;
		return;
	}
	for (i = 0; i < POOL_MAX; i++)
		if (c->pool[i].bev == NULL) {
			slot = i;
			break;
		}
	if (i == POOL_MAX)
		pool_drop(&c->pool[0]);
	snprintf(c->pool[slot].key, sizeof(c->pool[slot].key), "%s", c->upkey);
	snprintf(c->pool[slot].addr, sizeof(c->pool[slot].addr), "%s", c->addr);
	c->pool[slot].peer = c->up_peer;
	c->pool[slot].generation = c->generation;
	c->pool[slot].rule = c->dec.rule;
	c->pool[slot].bev = c->up.bev;
	bufferevent_setcb(c->up.bev, pool_read_cb, NULL, pool_event_cb, &c->pool[slot]);
	bufferevent_enable(c->up.bev, EV_READ);
	c->up.bev = NULL;
}

/* Pass request-body bytes from the client to upstream, as far as framing
 * and back-pressure allow. */
static int
fwd_request_body(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	struct evbuffer *out = bufferevent_get_output(c->up.bev);
	size_t avail = evbuffer_get_length(in), n = 0;

	if (c->req.done || avail == 0)
		return 0;
	touch(c);
	if (c->req.chunked) {
		struct evbuffer_iovec v[8];
		int nv = evbuffer_peek(in, -1, NULL, v, 8), i, done = 0;
		const char *why = NULL;
		for (i = 0; i < nv && i < 8 && !done; i++) {
			ssize_t used = px_chunked_scan(&c->req.ch, v[i].iov_base, v[i].iov_len, &done, &why);
			if (used < 0) {
				log_debug("bad chunked request body: %s", why);
				return -1;
			}
			n += (size_t)used;
		}
		if (done)
			c->req.done = 1;
	} else {
		n = avail < (uint64_t)c->req.left ? avail : (size_t)c->req.left;
		c->req.left -= (int64_t)n;
		if (c->req.left == 0)
			c->req.done = 1;
	}
	if (n > 0) {
		evbuffer_remove_buffer(in, out, n);
		c->cli.bytes += n;
	}
	if (evbuffer_get_length(out) >= RELAY_HIGH) {
		bufferevent_disable(c->cli.bev, EV_READ);
		bufferevent_setwatermark(c->up.bev, EV_WRITE, RELAY_HIGH / 2, 0);
	}
	if (c->req.done)
		bufferevent_disable(c->cli.bev, EV_READ);
	return 0;
}

static void
fwd_finish(struct px_conn *c)
{
	/* Response complete. */
	if (c->up.bev != NULL) {
		if (c->resp.keep_alive && c->req.done && !c->up.eof &&
		    evbuffer_get_length(bufferevent_get_input(c->up.bev)) == 0)
			pool_put(c);
		else {
			bufferevent_free(c->up.bev);
			c->up.bev = NULL;
		}
	}
	if (!c->cli_keep_alive || !c->req.done || c->cli.eof) {
		close_after_write(c);
		return;
	}
	/* Next request on this keep-alive connection, judged on its own. */
	c->state = CS_HEAD;
	c->head_timer_armed = 0;
	c->decided = 0;
	c->close_why = NULL;
	c->host.kind = 0;
	c->addr[0] = '\0';
	arm_timer(c, settings(c)->idle_timeout_ms);
	bufferevent_setcb(c->cli.bev, cli_read_cb, cli_write_cb, cli_event_cb, c);
	bufferevent_enable(c->cli.bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_input(c->cli.bev)) > 0)
		handle_head(c);
}

static void
fwd_response(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->up.bev);
	struct evbuffer *out = bufferevent_get_output(c->cli.bev);

	while (c->rstate != RS_DONE) {
		size_t avail = evbuffer_get_length(in);

		if (c->rstate == RS_HEAD) {
			struct px_http_response resp;
			struct px_http_limits lim;
			size_t head_len = 0, want;
			const char *why = NULL;
			unsigned char *data;
			int rc;

			if (avail == 0)
				return;
			lim.max_headers = settings(c)->max_headers;
			lim.max_header_bytes = settings(c)->max_header_bytes;
			want = avail > lim.max_header_bytes + 1 ? lim.max_header_bytes + 1 : avail;
			data = evbuffer_pullup(in, (ev_ssize_t)want);
			px_http_response_init(&resp, c->hdrs, c->nhdrs_cap);
			resp.resume = c->resp.rs;
			rc = px_http_parse_response((const char *)data, want, &lim, c->req_is_head,
			    &resp, &head_len, &why);
			if (rc == PX_HTTP_INCOMPLETE) {
				c->resp.rs = resp.resume;
				return;
			}
			/* Whatever follows (the body, the head after a 1xx) is
			 * parsed from its own start. */
			memset(&c->resp.rs, 0, sizeof(c->resp.rs));
			if (rc != PX_HTTP_OK) {
				if (c->up.bytes == 0) {
					char d[200];
					snprintf(d, sizeof(d), "upstream sent a malformed response: %s", why ? why : "?");
					refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->dec.rule, d);
				} else {
					conn_free(c, "bad upstream response");
				}
				return;
			}
			if (resp.informational) {
				/* RFC 9110 §15.2: no 1xx to an HTTP/1.0 client. */
				if (c->req_minor != 0)
					px_http_build_client_head(&resp, 1, out);
				evbuffer_drain(in, head_len);
				continue;
			}
			c->cli_keep_alive = c->req.keep_alive && !resp.close_delimited && !resp.upgrade_websocket;
			c->resp.keep_alive = resp.keep_alive;
			if (resp.upgrade_websocket && c->req_upgrade) {
				px_http_build_client_head(&resp, 1, out);
				evbuffer_drain(in, head_len);
				c->up.bytes += head_len;
				/* RFC 9110 §7.8: after 101 the connection is a tunnel. */
				c->req.done = 1;
				tunnel_start(c);
				if (c->spl == NULL)
					relay(c, c->up.bev, c->cli.bev, &c->up.bytes);
				return;
			}
			c->resp_dechunk = 0;
			if (resp.chunked && c->req_minor == 0) {
				/* An HTTP/1.0 client cannot take chunked: drop the
				 * coding and delimit the body by closing. */
				size_t k, kept = 0;
				for (k = 0; k < resp.nheaders; k++)
					if (!(resp.headers[k].name_len == 17 &&
					    strncasecmp(resp.headers[k].name, "Transfer-Encoding", 17) == 0))
						resp.headers[kept++] = resp.headers[k];
				resp.nheaders = kept;
				c->resp_dechunk = 1;
				c->cli_keep_alive = 0;
			}
			px_http_build_client_head(&resp, c->cli_keep_alive, out);
			evbuffer_drain(in, head_len);
			c->up.bytes += head_len;
			c->resp.chunked = resp.chunked;
			c->resp.close_delimited = resp.close_delimited;
			c->resp.left = resp.content_length > 0 ? resp.content_length : 0;
			if (resp.chunked) {
				struct px_http_limits l2 = lim;
				px_chunked_init(&c->resp.ch, &l2);
			}
			if (resp.no_body || (!resp.chunked && !resp.close_delimited && c->resp.left == 0))
				c->rstate = RS_DONE;
			else
				c->rstate = RS_BODY;
			continue;
		}

		/* RS_BODY */
		if (avail == 0)
			break;
		touch(c);
		if (c->resp.close_delimited) {
			c->up.bytes += avail;
			evbuffer_add_buffer(out, in);
		} else if (c->resp.chunked) {
			struct evbuffer_iovec v[8];
			int nv = evbuffer_peek(in, -1, NULL, v, 8), i, done = 0;
			size_t n = 0;
			const char *why = NULL;
			for (i = 0; i < nv && i < 8 && !done; i++) {
				ssize_t used = c->resp_dechunk ?
				    px_chunked_decode(&c->resp.ch, v[i].iov_base, v[i].iov_len, out, &done, &why) :
				    px_chunked_scan(&c->resp.ch, v[i].iov_base, v[i].iov_len, &done, &why);
				if (used < 0) {
					conn_free(c, "bad chunked response");
					return;
				}
				n += (size_t)used;
			}
			if (c->resp_dechunk)
				evbuffer_drain(in, n);
			else
				evbuffer_remove_buffer(in, out, n);
			c->up.bytes += n;
			if (done)
				c->rstate = RS_DONE;
		} else {
			size_t n = avail < (uint64_t)c->resp.left ? avail : (size_t)c->resp.left;
			evbuffer_remove_buffer(in, out, n);
			c->up.bytes += n;
			c->resp.left -= (int64_t)n;
			if (c->resp.left == 0)
				c->rstate = RS_DONE;
		}
		if (evbuffer_get_length(out) >= RELAY_HIGH) {
			bufferevent_disable(c->up.bev, EV_READ);
			bufferevent_setwatermark(c->cli.bev, EV_WRITE, RELAY_HIGH / 2, 0);
			return;
		}
	}
	if (c->rstate == RS_DONE)
		fwd_finish(c);
}

static void
fwd_start(struct px_conn *c)
{
	c->state = CS_FWD;
	c->rstate = RS_HEAD;
	memset(&c->resp.rs, 0, sizeof(c->resp.rs));
	bufferevent_setcb(c->cli.bev, cli_read_cb, cli_write_cb, cli_event_cb, c);
	bufferevent_setcb(c->up.bev, up_read_cb, up_write_cb, up_event_cb, c);
	bufferevent_setwatermark(c->up.bev, EV_WRITE, 0, 0);
	bufferevent_setwatermark(c->cli.bev, EV_WRITE, 0, 0);
	c->cli.bytes += evbuffer_get_length(c->pending);
	evbuffer_add_buffer(bufferevent_get_output(c->up.bev), c->pending);
	bufferevent_enable(c->up.bev, EV_READ);
	if (!c->req.done) {
		bufferevent_enable(c->cli.bev, EV_READ);
		if (fwd_request_body(c) != 0) {
			conn_free(c, "bad request body");
			return;
		}
	} else {
		bufferevent_disable(c->cli.bev, EV_READ);
	}
}

/* ---- the request head --------------------------------------------------- */

static void
handle_head(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	const struct cf_proxy_settings *p = settings(c);
	struct px_http_request req;
	struct px_http_limits lim;
	size_t len = evbuffer_get_length(in), want, head_len = 0;
	const char *why = NULL;
	unsigned char *data;
	int status = 400, rc;

	if (len == 0)
		return;
	if (!c->head_timer_armed) {
		c->head_timer_armed = 1;
		arm_timer(c, p->header_timeout_ms);
	}
	touch(c);
	lim.max_headers = p->max_headers;
	lim.max_header_bytes = p->max_header_bytes;
	if (c->nhdrs_cap < lim.max_headers + 1) {
		struct px_http_header *nh = realloc(c->hdrs, (lim.max_headers + 1) * sizeof(*nh));
		if (nh == NULL) {
			conn_free(c, "out of memory");
			return;
		}
		c->hdrs = nh;
		c->nhdrs_cap = lim.max_headers + 1;
	}
	/* Never buffer more than the cap: parse at most cap + 1 bytes, which
	 * is enough for the parser to say 431. */
	want = len > lim.max_header_bytes + 1 ? lim.max_header_bytes + 1 : len;
	data = evbuffer_pullup(in, (ev_ssize_t)want);
	if (data == NULL) {
		conn_free(c, "out of memory");
		return;
	}
	px_http_request_init(&req, c->hdrs, c->nhdrs_cap);
	req.resume = c->req.rs;
	rc = px_http_parse_request((const char *)data, want, &lim, &req, &head_len, &status, &why);
	if (rc == PX_HTTP_INCOMPLETE) {
		c->req.rs = req.resume;
		if (len > lim.max_header_bytes) {
			c->host.kind = 0;
			refuse(c, 431, CF_R_BAD_REQUEST, NULL, "request head larger than max_header_bytes");
		}
		return;
	}
	/* This head is done with: the next one on the connection is parsed
	 * from its own start. */
	memset(&c->req.rs, 0, sizeof(c->req.rs));

	/* A new request: the current snapshot decides it. */
	c->requests++;
	c->decided = 0;
	c->host.kind = 0;
	c->method[0] = '\0';
	c->path[0] = '\0';
	c->addr[0] = '\0';
	if (c->cfg != c->srv->cfg) {
		cf_config_free(c->cfg);
		c->cfg = cf_config_ref(c->srv->cfg);
	}
	c->generation = c->srv->generation;
	c->sess = cf_config_find_session(c->cfg, c->session);
	if (rc == PX_HTTP_OK || rc == PX_HTTP_HOST_MISMATCH) {
		size_t ml = req.method_len < sizeof(c->method) - 1 ? req.method_len : sizeof(c->method) - 1;
		memcpy(c->method, req.method, ml);
		c->method[ml] = '\0';
	}
	if (rc == PX_HTTP_HOST_MISMATCH) {
		c->host = req.host;
		c->port = req.port;
		refuse(c, 400, CF_R_HOST_MISMATCH, NULL,
		    "the Host header names another host than the request URI");
		return;
	}
	if (rc != PX_HTTP_OK) {
		char d[256];
		snprintf(d, sizeof(d), "malformed request: %s", why ? why : "bad syntax");
		refuse(c, status == 431 ? 431 : 400, CF_R_BAD_REQUEST, NULL, d);
		return;
	}
	if (c->sess == NULL) {
		refuse(c, 403, CF_R_SESSION_REMOVED, NULL,
		    "this listener's session was removed from the config");
		return;
	}
	if (!req.is_connect && req.form != PX_TARGET_ABSOLUTE) {
		refuse(c, 400, CF_R_BAD_REQUEST, NULL,
		    "this is postern, an HTTP proxy, not a web server: send requests in absolute form "
		    "(GET http://host/path) or CONNECT host:port, e.g. by setting HTTP_PROXY and HTTPS_PROXY");
		return;
	}

	c->mode = req.is_connect ? CF_MODE_CONNECT : CF_MODE_HTTP;
	c->host = req.host;
	c->port = req.port;
	if (c->mode == CF_MODE_HTTP) {
		size_t pl = req.path_len < sizeof(c->path) - 1 ? req.path_len : sizeof(c->path) - 1;
		memcpy(c->path, req.path, pl);
		c->path[pl] = '\0';
	}
	cf_decide(c->sess, c->mode, &c->host, c->port, req.path, c->mode == CF_MODE_HTTP ? req.path_len : 0,
	    &c->dec);
	if (!c->dec.allow) {
		refuse(c, 403, c->dec.reason, c->dec.rule, c->dec.detail);
		return;
	}
	if (c->mode == CF_MODE_HTTP && c->dec.rule != NULL && c->dec.rule->path != NULL) {
		/*
		 * A path rule vouches for the request line's path only, and
		 * some back ends take the path from a header instead
		 * (X-Original-URL on IIS, Symfony...).  Refused, not stripped:
		 * a stripped header silently sends a request other than the
		 * one the client made, while a 403 tells the agent, and the
		 * audit log, what was refused and why.
		 */
		size_t nl = 0;
		const char *name = px_http_path_override(&req, &nl);

		if (name != NULL) {
			char d[sizeof(c->dec.detail)];
			snprintf(d, sizeof(d),
			    "the %.*s header can override the path, and allow_hosts = %s (%s:%d) admits only paths under %s",
			    (int)(nl < 64 ? nl : 64), name, c->dec.rule->text, c->dec.rule->file,
			    c->dec.rule->line, c->dec.rule->path);
			refuse(c, 403, CF_R_PATH_NOT_ALLOWED, c->dec.rule, d);
			return;
		}
	}

	if (c->mode == CF_MODE_HTTP) {
		if (c->pending == NULL)
			c->pending = evbuffer_new();
		if (c->pending == NULL || px_http_build_upstream_head(&req, c->pending) != 0) {
			conn_free(c, "out of memory");
			return;
		}
		c->req.keep_alive = req.keep_alive;
		c->req_minor = req.minor;
		c->req_is_head = req.is_head;
		c->req_upgrade = req.upgrade_websocket;
		c->req.chunked = req.chunked;
		c->req.left = req.content_length > 0 ? req.content_length : 0;
		c->req.done = !req.chunked && c->req.left == 0;
		if (req.chunked) {
			/*
			 * The chunk framing that arrived with the head is checked
			 * before anything goes upstream (RFC 9112 §7.1): a bad or
			 * overflowing chunk size is a 400 and upstream sees nothing.
			 * Framing that arrives later is checked as it streams; on an
			 * error the upstream connection is closed before the bad
			 * bytes are sent.
			 */
			struct px_chunked probe;
			struct evbuffer_ptr pos;
			struct evbuffer_iovec v[8];
			int nv, k, done = 0;
			const char *cwhy = NULL;

			px_chunked_init(&c->req.ch, &lim);
			probe = c->req.ch;
			if (evbuffer_ptr_set(in, &pos, head_len, EVBUFFER_PTR_SET) == 0) {
				nv = evbuffer_peek(in, -1, &pos, v, 8);
				for (k = 0; k < nv && k < 8 && !done; k++) {
					if (px_chunked_scan(&probe, v[k].iov_base, v[k].iov_len, &done, &cwhy) < 0) {
						char d[200];
						snprintf(d, sizeof(d), "malformed chunked body: %s", cwhy ? cwhy : "bad framing");
						c->host.kind = 0;
						refuse(c, 400, CF_R_BAD_REQUEST, NULL, d);
						return;
					}
				}
			}
		}
	}
	/* The head is consumed; any bytes after it are the body, a pipelined
	 * request, or (CONNECT) the client's first flight. */
	evbuffer_drain(in, head_len);
	bufferevent_disable(c->cli.bev, EV_READ);
	c->state = CS_LOOKUP;
	arm_timer(c, p->connect_timeout_ms + 30000);

	{
		char h[CF_HOST_TEXT_MAX];
		host_text(c, h, sizeof(h));
		snprintf(c->upkey, sizeof(c->upkey), "%s:%u", h, c->port);
	}
	if (c->mode == CF_MODE_HTTP) {
		struct pooled *pp = pool_find(c, c->upkey);
		struct cf_decision ad;

		/*
		 * Reuse this host's idle upstream only under the snapshot and
		 * the rule that vetted every address of the host when it was
		 * opened: then the full decision (name, port, each address,
		 * "private") is the one made then.  After a reload, or under
		 * another rule (a path rule without "private"), the upstream is
		 * closed and the request takes the way of a new one: lookup,
		 * every address vetted, a new connection.  The peer's own
		 * address is checked again here all the same.
		 */
		if (pp != NULL) {
			cf_decide_addr(c->cfg, c->sess, &c->dec, &pp->peer.sa, &ad);
			if (pp->generation != c->generation || pp->rule != c->dec.rule || !ad.allow) {
				pool_drop(pp);
				pp = NULL;
			}
		}
		if (pp != NULL) {
			c->up.bev = pp->bev;
			c->up_peer = pp->peer;
			snprintf(c->addr, sizeof(c->addr), "%s", pp->addr);
			pp->bev = NULL;
			pool_drop(pp);
			record_decision(c, 1, CF_R_ALLOWED, c->dec.rule, "reused upstream connection", NULL);
			arm_timer(c, p->idle_timeout_ms);
			fwd_start(c);
			return;
		}
	}
	free(c->lk);
	c->lk = calloc(1, sizeof(*c->lk));
	if (c->lk == NULL) {
		conn_free(c, "out of memory");
		return;
	}
	if (c->mode == CF_MODE_CONNECT) {
		/* A tunnel parses no more heads: give the header table back. */
		free(c->hdrs);
		c->hdrs = NULL;
		c->nhdrs_cap = 0;
	}
	if (c->host.kind != CF_HOST_NAME) {
		struct sockaddr_storage *ss = &c->lk->addrs[0];
		memset(ss, 0, sizeof(*ss));
		if (c->host.kind == CF_HOST_IPV4) {
			struct sockaddr_in *sin = (struct sockaddr_in *)ss;
			sin->sin_family = AF_INET;
			sin->sin_addr = c->host.addr.v4;
			c->lk->addrlens[0] = sizeof(*sin);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
			sin6->sin6_family = AF_INET6;
			sin6->sin6_addr = c->host.addr.v6;
			c->lk->addrlens[0] = sizeof(*sin6);
		}
		c->lk->naddrs = 1;
		vet_and_connect(c);
		return;
	}
	{
		/* A name pinned in [hosts] takes its addresses from there,
		 * vetted below exactly like a DNS answer. */
		const struct cf_pin *pin = cf_config_pin(c->cfg, c->host.name);
		if (pin != NULL) {
			size_t i;
			for (i = 0; i < pin->naddrs && i < PX_DNS_MAX_ADDRS; i++) {
				c->lk->addrs[i] = pin->addrs[i];
				c->lk->addrlens[i] = pin->addrs[i].ss_family == AF_INET ?
				    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
			}
			c->lk->naddrs = i;
			vet_and_connect(c);
			return;
		}
	}
	c->dnsq = px_dns_resolve(c->srv->dns, c->host.name, dns_cb, c);
	if (c->dnsq == NULL)
		refuse(c, 502, CF_R_DNS_FAILURE, c->dec.rule, "could not start a DNS lookup");
}

/* ---- bufferevent callbacks ---------------------------------------------- */

static void
cli_read_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	switch (c->state) {
	case CS_HEAD:
		handle_head(c);
		break;
	case CS_SNI:
		sni_step(c);
		break;
	case CS_TUNNEL:
		relay(c, c->cli.bev, c->up.bev, &c->cli.bytes);
		break;
	case CS_FWD:
		if (fwd_request_body(c) != 0)
			conn_free(c, "bad request body");
		break;
	default:
		break;
	}
}

static void
cli_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	if (c->state == CS_CLOSING) {
		if (evbuffer_get_length(bufferevent_get_output(c->cli.bev)) == 0)
			closing_flushed(c);
		return;
	}
	if (c->splice_pending) {
		splice_retry(c);
		return;
	}
	/* The client drained: resume reading upstream. */
	if (c->up.bev != NULL && evbuffer_get_length(bufferevent_get_output(c->cli.bev)) < RELAY_HIGH) {
		bufferevent_setwatermark(c->cli.bev, EV_WRITE, 0, 0);
		if (!c->up.eof)
			bufferevent_enable(c->up.bev, EV_READ);
		if (c->state == CS_FWD)
			fwd_response(c);
	}
	if (c->state == CS_TUNNEL || c->state == CS_SNI)
		maybe_shutdown(c);
}

static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	if (c->splice_pending) {
		splice_retry(c);
		return;
	}
	if (evbuffer_get_length(bufferevent_get_output(c->up.bev)) < RELAY_HIGH) {
		bufferevent_setwatermark(c->up.bev, EV_WRITE, 0, 0);
		if (!c->cli.eof && c->state == CS_TUNNEL)
			bufferevent_enable(c->cli.bev, EV_READ);
		if (c->state == CS_FWD && !c->req.done && !c->cli.eof)
			bufferevent_enable(c->cli.bev, EV_READ);
	}
	if (c->state == CS_TUNNEL)
		maybe_shutdown(c);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	if (c->state == CS_TUNNEL || c->state == CS_SNI)
		relay(c, c->up.bev, c->cli.bev, &c->up.bytes);
	else if (c->state == CS_FWD)
		fwd_response(c);
}

static void
cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_ERROR) {
		conn_free(c, "client error");
		return;
	}
	if (!(what & BEV_EVENT_EOF))
		return;
	c->cli.eof = 1;
	switch (c->state) {
	case CS_TUNNEL:
		relay(c, c->cli.bev, c->up.bev, &c->cli.bytes);
		c->up.shut_pending = 1;
		maybe_shutdown(c);
		break;
	case CS_SNI:
		sni_step(c);
		break;
	case CS_FWD:
		if (!c->req.done)
			conn_free(c, "client closed during the request body");
		break;
	case CS_CLOSING:
	default:
		conn_free(c, NULL);
		break;
	}
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_ERROR) {
		if (c->state == CS_FWD && c->rstate == RS_HEAD && c->up.bytes == 0) {
			refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->dec.rule, "upstream failed before answering");
			return;
		}
		conn_free(c, "upstream error");
		return;
	}
	if (!(what & BEV_EVENT_EOF))
		return;
	c->up.eof = 1;
	switch (c->state) {
	case CS_TUNNEL:
	case CS_SNI:
		relay(c, c->up.bev, c->cli.bev, &c->up.bytes);
		c->cli.shut_pending = 1;
		if (c->state == CS_SNI && !c->cli.eof) {
			/* Upstream is gone before the client spoke: nothing to check. */
			c->cli.eof = 1;
			c->up.shut_pending = 0;
		}
		maybe_shutdown(c);
		break;
	case CS_FWD:
		fwd_response(c);
		if (c->state != CS_FWD)
			return;
		if (c->rstate == RS_BODY && c->resp.close_delimited) {
			c->rstate = RS_DONE;
			c->cli_keep_alive = 0;
			fwd_finish(c);
		} else if (c->rstate == RS_HEAD && c->up.bytes == 0) {
			refuse(c, 502, CF_R_BAD_UPSTREAM_RESPONSE, c->dec.rule,
			    "upstream closed the connection without answering");
		} else {
			conn_free(c, "upstream closed mid-response");
		}
		break;
	default:
		break;
	}
}

/* ---- accept ------------------------------------------------------------- */

void
px_conn_accept(struct px_listener *l, int fd, const struct sockaddr *sa, int salen)
{
	struct px_server *srv = l->srv;
	struct px_conn *c;
	unsigned held = 0;
	int over = 0;

	(void)salen;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	c->srv = srv;
	c->state = CS_HEAD;
	c->pid = c->uid = -1;
	snprintf(c->session, sizeof(c->session), "%s", l->session);
	c->cfg = cf_config_ref(srv->cfg);
	c->generation = srv->generation;
	c->sess = cf_config_find_session(c->cfg, c->session);
	event_base_gettimeofday_cached(srv->base, &c->started);
	c->last_activity = c->started;
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	px_stats_conn_open(srv->metrics, c->session);

	if (sa->sa_family == AF_UNIX) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		c->is_unix = 1;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
			c->pid = cred.pid;
			c->uid = cred.uid;
			snprintf(c->peer, sizeof(c->peer), "unix:pid=%ld,uid=%ld", c->pid, c->uid);
		} else {
			snprintf(c->peer, sizeof(c->peer), "unix");
		}
	} else {
		char a[INET6_ADDRSTRLEN];
		sa_text(sa, a, sizeof(a));
		if (sa->sa_family == AF_INET)
			snprintf(c->peer, sizeof(c->peer), "%s:%u", a,
			    ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port));
		else
			snprintf(c->peer, sizeof(c->peer), "[%s]:%u", a,
			    ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port));
	}

	/* The session's share, and the peer uid's within it, are checked
	 * here, before the request head: a client over its share is answered
	 * at once, so it never waits, and it never counts against
	 * [proxy] max_connections, so refusing it never fills the proxy for
	 * the other sessions. */
	if (c->sess != NULL)
		over = px_share_take(&srv->shares, c->session, c->is_unix ? c->uid : -1,
		    c->sess->max_connections, c->sess->max_connections_per_uid, &c->share_sess,
		    &c->share_uid, &held);
	if (over == 0) {
		c->counted = 1;
		srv->nconns++;
		px_conn_limit_check(srv);
	} else if (srv->nrefusing < REFUSING_MAX) {
		c->linger = 1;
		srv->nrefusing++;
	}

	evutil_make_socket_nonblocking(fd);
	c->cli.bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(srv->base, timer_cb, c);
	if (c->cli.bev == NULL || c->timer == NULL || over == -ENOMEM) {
		if (c->cli.bev == NULL)
			close(fd);
		conn_free(c, "out of memory");
		return;
	}
	bufferevent_priority_set(c->cli.bev, PX_PRI_BULK);
	event_priority_set(c->timer, PX_PRI_BULK);
	if (over != 0) {
		char detail[200];
		if (over == -EDQUOT)
			snprintf(detail, sizeof(detail), "session %s holds %u connections, its "
			    "max_connections", c->session, held);
		else
			snprintf(detail, sizeof(detail), "uid %ld holds %u connections in session %s, "
			    "its max_connections_per_uid", c->uid, held, c->session);
		arm_timer(c, LINGER_MS);
		refuse(c, 503, over == -EDQUOT ? CF_R_SESSION_CONNECTION_LIMIT :
		    CF_R_UID_CONNECTION_LIMIT, NULL, detail);
		return;
	}
	bufferevent_setcb(c->cli.bev, cli_read_cb, cli_write_cb, cli_event_cb, c);
	/* Writing is enabled from birth and the write event is added when
	 * output arrives; enabling EV_WRITE on an empty buffer would only add
	 * and remove an epoll registration for nothing. */
	bufferevent_enable(c->cli.bev, EV_READ);
	c->head_timer_armed = 1;
	arm_timer(c, cf_config_proxy(srv->cfg)->header_timeout_ms);
}

/*
 * revoke = yes: after a reload, close every tunnel whose target the new
 * rules refuse (its session gone counts as refused), logging each; a
 * WebSocket after its 101 is a tunnel too (RFC 9110 §7.8).  Other plain
 * HTTP connections need nothing: their next request is judged anew, and an
 * idle upstream vetted under an older snapshot is never reused.
 */
void
px_conn_revoke(struct px_server *srv)
{
	struct px_conn *c, *next;

	for (c = TAILQ_FIRST(&srv->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->state != CS_TUNNEL && c->state != CS_SNI)
			continue;
		(void)revoke_tunnel(c, 0);
	}
}

unsigned
px_server_open_conns(const struct px_server *srv, const char *name, uint64_t *up, uint64_t *down)
{
	const struct px_conn *c;
	unsigned n = 0;

	*up = *down = 0;
	TAILQ_FOREACH(c, &srv->conns, entry) {
		if (name != NULL && strcmp(c->session, name) != 0)
			continue;
		n++;
		*up += c->cli.bytes;
		*down += c->up.bytes;
	}
	return n;
}
