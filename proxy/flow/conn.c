/*
 * proxy/flow/conn.c: the connection itself, under every step of the flow
 * (conn.h): its phases and timer, its refusals (the answer, the human
 * line), and its close, which gives back everything it holds.  The steps
 * above (accept.c, decide.c, forward.c, tunnel.c) call down into it; it
 * calls back up only through the phase callbacks they install.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "base/text.h"
#include "conf/config.h"
#include "proxy/policy/ask.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/h2.h"
#include "proxy/flow/conns.h"
#include "proxy/flow/connect.h"
#include "proxy/proto/dns.h"
#include "proxy/policy/grants.h"
#include "proxy/core/io.h"
#include "proxy/core/log.h"
#include "proxy/core/loopcall.h"
#include "proxy/core/mem.h"
#include "proxy/core/prio.h"
#include "proxy/proto/sni.h"
#include "proxy/proto/socks.h"
#include "proxy/flow/splice.h"
#include "proxy/admin/stats.h"
#include "proxy/policy/summary.h"
#include "proxy/flow/notice.h"
#include "proxy/core/decider.h"
#include "proxy/flow/mint.h"

/* ---- small helpers ------------------------------------------------------ */

/* The address of SA as text (no port), into BUF of SIZE bytes. */
char *
px_conn_sa_text(const struct sockaddr *sa, char *buf, size_t size)
{
	buf[0] = '\0';
	if (sa->sa_family == AF_INET && size >= INET_ADDRSTRLEN)
		bs_ipv4_text(&((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf);
	else if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf, (socklen_t)size);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf, (socklen_t)size);
	return buf;
}

void
px_conn_touch(struct px_conn *c)
{
	event_base_gettimeofday_cached(px_server_base(c->srv), &c->last_activity);
}

long
px_conn_ms_since(const struct timeval *then, const struct timeval *now)
{
	return (now->tv_sec - then->tv_sec) * 1000L + (now->tv_usec - then->tv_usec) / 1000L;
}

void
px_conn_arm_timer(struct px_conn *c, unsigned ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_add(c->timer, &tv);
}

const struct cf_proxy_settings *
px_conn_settings(const struct px_conn *c)
{
	return cf_config_proxy(px_server_config(c->srv));
}

void
px_conn_host_text(const struct px_conn *c, char *buf, size_t size)
{
	cf_host_format(&c->req.host, buf, size);
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
		px_conn_free(c, NULL);
		return;
	}
	if (c->linger == 1) {
		c->linger = 2;
		shutdown(bufferevent_getfd(c->cli.bev), SHUT_WR);
	}
}

int
px_conn_side_event(struct px_conn *c, struct conn_side *s, short what)
{
	if (what & BEV_EVENT_ERROR) {
		px_conn_free(c, s == &c->cli ? "client error" : "upstream error");
		return -1;
	}
	if (!(what & BEV_EVENT_EOF))
		return 0;
	s->eof = 1;
	return 1;
}

/* A client error, or its EOF while nothing is relayed: close. */
void
px_conn_event_close(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (px_conn_side_event(c, &c->cli, what) > 0)
		px_conn_free(c, NULL);
}

/*
 * What is still to go out to the client: under TLS (a terminated tunnel)
 * the filter's output and the socket's below it, which the filter fills
 * and the kernel drains after the filter's own write callback has run.
 */
static size_t
cli_unsent(const struct px_conn *c)
{
	struct bufferevent *under = bufferevent_get_underlying(c->cli.bev);

	return evbuffer_get_length(bufferevent_get_output(c->cli.bev)) +
	    (under != NULL ? evbuffer_get_length(bufferevent_get_output(under)) : 0);
}

int
px_conn_cli_send(struct px_conn *c, const void *data, size_t len)
{
	return px_io_bev_send(c->cli.bev, data, len);
}

int
px_conn_send_buffer(struct conn_side *s, struct evbuffer *src, size_t n)
{
	return px_io_bev_send_buffer(s->bev, src, n);
}

ssize_t
px_conn_cli_recv(struct px_conn *c)
{
	return px_io_bev_read_now(c->cli.bev);
}

/* The proxy's own read of the client is on. */
static int
cli_own_on(const struct px_conn *c)
{
	return c->cli_own != NULL && event_pending(c->cli_own, EV_READ, NULL);
}

/* Stop reading the client with the proxy's own event (kept for the
 * connection's next wait); BEV_READS: its bufferevent reads again
 * (enabled before the event goes, so the fd's epoll registration stays
 * as it is, unchanged in the changelist). */
static void
cli_own_stop(struct px_conn *c, int bev_reads)
{
	if (bev_reads)
		bufferevent_enable(c->cli.bev, EV_READ);
	event_del(c->cli_own);
}

static void
cli_own_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_conn *c = arg;
	ssize_t n;

	(void)fd;
	(void)what;
	px_loopcall_check();
	n = px_conn_cli_recv(c);
	if (n == -EAGAIN)
		return;
	if (n == -ENOMEM) {
		/* The bufferevent's own read meets what is there. */
		cli_own_stop(c, 1);
		return;
	}
	/* What bufferevent_readcb() does: the read callback for bytes, the
	 * event callback with the read disabled for EOF or an error. */
	cli_own_stop(c, n > 0);
	if (n > 0) {
		if (c->phase->cli_read != NULL)
			c->phase->cli_read(c->cli.bev, c);
		return;
	}
	if (n < 0)
		errno = (int)-n;
	if (c->phase->cli_event != NULL)
		c->phase->cli_event(c->cli.bev,
		    BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
}

void
px_conn_cli_read_own(struct px_conn *c)
{
	struct bufferevent *bev = c->cli.bev;
	size_t low = 0, high = 0;

	if (cli_own_on(c) || bev == NULL || bufferevent_get_underlying(bev) != NULL ||
	    !(bufferevent_get_enabled(bev) & EV_READ) ||
	    evbuffer_get_length(bufferevent_get_input(bev)) > 0)
		return;
	if (bufferevent_getwatermark(bev, EV_READ, &low, &high) != 0 || low > 1 || high != 0)
		return;
	/* Made once a connection: its socket is the same for every wait. */
	if (c->cli_own == NULL) {
		c->cli_own = event_new(bufferevent_get_base(bev), bufferevent_getfd(bev),
		    EV_READ | EV_PERSIST, cli_own_read_cb, c);
		if (c->cli_own == NULL)
			return;
		(void)event_priority_set(c->cli_own, PX_PRI_BULK);
	}
	/* Added before the bufferevent's read is disabled: the fd keeps its
	 * epoll registration, no epoll_ctl(2) either way. */
	if (event_add(c->cli_own, NULL) != 0)
		return;
	bufferevent_disable(bev, EV_READ);
}

static void
closing_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	if (cli_unsent(c) == 0)
		closing_flushed(c);
}

/* The socket under a TLS client drained: tell closing_write_cb(), from
 * the loop (the socket's bufferevent is in the middle of its write). */
static void
under_drained_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct px_conn *c = arg;

	if (info->n_deleted > 0 && evbuffer_get_length(buf) == 0)
		bufferevent_trigger(c->cli.bev, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
}

static void
closing_timeout(struct px_conn *c)
{
	px_conn_free(c, "timeout");
}

/* Flushing the last bytes to the client; lingering: and throwing away
 * what it still sends. */
static const struct px_phase closing_phase = {
	.name = "closing", .cli_write = closing_write_cb, .cli_event = px_conn_event_close,
	.timeout = closing_timeout,
};
static const struct px_phase lingering_phase = {
	.name = "lingering", .cli_read = linger_read_cb, .cli_write = closing_write_cb,
	.cli_event = px_conn_event_close, .timeout = closing_timeout,
};

void
px_conn_up_gone(struct px_conn *c)
{
	c->up.eof = 1;
	if (c->up.bev != NULL) {
		bufferevent_free(c->up.bev);
		c->up.bev = NULL;
	}
}

void
px_conn_held_up_read(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (c->up.bytes == 0) {
		px_conn_up_gone(c);
		return;
	}
	px_conn_free(c, "upstream spoke between requests");
}

void
px_conn_held_up_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		px_conn_up_gone(arg);
}

/* Bytes the client sent that will not be read: in its input beyond the
 * head just refused (a plain socket: under TLS the filter's own
 * close_notify ends the connection).  What is still in the kernel is not
 * asked for (an ioctl(2) on every refusal's close); when the client's
 * bytes are arriving, the last read left some in the input. */
static int
cli_unread(const struct px_conn *c)
{
	return bufferevent_get_underlying(c->cli.bev) == NULL &&
	    evbuffer_get_length(bufferevent_get_input(c->cli.bev)) > c->req.head_judged;
}

void
px_conn_close_after_write(struct px_conn *c)
{
	if (c->up.bev != NULL) {
		bufferevent_free(c->up.bev);
		c->up.bev = NULL;
	}
	bufferevent_setwatermark(c->cli.bev, EV_WRITE, 0, 0);
	/* RFC 9112 §9.6: closing with bytes of the client's unread (a
	 * pipelined request behind a refusal, the rest of a head too large)
	 * makes the kernel send a reset, and a reset can destroy the answers
	 * still on their way to the client.  Shut down writing and throw
	 * away what it sends for a while instead, as a refusal at accept
	 * does. */
	if (!c->linger && cli_unread(c))
		(void)px_conns_linger(c);
	if (c->linger) {
		px_conn_enter(c, &lingering_phase);
		bufferevent_enable(c->cli.bev, EV_READ);
		px_conn_arm_timer(c, LINGER_MS);
	} else {
		bufferevent_disable(c->cli.bev, EV_READ);
		px_conn_enter(c, &closing_phase);
	}
	if (bufferevent_get_underlying(c->cli.bev) != NULL)
		evbuffer_add_cb(bufferevent_get_output(bufferevent_get_underlying(c->cli.bev)),
		    under_drained_cb, c);
	if (cli_unsent(c) == 0)
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
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Timeout";
	case 421: return "Misdirected Request";
	case 429: return "Too Many Requests";
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
void
px_conn_refuse_ex(struct px_conn *c, int status, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail, int audited)
{
	char body[2048], sugg[512], h[CF_HOST_TEXT_MAX], what[600], msg[2048 + 512];
	struct bs_str b;
	size_t n;

	if (!audited) {
		if (c->req.decided) {
			/* Allowed, then failed upstream: the close line says so. */
			c->close_why = cf_reason_code(reason);
			free(c->close_detail);
			c->close_detail = detail != NULL ? strdup(detail) : NULL;
		} else {
			px_record_decision(c, 0, reason, rule, detail, NULL);
		}
	}
	px_notice_words(c, reason, rule, sugg, sizeof(sugg), what, sizeof(what), h, sizeof(h));
	/* Appended, not printf()'d: a refusal is the most frequent answer
	 * a misbehaving client gets, and the formats cost a third of it. */
	bs_str_init(&b, body, sizeof(body));
	bs_str_add(&b, "postern refused this request: ");
	bs_str_add(&b, cf_reason_code(reason));
	bs_str_addn(&b, "\n", 1);
	bs_str_add(&b, what);
	bs_str_addn(&b, "\n", 1);
	if (detail != NULL)
		bs_str_add(&b, detail);
	bs_str_addn(&b, "\n", 1);
	if (sugg[0]) {
		bs_str_add(&b, "To allow it, an admin can ");
		bs_str_add(&b, sugg);
		bs_str_addn(&b, "\n", 1);
	}
	bs_str_add(&b, "(session ");
	bs_str_add(&b, c->session);
	bs_str_add(&b, ", config ");
	bs_str_add(&b, cf_config_path(px_server_config(c->srv)));
	bs_str_add(&b, ", generation ");
	bs_str_uint(&b, px_server_generation(c->srv));
	bs_str_add(&b, ")\n");
	n = b.len < sizeof(body) ? b.len : sizeof(body) - 1;
	if (px_server_human(c->srv) && !audited)
		px_notice_human(c, 0, reason, detail, sugg, what, h);
	if (c->socks && (c->tun == NULL || !c->tun->connect_answered)) {
		/* A SOCKS5 client reads a SOCKS5 answer: to its greeting, "no
		 * acceptable method" (RFC 1928 §3); to its request, the reply
		 * code (§6); and the connection closes once it is out. */
		unsigned char r[PX_SOCKS_REPLY_LEN];

		if (c->socks == 1) {
			r[0] = PX_SOCKS_VERSION;
			r[1] = 0xFF;
			px_conn_cli_send(c, r, 2);
		} else if (c->socks == 4) {
			/* RFC 1929 §2: the username/password failed. */
			r[0] = 0x01;
			r[1] = 0x01;
			px_conn_cli_send(c, r, 2);
		} else {
			px_conn_cli_send(c, r, px_socks_reply(r, c->req.socks_rep ? c->req.socks_rep :
			    px_socks_rep_for(status, reason)));
		}
		px_conn_close_after_write(c);
		return;
	}
	/* The head and the body in one buffer, one add. */
	bs_str_init(&b, msg, sizeof(msg));
	bs_str_add(&b, "HTTP/1.1 ");
	bs_str_int(&b, status);
	bs_str_addn(&b, " ", 1);
	bs_str_add(&b, status_text(status));
	bs_str_add(&b, "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ");
	bs_str_uint(&b, n);
	bs_str_add(&b, "\r\nX-Postern-Reason: ");
	bs_str_add(&b, cf_reason_code(reason));
	bs_str_add(&b, "\r\nCache-Control: no-store\r\nConnection: close\r\n");
	/* RFC 9110 §11.7.1: a 407 names the scheme to answer with. */
	if (status == 407)
		bs_str_add(&b, "Proxy-Authenticate: Basic realm=\"postern\"\r\n");
	/* RFC 6585 §4, RFC 9110 §10.2.3: when a budget frees up. */
	if (c->req.retry_after != 0) {
		bs_str_add(&b, "Retry-After: ");
		bs_str_uint(&b, c->req.retry_after);
		bs_str_addn(&b, "\r\n", 2);
	}
	bs_str_addn(&b, "\r\n", 2);
	bs_str_addn(&b, body, n);
	px_conn_cli_send(c, msg, b.len < sizeof(msg) ? b.len : sizeof(msg) - 1);
	px_conn_close_after_write(c);
}

void
px_conn_refuse(struct px_conn *c, int status, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail)
{
	px_conn_refuse_ex(c, status, reason, rule, detail, 0);
}

void
px_pool_drop(struct pooled *p)
{
	if (p->bev != NULL)
		bufferevent_free(p->bev);
	memset(p, 0, sizeof(*p));
}

void
px_conn_free(struct px_conn *c, const char *why)
{
	struct px_server *srv = c->srv;
	struct px_rec r = { .event = "close", .why = why };
	struct timeval now;
	size_t i;

	/* An HTTP/2 relay's open streams get their request lines first. */
	if (c->tm != NULL) {
		px_h2_free(c->tm->h2);
		c->tm->h2 = NULL;
	}
	px_record_pending_allow(c);
	if (why == NULL && c->close_why != NULL) {
		r.why = c->close_why;
		r.detail = c->close_detail;
	}
	px_record(c, &r);
	event_base_gettimeofday_cached(px_server_base(srv), &now);

	/* A connection that never got a session was never counted open. */
	if (c->auth != PX_AUTH_PENDING)
		px_stats_conn_close(px_server_stats(srv), c->session, c->cli.bytes, c->up.bytes,
		    px_conn_ms_since(&c->started, &now) / 1000.0,
		    c->req.mode == CF_MODE_CONNECT && c->req.addr[0]);

	px_budget_release(c->budget, 1);
	px_ask_leave(c->req.askw);
	px_decider_cancel(c->req.dq);
	px_mint_wait_cancel(c->req.mintw);
	px_dns_cancel(c->req.dnsq);
	px_connect_cancel(c->req.connector);
	if (c->tun != NULL) {
		px_splice_free(c->tun->spl);
		px_sni_free(c->tun->sni);
		free(c->tun);
	}
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->cli_own != NULL)
		event_free(c->cli_own);
	if (c->cli.bev != NULL)
		bufferevent_free(c->cli.bev);
	if (c->up.bev != NULL)
		bufferevent_free(c->up.bev);
	if (c->fwd != NULL) {
		for (i = 0; c->fwd->pool != NULL && i < POOL_MAX; i++)
			px_pool_drop(&c->fwd->pool[i]);
		free(c->fwd->pool);
		if (c->fwd->pending != NULL)
			evbuffer_free(c->fwd->pending);
		free(c->fwd);
	}
	free(c->req.lk);
	free(c->hdrs);
	free(c->close_detail);
	if (c->leak_free != NULL)
		c->leak_free(c->leak);
	if (c->tm != NULL) {
		px_budget_release(c->tm->req_budget, 0);
		for (i = 0; i < 2; i++)
			if (c->tm->flush[i] != NULL)
				event_free(c->tm->flush[i]);
		px_scrub_free(c->tm->scrub);
		px_bph_req_free(c->tm->rp);
		if (c->tm->plain != NULL)
			evbuffer_free(c->tm->plain);
		free(c->tm);
	}
	cf_config_free(c->cfg);
	px_conns_remove(c);
	px_mem_bin_put(PX_BIN_CONN, c);
}

void
px_conn_close_all(struct px_server *srv)
{
	struct px_conn *c;

	while ((c = px_conns_first(srv)) != NULL)
		px_conn_free(c, "shutdown");
}

/* ---- phases and timers -------------------------------------------------- */

void
px_conn_enter(struct px_conn *c, const struct px_phase *ph)
{
	c->phase = ph;
	if (cli_own_on(c))
		cli_own_stop(c, 1);
	if (c->cli.bev != NULL)
		bufferevent_setcb(c->cli.bev, ph->cli_read, ph->cli_write, ph->cli_event, c);
	if (c->up.bev != NULL)
		bufferevent_setcb(c->up.bev, ph->up_read, ph->up_write, ph->up_event, c);
}

void
px_conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)fd;
	(void)what;
	c->phase->timeout(c);
}

void
px_conn_idle_timeout(struct px_conn *c)
{
	const struct cf_proxy_settings *p = px_conn_settings(c);
	struct timeval now;
	long idle;

	event_base_gettimeofday_cached(px_server_base(c->srv), &now);
	idle = px_conn_ms_since(&c->last_activity, &now);
	if (idle >= (long)p->idle_timeout_ms) {
		px_conn_free(c, "idle_timeout");
		return;
	}
	px_conn_arm_timer(c, (unsigned)(p->idle_timeout_ms - (unsigned long)idle));
}

/* ---- runtime grants and admins' answers ---------------------------------- */

/* The allowlist's own refusals: what report mode relaxes, mode = ask
 * holds, and a runtime grant answers.  Never a deny rule, an address, SNI,
 * the parser or a secret's binding. */
int
px_allowlist_refusal(enum cf_reason r)
{
	return r == CF_R_HOST_NOT_ALLOWED || r == CF_R_PORT_NOT_ALLOWED ||
	    r == CF_R_PATH_NOT_ALLOWED || r == CF_R_METHOD_NOT_ALLOWED;
}

/*
 * An admin decides C's request (an answer, or a grant one left): allowed
 * with no rule (so no "private"; BY, the host's own rule that refused
 * another port, path or method, still says whether its address may be
 * private, as for report mode), or refused with denied_by_admin.
 */
void
px_conn_admin_decides(struct px_conn *c, int allow, const struct cf_rule *by, const char *how)
{
	struct cf_decision *d = &c->req.dec;

	d->allow = allow;
	d->reason = allow ? CF_R_ALLOWED : CF_R_DENIED_BY_ADMIN;
	d->rule = NULL;
	d->would = CF_R_ALLOWED;
	d->would_rule = allow ? by : NULL;
	snprintf(d->detail, sizeof(d->detail), "%s", how);
	c->req.granted = allow;
}

/*
 * Runtime grants (grants.h) speak where the allowlist refused C's request,
 * or in report mode would have, in every mode: an admin's allow is a rule
 * added at run time, and a deny is kept even in report mode, as a deny
 * rule is.  An expired grant is dropped and says nothing.
 */
void
px_conn_grant(struct px_conn *c)
{
	struct cf_decision *d = &c->req.dec;
	enum cf_reason why = d->allow ? d->would : d->reason;
	const struct cf_rule *by = d->allow ? d->would_rule : d->rule;
	const struct px_grant *g;
	char h[CF_HOST_TEXT_MAX], how[CF_HOST_TEXT_MAX + 200];

	if (!px_allowlist_refusal(why) || px_server_grants(c->srv) == NULL)
		return;
	px_conn_host_text(c, h, sizeof(h));
	g = px_grants_find(px_server_grants(c->srv), c->session, h, c->req.port, time(NULL));
	if (g == NULL)
		return;
	snprintf(how, sizeof(how), "%s by a runtime grant: an admin (uid %ld) answered %s for session %s",
	    g->kind == PX_GRANT_ALLOW ? "allowed" : "denied", g->uid,
	    px_grant_kind_word(g->kind), c->session);
	px_conn_admin_decides(c, g->kind == PX_GRANT_ALLOW, by, how);
}

/* Placeholders are cut from the path before anything shows it. */
void
px_conn_redact_path(struct px_conn *c)
{
	size_t i, n = cf_session_nsecrets(c->sess);

	for (i = 0; i < n; i++) {
		const char *ph = cf_session_placeholder(c->sess, i);
		char *at = ph != NULL && ph[0] ? strstr(c->req.path, ph) : NULL;

		if (at != NULL)
			snprintf(at, sizeof(c->req.path) - (size_t)(at - c->req.path), "[placeholder]");
	}
}
