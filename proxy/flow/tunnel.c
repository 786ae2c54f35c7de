/*
 * proxy/flow/tunnel.c: the CONNECT tunnel, the relay step of the flow for a
 * CONNECT (decide.c hands it a connected upstream): the SNI hold, which
 * keeps the client's first flight until its ClientHello names the CONNECT
 * host, then bytes both ways with back-pressure, handed to the splice(2)
 * relay once nothing is buffered in user space.  A WebSocket after its
 * 101 (forward.c) is relayed here too.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <event2/bufferevent_ssl.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "conf/config.h"
#include "conf/inject.h"
#include "conf/secret.h"
#include "proxy/flow/awssign.h"
#include "proxy/flow/leakscan.h"
#include "proxy/flow/conn.h"
#include "proxy/core/io.h"
#include "proxy/core/log.h"
#include "proxy/core/loopcall.h"
#include "proxy/core/prio.h"
#include "proxy/tls/registry.h"
#include "proxy/proto/sni.h"
#include "proxy/proto/socks.h"
#include "proxy/flow/replace.h"
#include "proxy/flow/splice.h"
#include "proxy/flow/minthold.h"
#include "proxy/policy/summary.h"
#include "proxy/flow/notice.h"
#include "proxy/tls/tlsup.h"

static const struct px_phase tunnel_phase, sni_phase;
static void term_start(struct px_conn *c);

/* ---- relaying ----------------------------------------------------------- */

/*
 * A WebSocket's bytes from the upstream of a terminated tunnel, scanned
 * for the values bound there (scrub.h): how many of the N buffered at IN
 * may go now.  Returns -EPROTO after closing C: frames no scan can read.
 */
static long
ws_scrub(struct px_conn *c, struct evbuffer *in, size_t n)
{
	struct px_scrub *s = px_term_scrub(c);
	const char *name = NULL;
	unsigned char *p;
	size_t masked = 0;
	long go;

	if (s == NULL || n == 0)
		return (long)n;
	if ((p = evbuffer_pullup(in, (ev_ssize_t)n)) == NULL ||
	    (go = px_scrub_ws(s, &c->tm->ws, p, n, c->up.eof, &masked, &name)) == -ENOMEM) {
		px_conn_free(c, "out of memory");
		return -ENOMEM;
	}
	if (go < 0) {
		px_conn_free(c, "websocket frames the reflection scan cannot read (masked or compressed)");
		return -EPROTO;
	}
	if (masked > 0)
		px_term_reflected(c, masked, name, "websocket");
	return go;
}

/*
 * Pass everything buffered from FROM on to TO, counting it as FROM's; from
 * the client, never more than its byte budget leaves.  Over it,
 * the rest is dropped, the client is read no more, and the tunnel closes
 * once what was allowed is out (tunnel_write_cb()).  Returns 0, or a
 * negative errno when C is gone.
 */
static int
pass_buffered(struct px_conn *c, struct conn_side *from, struct conn_side *to)
{
	struct evbuffer *in = bufferevent_get_input(from->bev);
	struct px_budget *b = from == &c->cli ? px_conn_up_budget(c) : NULL;
	size_t n = evbuffer_get_length(in);

	if (c->term && from == &c->cli) {
		if ((in = px_replace_ws(c, in)) == NULL)
			return -EPROTO;
		n = evbuffer_get_length(in);
	}
	/* Only a terminated tunnel relays here after a 101: the bytes a
	 * reflection scan holds back stay in IN for the next pass. */
	if (c->term && from == &c->up) {
		long go = ws_scrub(c, in, n);

		if (go < 0)
			return (int)go;
		n = (size_t)go;
	}

	if (b != NULL && n > 0) {
		uint64_t now = px_budget_now_ms(), left = px_budget_up_left(b, now);

		if (left < n) {
			n = (size_t)left;
			if (!c->tun->budget_over) {
				c->tun->budget_over = 1;
				px_budget_up_exceeded(b);
			}
		}
		px_budget_up_take(b, now, n);
	}
	from->bytes += n;
	/* At once when TO's socket takes them (the first flight held for
	 * the SNI check, typically), not a loop pass later. */
	(void)px_conn_send_buffer(to, in, n);
	if (c->tun->budget_over && from == &c->cli) {
		evbuffer_drain(in, evbuffer_get_length(in));
		bufferevent_disable(from->bev, EV_READ);
		bufferevent_setwatermark(to->bev, EV_WRITE, 0, 0);
		/* The write callback closes the tunnel, from the loop, once
		 * the output is empty (it may be already). */
		bufferevent_trigger(to->bev, EV_WRITE, BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	}
	return 0;
}

/*
 * Move everything readable from FROM to TO, stopping FROM while TO's output
 * is over RELAY_HIGH; TO's write callback resumes it (le-proxy's scheme).
 * Returns 0, or -1 when C is gone (frames no scan or rewrite passes).
 */
static int
relay(struct px_conn *c, struct conn_side *from, struct conn_side *to)
{
	if (evbuffer_get_length(bufferevent_get_input(from->bev)) == 0)
		return 0;
	px_conn_touch(c);
	if (pass_buffered(c, from, to) < 0)
		return -1;
	if (!c->tun->budget_over)
		(void)px_conn_throttle(from, to);
	return 0;
}

/* Half-close: after EOF from FROM and once its bytes are flushed, TO's
 * write half is shut (so an HTTP client that shuts its write side still
 * gets its whole answer). */
static void
shut_when_flushed(struct conn_side *from, struct conn_side *to)
{
	if (to->bev != NULL && from->eof && to->shut_pending &&
	    evbuffer_get_length(bufferevent_get_output(to->bev)) == 0) {
		to->shut_pending = 0;
		/* Under TLS the socket is the filter's: no half-close. */
		if (bufferevent_get_underlying(to->bev) == NULL)
			shutdown(bufferevent_getfd(to->bev), SHUT_WR);
	}
}

/* Both directions; the tunnel ends once both sides sent EOF and both
 * write halves are shut. */
static void
maybe_shutdown(struct px_conn *c)
{
	shut_when_flushed(&c->cli, &c->up);
	shut_when_flushed(&c->up, &c->cli);
	if (c->cli.eof && c->up.eof && !c->up.shut_pending && !c->cli.shut_pending)
		px_conn_free(c, NULL);
}

static void
splice_done_cb(int err, void *arg)
{
	struct px_conn *c = arg;

	if (err == EDQUOT && px_conn_up_budget(c) != NULL) {
		px_budget_up_exceeded(px_conn_up_budget(c));
		px_conn_free(c, cf_reason_code(CF_R_BUDGET_EXCEEDED));
		return;
	}
	px_conn_free(c, err == 0 ? NULL : strerror(err));
}

/* The splice relay's byte budget from the client (px_splice_set_quota()). */
static uint64_t
splice_quota(void *arg, uint64_t took)
{
	struct px_conn *c = arg;
	struct px_budget *b = px_conn_up_budget(c);
	uint64_t now = px_budget_now_ms();

	if (b == NULL)
		return UINT64_MAX;
	px_budget_up_take(b, now, took);
	return px_budget_up_left(b, now);
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

	/* A terminated tunnel's bytes are TLS records the proxy makes: they
	 * cannot be spliced. */
	if (c->cli.eof || c->up.eof || c->term || c->tun->budget_over)
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
	c->tun->spl = px_splice_new(px_server_base(c->srv), cfd, ufd, &c->cli.bytes, &c->up.bytes,
	    &c->last_activity, splice_done_cb, c);
	if (c->tun->spl == NULL)
		return -1;
	if (px_conn_up_budget(c) != NULL && px_conn_up_budget(c)->up_max != 0)
		px_splice_set_quota(c->tun->spl, splice_quota, c);
	/* The relay owns the sockets now: the bufferevents let go of them.
	 * bufferevent_setfd() assigns their events afresh, at libevent's
	 * default priority, PX_PRI_CONTROL; their finalizers run at the
	 * events' priority, and at PX_PRI_CONTROL they would take a loop
	 * pass of their own (an epoll_wait(2) more a tunnel, and the
	 * relay's first bytes a pass later).  At PX_PRI_BULK they run in
	 * this pass, behind this callback. */
	bufferevent_setfd(c->cli.bev, -1);
	bufferevent_setfd(c->up.bev, -1);
	(void)bufferevent_priority_set(c->cli.bev, PX_PRI_BULK);
	(void)bufferevent_priority_set(c->up.bev, PX_PRI_BULK);
	bufferevent_free(c->cli.bev);
	bufferevent_free(c->up.bev);
	c->cli.bev = c->up.bev = NULL;
	c->tun->splice_pending = 0;
	return 0;
}

/* The buffered bytes are out (a write callback): switch if we can. */
static void
splice_retry(struct px_conn *c)
{
	int rc = tunnel_to_splice(c);

	if (rc <= 0 && c->tun->splice_pending && c->tun->spl == NULL) {
		/* Stay on bufferevents for good. */
		c->tun->splice_pending = 0;
		bufferevent_enable(c->cli.bev, EV_READ);
		bufferevent_enable(c->up.bev, EV_READ);
	}
}

/* Until the splice hand-off: read nothing more from S, and call its write
 * callback as soon as its output is out. */
static void
hold_for_splice(struct conn_side *s)
{
	bufferevent_setwatermark(s->bev, EV_WRITE, 0, 0);
	bufferevent_disable(s->bev, EV_READ);
	bufferevent_enable(s->bev, EV_WRITE);
}

static int
tunnel_start(struct px_conn *c)
{
	int rc;

	px_conn_enter(c, &tunnel_phase);
	if (!c->cli.eof && !c->up.eof) {
		/* Pass on what is buffered, reading nothing more meanwhile;
		 * the write callbacks switch to splice once it is out. */
		if (pass_buffered(c, &c->cli, &c->up) < 0 || pass_buffered(c, &c->up, &c->cli) < 0)
			return -1;
		rc = tunnel_to_splice(c);
		if (rc == 0)
			return 0;
		if (rc == 1) {
			c->tun->splice_pending = 1;
			hold_for_splice(&c->cli);
			hold_for_splice(&c->up);
			return 0;
		}
	}
	bufferevent_enable(c->cli.bev, EV_READ);
	bufferevent_enable(c->up.bev, EV_READ);
	if (!c->cli.eof)
		return relay(c, &c->cli, &c->up);
	maybe_shutdown(c);
	return 0;
}

/* ---- the SNI check ------------------------------------------------------ */

/* The first flight must be complete header_timeout after FROM. */
static void
sni_set_deadline(struct px_conn *c, const struct timeval *from)
{
	unsigned ms = px_conn_settings(c)->header_timeout_ms;
	struct timeval d = { (time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000) };

	timeradd(from, &d, &c->tun->sni_deadline);
}

/* Answer the CONNECT once (RFC 9110 §9.3.6: any 2xx means the tunnel is
 * open), and start the SNI deadline there. */
static void
connect_answer(struct px_conn *c)
{
	struct timeval now;

	if (c->tun->connect_answered)
		return;
	c->tun->connect_answered = 1;
	if (c->socks) {
		/* RFC 1928 §6: succeeded, bound to 0.0.0.0:0 (socks.h). */
		unsigned char r[PX_SOCKS_REPLY_LEN];
		px_conn_cli_send(c, r, px_socks_reply(r, PX_SOCKS_REP_OK));
	} else {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		px_conn_cli_send(c, ok, sizeof(ok) - 1);
	}
	event_base_gettimeofday_cached(px_server_base(c->srv), &now);
	sni_set_deadline(c, &now);
}

static void
sni_step(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	size_t len = evbuffer_get_length(in);
	enum px_sni_result r;
	enum cf_sni_mode mode = px_conn_settings(c)->sni;
	struct cf_host name;
	char got_name[CF_HOST_TEXT_MAX];
	const char *why = NULL;
	int pass = 0;

	if (len > c->tun->sni_fed && c->tun->sni_fed == 0) {
		/* The first bytes: the deadline counts from the 200, or from
		 * now when the client stayed silent past it (a silent tunnel
		 * holds nothing; the idle timeout governs it). */
		struct timeval now;
		event_base_gettimeofday_cached(px_server_base(c->srv), &now);
		if (px_conn_ms_since(&c->tun->sni_deadline, &now) >= 0)
			sni_set_deadline(c, &now);
	}
	if (len > c->tun->sni_fed && c->tun->sni == NULL) {
		c->tun->sni = px_sni_new(SNI_MAX_BYTES);
		if (c->tun->sni == NULL) {
			px_conn_free(c, "out of memory");
			return;
		}
	}
	if (len > c->tun->sni_fed) {
		size_t want = len > SNI_MAX_BYTES + 1 ? SNI_MAX_BYTES + 1 : len;
		unsigned char *data;
		if (want <= c->tun->sni_fed) {
			r = PX_SNI_TOO_BIG;
			goto decide;
		}
		data = evbuffer_pullup(in, (ev_ssize_t)want);
		if (data == NULL) {
			px_conn_free(c, "out of memory");
			return;
		}
		r = px_sni_feed(c->tun->sni, data + c->tun->sni_fed, want - c->tun->sni_fed);
		c->tun->sni_fed = want;
		px_conn_touch(c);
	} else if (c->cli.eof) {
		r = c->tun->sni_fed == 0 ? PX_SNI_NOT_TLS : PX_SNI_BAD;
	} else {
		connect_answer(c);
		/* The first flight: one recv(2), not the bufferevent's two
		 * system calls. */
		px_conn_cli_read_own(c);
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
			event_base_gettimeofday_cached(px_server_base(c->srv), &now);
			left = -px_conn_ms_since(&c->tun->sni_deadline, &now);
			px_conn_arm_timer(c, left > 0 ? (unsigned)left : 1);
		}
		bufferevent_disable(c->cli.bev, EV_READ);
		bufferevent_enable(c->cli.bev, EV_READ);
		return;
	case PX_SNI_HELLO:
		if (px_sni_name(c->tun->sni, &name) == 1) {
			/* A name that spells a secret: refused, and never shown
			 * (a mismatch's line would show it). */
			if (px_leakscan_host(c, name.name, c->req.port, 0)) {
				px_conn_free(c, NULL);
				return;
			}
			if (cf_host_equal(&name, &c->req.host))
				pass = 1;
			else
				why = "the TLS server_name differs from the CONNECT host";
		} else if (mode == CF_SNI_STRICT && !c->term) {
			why = "sni = strict and the ClientHello carries no server_name";
		} else {
			pass = 1;
		}
		break;
	case PX_SNI_NOT_TLS:
		if (c->term)
			why = "TLS is terminated for this host, and the first bytes are not a TLS ClientHello";
		else if (mode == CF_SNI_STRICT)
			why = "sni = strict and the first bytes are not a TLS ClientHello";
		else
			pass = 1;
		break;
	case PX_SNI_BAD:
	case PX_SNI_TOO_BIG:
	default:
		why = c->tun->sni != NULL ? px_sni_why(c->tun->sni) : NULL;
		if (why == NULL)
			why = "malformed ClientHello";
		break;
	}
	if (!pass) {
		char got[CF_HOST_TEXT_MAX];

		got[0] = '\0';
		if (r == PX_SNI_HELLO && px_sni_name(c->tun->sni, &name) == 1)
			cf_host_format(&name, got, sizeof(got));
		c->req.allow_pending = 0;
		px_record_decision(c, 0, CF_R_SNI_MISMATCH, c->req.dec.rule, why, got);
		if (px_server_human(c->srv)) {
			char h[CF_HOST_TEXT_MAX], where[CF_HOST_TEXT_MAX + 8];
			px_conn_host_text(c, h, sizeof(h));
			snprintf(where, sizeof(where), "%s:%u", h, c->req.port);
			if (px_summary_add(px_server_tally(c->srv), where, "sni_mismatch", NULL) == 1)
				px_notice_printf("refused the tunnel to %s:%u: sni_mismatch (%s%s%s)", h,
				    c->req.port, why, got[0] ? ": " : "", got);
		}
		/* The held bytes never reach upstream: drop them with the tunnel.
		 * When the whole ClientHello came before the proxy answered
		 * (pipelined with the CONNECT), the client still reads HTTP:
		 * answer 403 so it can tell a refusal from a crash. */
		if (!c->tun->connect_answered) {
			px_sni_free(c->tun->sni);
			c->tun->sni = NULL;
			px_conn_refuse_ex(c, 403, CF_R_SNI_MISMATCH, c->req.dec.rule, why, 1);
			return;
		}
		px_conn_free(c, "sni_mismatch");
		return;
	}
	got_name[0] = '\0';
	if (r == PX_SNI_HELLO && px_sni_name(c->tun->sni, &name) == 1)
		cf_host_format(&name, got_name, sizeof(got_name));
	px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, c->term ? "TLS terminated" : NULL, got_name);
	if (r == PX_SNI_HELLO && c->term) {
		int a = px_sni_alpn(c->tun->sni);
		c->tm->alpn = a > 0 ? a : 0;
	}
	px_sni_free(c->tun->sni);
	c->tun->sni = NULL;
	connect_answer(c);
	px_conn_arm_timer(c, px_conn_settings(c)->idle_timeout_ms);
	if (c->term) {
		term_start(c);
		return;
	}
	tunnel_start(c);
}

/* ---- the tunnel's callbacks -------------------------------------------- */

/*
 * One callback per event for both sides: each finds its side from BEV,
 * so every step is written once, from one side to the other.
 */

/* Bytes arrived on a side: pass them to the other one. */
static void
tunnel_read_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;
	struct conn_side *from = px_conn_side_of(c, bev);

	px_loopcall_check();
	relay(c, from, px_conn_other(c, from));
}

/* A side drained, so the other side may be read again (the client's, in
 * the SNI hold too); or the splice hand-off waited for it. */
static void
tunnel_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	px_loopcall_check();
	if (c->tun->budget_over) {
		/* Over the byte budget: closed once what it allowed is out. */
		if (bev == c->up.bev && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			px_conn_free(c, cf_reason_code(CF_R_BUDGET_EXCEEDED));
		return;
	}
	if (c->tun->splice_pending) {
		splice_retry(c);
		return;
	}
	(void)px_conn_resume(c, px_conn_side_of(c, bev), 1);
	maybe_shutdown(c);
}

/* An error closes the tunnel; EOF passes on what is left, and the other
 * side's write half is shut once it is flushed. */
static void
tunnel_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;
	struct conn_side *from = px_conn_side_of(c, bev);
	struct conn_side *to = px_conn_other(c, from);

	if (px_conn_side_event(c, from, what) <= 0)
		return;
	if (relay(c, from, to) < 0)
		return;
	to->shut_pending = 1;
	if (c->phase == &sni_phase && !to->eof) {
		/* Only upstream's events come here in the SNI hold: it is
		 * gone before the client spoke, so there is nothing to check. */
		to->eof = 1;
		from->shut_pending = 0;
	}
	maybe_shutdown(c);
}

/* Relaying both ways. */
static const struct px_phase tunnel_phase = {
	.name = "tunnel",
	.cli_read = tunnel_read_cb, .cli_write = tunnel_write_cb,
	.cli_event = tunnel_event_cb,
	.up_read = tunnel_read_cb, .up_write = tunnel_write_cb,
	.up_event = tunnel_event_cb,
	.timeout = px_conn_idle_timeout, .tunnel = 1,
};

/* ---- the SNI hold's callbacks ------------------------------------------ */

static void
sni_cli_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	px_loopcall_check();
	sni_step(arg);
}

/* Upstream drained; the client's reads are the SNI step's to govern. */
static void
sni_up_write_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	(void)px_conn_resume(c, &c->up, 0);
}

static void
sni_cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (px_conn_side_event(c, &c->cli, what) > 0)
		sni_step(c);
}

/* A ClientHello begun and not finished by its deadline is cut; a silent
 * tunnel holds nothing, and the idle timeout governs it. */
static void
sni_timeout(struct px_conn *c)
{
	if (c->tun->sni_fed > 0) {
		px_conn_free(c, "sni_timeout");
		return;
	}
	px_conn_idle_timeout(c);
}

/* Tunnel open, holding the client's first flight for the SNI check;
 * upstream's bytes flow to the client meanwhile. */
static const struct px_phase sni_phase = {
	.name = "sni",
	.cli_read = sni_cli_read_cb, .cli_write = tunnel_write_cb,
	.cli_event = sni_cli_event_cb,
	.up_read = tunnel_read_cb, .up_write = sni_up_write_cb,
	.up_event = tunnel_event_cb,
	.timeout = sni_timeout, .tunnel = 1,
};

/* ---- TLS termination --------------------------------------------------- */

/*
 * A terminated tunnel: after the SNI check the proxy speaks verified TLS
 * to the upstream, then to the client with a leaf of the session's CA, and
 * judges each decrypted request on its own.  The upstream comes first so
 * that its failure reaches the client as an HTTP 502.  ALPN: the upstream
 * is offered h2 only if the client offered it, and the client gets what
 * the upstream chose, so both sides speak one protocol.
 */

/* The ex_data slot of a client-side SSL that holds the protocol to select
 * (a static string: "h2" or "http/1.1"), or NULL to select none. */
static int alpn_idx = -1;
/* Taken once for every worker (worker.h). */
static pthread_once_t alpn_once = PTHREAD_ONCE_INIT;

static void
alpn_idx_init(void)
{
	alpn_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

/*
 * The client-side ALPN choice.  The leaf contexts are shared by every
 * tunnel to a host (proxy/tls/ca), so the choice is the connection's, read
 * from its SSL's ex_data: the protocol the upstream picked, when the
 * client offered it; otherwise no ALPN at all (RFC 7301 §3.2 allows the
 * server to ignore the extension; the client then speaks HTTP/1.1).
 */
static int
alpn_select_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	const char *want = alpn_idx >= 0 ? SSL_get_ex_data(ssl, alpn_idx) : NULL;
	size_t wl = want != NULL ? strlen(want) : 0;
	unsigned int i = 0;

	(void)arg;
	while (wl > 0 && i < inlen) {
		unsigned int l = in[i];

		if (l == 0 || l > inlen - i - 1)
			break;
		if (l == wl && memcmp(in + i + 1, want, wl) == 0) {
			*out = in + i + 1;
			*outlen = (unsigned char)l;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + l;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

/* Nonzero when a secret of C's session is bound to the tunnel's host and
 * port as a query parameter: its injection rewrites the target, which
 * only the HTTP/1.1 path does, so such a tunnel is not offered h2. */
static int
term_has_query_binding(const struct px_conn *c)
{
	size_t i, k, n = cf_session_nsecrets(c->sess);

	for (i = 0; i < n; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);

		for (k = 0; k < cf_secret_ninject(sec); k++) {
			const struct cf_inject *inj = cf_secret_inject(sec, k);

			if (inj->kind == CF_INJECT_QUERY && inj->port == c->tm->port &&
			    strcmp(inj->host, c->tm->host.name) == 0)
				return 1;
		}
	}
	return 0;
}

static void term_cli_event_cb(struct bufferevent *bev, short what, void *arg);
static void term_up_event_cb(struct bufferevent *bev, short what, void *arg);

/* An upstream handshake in progress: the client waits for its ServerHello. */
static const struct px_phase term_up_phase = {
	.name = "tls-upstream", .cli_event = px_conn_event_close,
	.up_event = term_up_event_cb, .timeout = px_conn_idle_timeout, .tunnel = 1,
};

/* The client's handshake in progress. */
static const struct px_phase term_cli_phase = {
	.name = "tls-client", .cli_event = term_cli_event_cb,
	.up_event = term_up_event_cb, .timeout = px_conn_idle_timeout, .tunnel = 1,
};

/* The first error of the OpenSSL queue of BEV as text, or FALLBACK. */
static const char *
tls_error_text(struct bufferevent *bev, const char *fallback)
{
	unsigned long e, last = 0;
	const char *r;

	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		if (last == 0)
			last = e;
	r = last != 0 ? ERR_reason_error_string(last) : NULL;
	return r != NULL ? r : fallback;
}

/*
 * The socket under a TLS filter.  libevent 2.1 reads at most 4 KiB a call,
 * one call a loop pass: a 16 KiB record took four passes.  After a read
 * that filled the 4 KiB, px_io_bev_topup() (io.h) reads on at once,
 * before the filter decrypts.
 */
#define TERM_WRITE_MAX (256 * 1024)

/*
 * Written at once, for the socket under a TLS filter.  libevent would wait
 * for EPOLLOUT first: two epoll_ctl(2) and a loop pass for each write.
 * term_out_cb() runs this later in the same pass, so all that the pass
 * sealed goes out in one writev(2) with EV_WRITE left off.  What the
 * kernel does not take goes the usual way, through the bufferevent.
 */
static void
term_flush(struct bufferevent *bev)
{
	struct bufferevent *under = bev != NULL ? bufferevent_get_underlying(bev) : NULL;
	struct evbuffer *out;

	if (under == NULL || bufferevent_getfd(under) < 0)
		return;
	out = bufferevent_get_output(under);
	bufferevent_disable(under, EV_WRITE);
	if (evbuffer_get_length(out) > 0)
		(void)px_io_bev_write_now(under, TERM_WRITE_MAX);
	if (evbuffer_get_length(out) > 0 || evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		bufferevent_enable(under, EV_WRITE);
}

/* ARG is the conn's side (c->cli or c->up): its bufferevent is read
 * when the flush runs, so one replaced or freed meanwhile is never used. */
static void
term_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	const struct conn_side *side = arg;

	(void)fd;
	(void)what;
	term_flush(side->bev);
}

static void
term_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	(void)buf;
	if (info->n_added > 0 && info->orig_size == 0)
		event_active(arg, EV_WRITE, 0);
}

/* Fewer, fuller reads and writes on the socket UNDER a TLS filter; SIDE
 * 0 the client's, 1 the upstream's.  0, or -ENOMEM. */
static int
term_socket(struct px_conn *c, struct bufferevent *under, int side)
{
	struct event *ev = c->tm->flush[side];

	if (ev == NULL) {
		ev = event_new(px_server_base(c->srv), -1, 0, term_flush_cb,
		    side == 0 ? &c->cli : &c->up);
		if (ev == NULL)
			return -ENOMEM;
		/* With the sockets' events: activated from their callbacks,
		 * it joins the queue being run instead of cutting the pass
		 * short. */
		(void)event_priority_set(ev, PX_PRI_BULK);
		c->tm->flush[side] = ev;
	}
	(void)px_io_bev_topup(under);
	/* Added after the socket bufferevent's own, so it runs first. */
	evbuffer_add_cb(bufferevent_get_output(under), term_out_cb, ev);
	bufferevent_set_max_single_write(under, TERM_WRITE_MAX);
	/* The filter seals what it is given at most WRITE_FRAME (15,000)
	 * bytes a pass unless the socket's output has a high watermark: a
	 * 16 KiB chain left as a record of 15,000 bytes and one of 1,384.
	 * With one, it seals up to what the socket may still take. */
	bufferevent_setwatermark(under, EV_WRITE, 0, TERM_WRITE_MAX);
	return 0;
}

/*
 * Whole records out, for the TLS filter BEV.  The filter decrypts into
 * 4 KiB pieces and the other side seals each piece as a record of its
 * own: twice the records (and SSL_write calls) a bulk stream needs.  While
 * at least TERM_ROOM_MIN bytes wait under the filter, term_room_cb() gives
 * the input room for TERM_READ_MAX in one chain, so full records go out.
 * Not a read watermark: one makes the filter read again from inside
 * whatever drains its input.
 */
#define TERM_READ_MAX (64 * 1024)
#define TERM_ROOM_MIN (16 * 1024)

static void
term_room_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct bufferevent *under = bufferevent_get_underlying(arg);
	size_t waiting;

	/* Once a reader took everything (there is nothing to copy into the
	 * new room then), or after a piece decrypted behind more than 8 KiB
	 * (evbuffer_expand() copies up to 4 KiB into a larger chain when
	 * the last one holds no more). */
	if (under == NULL || (info->n_added == 0 ? evbuffer_get_length(buf) != 0 :
	    evbuffer_get_length(buf) <= 8192))
		return;
	waiting = evbuffer_get_length(bufferevent_get_input(under));
	if (waiting >= TERM_ROOM_MIN)
		(void)evbuffer_expand(buf, waiting < TERM_READ_MAX ? waiting : TERM_READ_MAX);
}

static void
term_filter(struct bufferevent *bev)
{
	/* On the filter's own input: it goes with the filter. */
	evbuffer_add_cb(bufferevent_get_input(bev), term_room_cb, bev);
}

/* Wrap the client's socket in TLS with the session's leaf for the tunnel's
 * host, and feed it the ClientHello held for the SNI check. */
static void
term_client_start(struct px_conn *c)
{
	SSL_CTX *ctx = px_tlsreg_leaf(px_server_tls(c->srv), c->session, c->tm->host.name);
	struct bufferevent *under = c->cli.bev, *bev;
	struct evbuffer *held;
	SSL *ssl;

	if (ctx == NULL) {
		log_warnx("session %s: no certificate for %s: %s", c->session, c->tm->host.name,
		    strerror(errno));
		px_conn_free(c, "no certificate for the terminated host");
		return;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select_cb, NULL);
	ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);
	held = evbuffer_new();
	if (ssl != NULL && alpn_idx >= 0 && (c->tm->alpn & (c->tm->is_h2 ? PX_SNI_ALPN_H2 :
	    PX_SNI_ALPN_HTTP11)))
		SSL_set_ex_data(ssl, alpn_idx, (void *)(c->tm->is_h2 ? "h2" : "http/1.1"));
	if (ssl == NULL || held == NULL) {
		SSL_free(ssl);
		evbuffer_free(held);
		px_conn_free(c, "out of memory");
		return;
	}
	/* The held bytes leave the socket's buffer while the filter is made
	 * (it tries a handshake at once, and an error then would find no
	 * callback to tell), and come back once the callbacks are in place. */
	evbuffer_add_buffer(held, bufferevent_get_input(under));
	bev = bufferevent_openssl_filter_new(px_server_base(c->srv), under, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		evbuffer_free(held);
		px_conn_free(c, "out of memory");
		return;
	}
	c->cli.bev = bev;
	if (term_socket(c, under, 0) < 0) {
		evbuffer_free(held);
		px_conn_free(c, "out of memory");
		return;
	}
	term_filter(bev);
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	px_conn_enter(c, &term_cli_phase);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	evbuffer_prepend_buffer(bufferevent_get_input(under), held);
	evbuffer_free(held);
	/* C may be gone after this: the handshake's callback may close it. */
	bufferevent_trigger(under, EV_READ, 0);
}

static void
term_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	if (c->term == 2) {
		/* Open, between requests (accept.c's head phase has its own):
		 * nothing to do here. */
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		SSL *ssl = bufferevent_openssl_get_ssl(bev);
		const unsigned char *p = NULL;
		unsigned int pl = 0;

		c->tm->fail[0] = '\0';
		if (ssl != NULL)
			SSL_get0_alpn_selected(ssl, &p, &pl);
		c->tm->is_h2 = pl == 2 && memcmp(p, "h2", 2) == 0;
		term_client_start(c);
		return;
	}
	if (!(what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)))
		return;
	if (c->phase == &term_up_phase) {
		SSL *ssl = bufferevent_openssl_get_ssl(bev);
		long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;

		/* Verification is the usual failure; otherwise whatever
		 * OpenSSL or the socket said. */
		snprintf(c->tm->fail, sizeof(c->tm->fail), "TLS to the upstream failed: %s",
		    v != X509_V_OK ? px_tlsup_reason(v) :
		    tls_error_text(bev, (what & BEV_EVENT_EOF) ? "it closed during the handshake" :
		    "handshake failed"));
		px_conn_up_gone(c);
		term_client_start(c);
		return;
	}
	/* The upstream went away during the client's handshake: the first
	 * request will find it gone. */
	px_conn_up_gone(c);
}

static void
term_cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	if (what & BEV_EVENT_CONNECTED) {
		SSL *ssl = bufferevent_openssl_get_ssl(bev);
		const unsigned char *p = NULL;
		unsigned int pl = 0;

		c->term = 2;
		if (ssl != NULL)
			SSL_get0_alpn_selected(ssl, &p, &pl);
		if (c->tm->is_h2 && pl == 2 && memcmp(p, "h2", 2) == 0) {
			/* Both sides chose h2: one relay for every stream. */
			px_h2tunnel_start(c);
			return;
		}
		/* The decrypted stream: read as plain HTTP from here on.  An
		 * upstream that chose h2 and a client that did not is no
		 * pair: the select callback never lets that happen. */
		if (c->tm->is_h2) {
			px_conn_free(c, "ALPN: the client did not take h2");
			return;
		}
		c->next_request(c);
		return;
	}
	if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
		const char *why = tls_error_text(bev, "the client closed during the handshake");

		free(c->close_detail);
		c->close_detail = strdup(why);
		c->close_why = "client TLS handshake failed";
		px_conn_free(c, NULL);
	}
}

/* The SNI check passed: TLS to the upstream, verified, first. */
static void
term_start(struct px_conn *c)
{
	SSL_CTX *uctx = px_tlsreg_upstream(px_server_tls(c->srv));
	struct bufferevent *bev;
	SSL *ssl;
	int offer_h2;

	c->tm->host = c->req.host;
	c->tm->port = c->req.port;
	pthread_once(&alpn_once, alpn_idx_init);
	/* h2 upstream only when the client offered it (and no query binding
	 * needs the HTTP/1.1 path): a client that speaks HTTP/1.1 only must
	 * not be left with an upstream that chose h2.  Nor with a decider:
	 * only HTTP/1.1 requests are held for its answer. */
	offer_h2 = (c->tm->alpn & PX_SNI_ALPN_H2) && !term_has_query_binding(c) && !px_replace_binds(c) &&
	    !px_awssign_host(c) && !px_minthold_bound(c) && c->sess->decider == NULL;
	c->tm->is_h2 = 0;
	ssl = uctx != NULL ? SSL_new(uctx) : NULL;
	if (ssl == NULL || px_tlsup_prepare(ssl, c->tm->host.name) != 0 ||
	    (offer_h2 ? SSL_set_alpn_protos(ssl, (const unsigned char *)"\x02h2\x08http/1.1", 12) :
	    SSL_set_alpn_protos(ssl, (const unsigned char *)"\x08http/1.1", 9)) != 0) {
		SSL_free(ssl);
		px_conn_free(c, "cannot set up TLS to the upstream");
		return;
	}
	/* The ClientHello stays in the client's buffer until the upstream's
	 * handshake is over. */
	bufferevent_disable(c->cli.bev, EV_READ);
	if (term_socket(c, c->up.bev, 1) < 0) {
		SSL_free(ssl);
		px_conn_free(c, "out of memory");
		return;
	}
	bev = bufferevent_openssl_filter_new(px_server_base(c->srv), c->up.bev, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		px_conn_free(c, "out of memory");
		return;
	}
	c->up.bev = bev;
	term_filter(bev);
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	px_conn_enter(c, &term_up_phase);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

/* ---- entry points ------------------------------------------------------ */

int
px_tunnel_terminates(const struct px_conn *c)
{
	return c->sess != NULL && c->req.host.kind == CF_HOST_NAME && px_server_tls(c->srv) != NULL &&
	    cf_session_terminates(c->sess, c->req.host.name, c->req.port);
}

const char *
px_tunnel_closed_detail(const struct px_conn *c, const char *plain)
{
	if (c->term && c->tm != NULL && c->up.bytes == 0 && !(c->tm->alpn & PX_SNI_ALPN_H2))
		return "the upstream closed the connection before answering the tunnel's first "
		    "request; if it speaks HTTP/2 only, the client must offer h2 (this one offered "
		    "http/1.1 only, and postern does not translate)";
	return plain;
}

/* C's tunnel state, made when its tunnel opens: 0, or -1 when out of
 * memory. */
static int
tun_begin(struct px_conn *c)
{
	if (c->tun == NULL && (c->tun = calloc(1, sizeof(*c->tun))) == NULL)
		return -1;
	return 0;
}

void
px_tunnel_open(struct px_conn *c)
{
	if (tun_begin(c) != 0) {
		px_conn_free(c, "out of memory");
		return;
	}
	/* A terminated tunnel always holds the first flight: its
	 * ClientHello is the start of the handshake with the proxy. */
	c->term = px_tunnel_terminates(c);
	if (c->term && c->tm == NULL && (c->tm = calloc(1, sizeof(*c->tm))) == NULL) {
		px_conn_free(c, "out of memory");
		return;
	}
	if (px_conn_settings(c)->sni == CF_SNI_OFF && !c->term) {
		px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, NULL, NULL);
		connect_answer(c);
		tunnel_start(c);
		return;
	}
	/* The inspector (an OpenSSL object of several KiB) is made when
	 * the client's first bytes arrive, so an idle tunnel stays small. */
	px_conn_enter(c, &sni_phase);
	c->req.allow_pending = 1;
	/* Upstream may speak first (SMTP, SSH servers): its bytes flow
	 * to the client; only the client's are held for the check. */
	bufferevent_enable(c->up.bev, EV_READ);
	bufferevent_enable(c->cli.bev, EV_READ);
	/* The 200 is written by sni_step(), unless a whole ClientHello
	 * that fails the check is already here (pipelined): then 403. */
	sni_step(c);
}

void
px_tunnel_upgrade(struct px_conn *c)
{
	if (tun_begin(c) != 0) {
		px_conn_free(c, "out of memory");
		return;
	}
	if (tunnel_start(c) < 0)
		return;
	if (c->tun->spl == NULL)
		(void)relay(c, &c->up, &c->cli);
}
