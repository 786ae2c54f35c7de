/*
 * proxy/flow/conn.h: one client connection, shared by the files that handle its
 * phases; internal to proxy/flow/.  The flow, one file per step, each calling
 * only the ones below it (callbacks in struct px_phase and
 * px_conn.next_request lead back up):
 *
 *   accept.c   accept, the request head            -> decide.c
 *   decide.c   the decision, the lookup, connect   -> tunnel.c, forward.c
 *   forward.c  plain HTTP: keep-alive, upstream pool -> tunnel.c (101)
 *   tunnel.c   CONNECT: the SNI hold, relay, splice
 *   conn.c     the connection itself: refusals, timers, close
 *   conns.c    the server's set of them: count, shares, pause (conns.h)
 *   record.c   the audit record of every event
 *
 * The connection owns everything it starts (bufferevents, timer, DNS query,
 * connector, SNI inspector, idle upstreams) and cancels all of it in
 * px_conn_free(), so no callback can fire into freed memory.
 */
#ifndef POSTERN_PROXY_CONN_H
#define POSTERN_PROXY_CONN_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/util.h>

#include "conf/config.h"
#include "proxy/policy/budget.h"
#include "proxy/proto/dns.h"
#include "proxy/proto/http.h"
#include "proxy/proto/scrub.h"
#include "proxy/proto/bodyph.h"
#include "proxy/core/server.h"

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

struct px_conn;
struct px_ask_wait;
struct px_decider_q;

/* px_conn.auth. */
enum {
	PX_AUTH_NONE = 0,          /* the listener's session, no credential */
	PX_AUTH_PENDING,           /* auth=token listener, no session yet */
	PX_AUTH_HEADER,            /* bound by Proxy-Authorization: each request carries it */
	PX_AUTH_PREFACE,           /* bound by the bridge's POSTERN-TOKEN line */
};
/* The session field of a connection that has no session yet. */
#define PX_AUTH_NOSESSION "(unauthenticated)"

/*
 * A phase of the connection: the callbacks of its two bufferevents and of
 * its timer while it is in that phase.  px_conn_enter() installs them, so
 * that no callback switches on a state.  TUNNEL: bytes flow both ways
 * unjudged (a CONNECT, a WebSocket after its 101), so revoke = yes judges
 * it again after a reload.
 */
struct px_phase {
	const char *name;
	bufferevent_data_cb cli_read, cli_write;
	bufferevent_event_cb cli_event;
	bufferevent_data_cb up_read, up_write;
	bufferevent_event_cb up_event;
	void (*timeout)(struct px_conn *c);
	int tunnel;
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
	struct cf_host host;       /* the host and port it is for */
	uint16_t port;
	char addr[INET6_ADDRSTRLEN + 8];
	union peer_sa peer;
	unsigned long generation;
	const struct cf_rule *rule;
	int parent;                /* a connection to the parent proxy */
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
	int keep_alive;
	int chunked;
	struct px_chunked ch;
	int64_t left;              /* Content-Length bytes still to pass */
	int close_delimited;       /* response: the body ends at EOF */
	int done;                  /* request: the body is all passed */
};

/*
 * The current request: what describes, decides and follows one request on
 * the connection, and nothing that outlives it.  It is zeroed whole when
 * the first bytes of its head arrive (accept.c, handle_head()), so no
 * field of one request is ever read for the next one; until then, on an
 * idle keep-alive connection, it is the last request, which the close
 * line names.  Its pointers (DNSQ, CONNECTOR, LK, ASKW) are NULL again by
 * then: each is let go when its step ends, and px_conn_free() cancels one
 * still running.
 */
struct px_request {
	/*
	 * Reading its head (accept.c): where the parse of a head still
	 * incomplete stopped (proxy/proto/http.h), the next read resuming
	 * there (parsed again from its start on every read, a head sent one
	 * byte at a time would cost CPU in the square of its length); and,
	 * once it is judged, its bytes at the start of the client's input
	 * until it is consumed (px_decide()): they are no bytes the client
	 * sent unread when a refusal closes (px_conn_close_after_write()).
	 */
	struct px_http_resume rs;
	size_t head_judged;

	enum cf_mode mode;
	char method[24];
	struct cf_host host;
	uint16_t port;
	char path[256];
	char addr[INET6_ADDRSTRLEN + 8];
	struct cf_decision dec;
	/* Its decision line is written (px_record_decision()), or waits for
	 * the SNI check (allow_pending); a failure after it is told in the
	 * close line instead (px_conn.close_why). */
	int decided, allow_pending;
	struct px_dns_query *dnsq;
	struct px_connector *connector;
	struct lookup *lk;         /* addresses, only while connecting */
	/* Inside a terminated tunnel: the byte counts at its start and the
	 * status of its answer, for its request line. */
	uint64_t up0, down0;
	int resp_status;
	/* The Retry-After seconds of its refusal (a budget's), or 0. */
	unsigned retry_after;
	/*
	 * mode = ask (proxy/policy/ask.h): ASKW while it is held on a
	 * question (px_conn_free() leaves it); ASK_ID, the question it was
	 * held on (0: not asked) and ASK_ANSWER, the answer (enum
	 * px_ask_answer), for its decision line.  GRANTED: allowed by a
	 * runtime grant or an admin's answer, not by a rule.
	 */
	struct px_ask_wait *askw;
	unsigned ask_id;
	int ask_answer;
	int granted;
	/* decider = (proxy/core/decider.h): DQ while its question is out;
	 * DECIDER, its answer plus one (0: not asked), for its decision line. */
	struct px_decider_q *dq;
	int decider;
	/* A minted token waited for (proxy/flow/minthold.h): the wait, the
	 * secret's index, what goes on after, and how many holds so far. */
	struct px_mint_wait *mintw;
	size_t mint_sec;
	void (*mint_resume)(struct px_conn *c);
	int mint_tries;
	/* SOCKS5: the reply code of its refusal when set (an errno of the
	 * connect says more than the refusal's status). */
	int socks_rep;
	/* The parent proxy it goes through (conf/parent.h; the snapshot's),
	 * set when it is looked up; NULL: direct.  VIA_PARENT: its
	 * addresses passed and the parent is asked (its audit lines name
	 * the parent). */
	const struct cf_parent *parent;
	int via_parent;
};

/*
 * The forward path (forward.c): plain HTTP, and the requests inside a
 * terminated tunnel.  Made by px_forward_begin() for the connection's
 * first such request, kept for the next ones (its idle upstreams, its
 * head buffer), freed with the connection.  The request's message and
 * the response's are set anew by each request.
 */
struct px_fwd {
	struct conn_msg req, resp;
	/* Where the parse of a response head still incomplete stopped (as
	 * px_request.rs for the request's).  Zero: no head in progress. */
	struct px_http_resume resp_rs;
	int req_is_head, req_upgrade, req_minor;
	int resp_dechunk;          /* decode a chunked answer for HTTP/1.0 */
	enum resp_state rstate;
	int cli_keep_alive;
	struct evbuffer *pending;  /* the upstream head, built at parse time */
	struct pooled *pool;       /* POOL_MAX idle upstreams, made on first use */
};

/*
 * A tunnel (tunnel.c): a CONNECT or SOCKS5 CONNECT once connected, a
 * WebSocket after its 101.  Made when the tunnel opens (px_tunnel_open(),
 * px_tunnel_upgrade()), freed with the connection.
 */
struct px_tun {
	struct px_splice *spl;     /* the zero-copy relay, once switched */
	int splice_pending;        /* waiting for buffered bytes to go out */
	int connect_answered;      /* the 200 (or SOCKS5 success) is written */
	struct px_sni *sni;
	size_t sni_fed;
	struct timeval sni_deadline; /* the first flight is complete by then */
	/* A relay on bufferevents went over the byte budget and closes once
	 * what was allowed is flushed. */
	int budget_over;
};

/*
 * A client connection: what lives as long as its socket.  The request it
 * is on is REQ; the state of the mode it is in (FWD, TUN, TM) is made when
 * that mode begins and freed with it.
 */
struct px_conn {
	TAILQ_ENTRY(px_conn) entry;
	struct px_server *srv;
	struct conn_side cli;      /* the client's half */
	struct conn_side up;       /* the upstream's half, once connected */
	union peer_sa up_peer;     /* the upstream's address, once connected */
	const struct px_phase *phase;
	/* After a keep-alive answer: read the next request head (accept.c). */
	void (*next_request)(struct px_conn *c);
	struct event *timer;
	/* Reading the client's next bytes itself (px_conn_cli_read_own()):
	 * made at the first wait, added while one lasts. */
	struct event *cli_own;
	/* In the head phase (accept.c): a head began, so its header_timeout
	 * runs (else the idle timeout does, between two requests). */
	int head_timer_armed;
	struct timeval last_activity;
	struct timeval started;

	/* Who. */
	char session[72];
	char peer[96];
	long pid, uid;
	int is_unix;
	int nodelay;                   /* TCP_NODELAY set on the client socket */
	/* An auth=token listener's (auth.h): PX_AUTH_PENDING until a
	 * credential names SESSION, then how it was presented. */
	int auth;
	/* What it holds of its session's and its uid's share (conncount.c),
	 * whether it counts against [proxy] max_connections (a refusal over a
	 * share does not: it must not fill the proxy for everyone else), and
	 * whether it lingers after its refusal (1) or has shut down its
	 * writing side and now only drains (2). */
	struct px_conncount *share_sess, *share_uid;
	int counted;
	int linger;
	/* Accepted while the proxy was full and over a share only because
	 * of it: it waits for a slot unread, as it would have in the backlog
	 * (conns.c). */
	TAILQ_ENTRY(px_conn) wait_entry;
	int waiting;
	unsigned requests;         /* read so far, the current one included */

	/* The snapshot that decided the current request. */
	struct cf_config *cfg;
	const struct cf_session *sess;
	unsigned long generation;

	struct px_request req;
	/* The header table every request head is parsed into. */
	struct px_http_header *hdrs;
	size_t nhdrs_cap;
	/* Why it closes, when a failure after the allow says so (made only
	 * then: an idle tunnel should stay small).  Set only where the
	 * connection then closes. */
	const char *close_why;
	char *close_detail;
	/* The leak scan of its requests (leakscan.h), made when needed, and
	 * what frees it (a callback: leakscan.c uses this module). */
	struct px_leakscan *leak;
	void (*leak_free)(struct px_leakscan *);

	struct px_fwd *fwd;
	struct px_tun *tun;
	/*
	 * TLS termination: a CONNECT to a host:port the session terminates.
	 * TERM: 1 once the tunnel is to be terminated, 2 once both
	 * handshakes are over and requests are read (cli.bev and up.bev are
	 * then TLS filters over the sockets); TM, made when the tunnel opens,
	 * holds the rest.
	 */
	int term;
	/*
	 * SOCKS5 (proxy/proto/socks.h, RFC 1928), told from HTTP by the first
	 * byte (accept.c): 0 for HTTP; 1 reading the greeting, 2 the
	 * request, 3 the request taken; 4 reading the username/password
	 * of an auth=token listener (RFC 1929, flow/auth.h).  Until the tunnel's connect_answered,
	 * the answer to it (success or refusal) is a SOCKS5 reply, not HTTP.
	 */
	int socks;
	struct px_term *tm;
	/*
	 * Budgets (proxy/policy/budget.h): BUDGET is held by the current
	 * tunnel or plain-HTTP request (a connection to the host), a
	 * terminated tunnel's requests holding its TM->req_budget instead (a
	 * request, no new connection); each NULL when its rule has none.
	 * The bytes sent up are charged to the one that applies
	 * (px_conn_up_budget()), the relay stopping at what is left.
	 */
	struct px_budget *budget;
};

/*
 * The state of a terminated tunnel: its host and port, fixed by the
 * CONNECT; why the upstream's handshake failed (every request is then a
 * 502); the secret injected into the current request (its name, for the
 * audit line); HTTP/2 (proxy/flow/h2tunnel.c): the protocols the ClientHello's
 * ALPN offered (PX_SNI_ALPN_*, read in the SNI hold), whether the upstream
 * chose h2 (then both sides speak it), and the relay.
 */
struct px_term {
	struct cf_host host;
	uint16_t port;
	/* The budget hold of the current request (decide.c), kept until the
	 * next request is judged. */
	struct px_budget *req_budget;
	int alpn;
	int is_h2;
	struct px_h2 *h2;
	char fail[160];
	char secret[72];        /* a secret name is at most 64 */
	char mint_secret[72];   /* the minted secret the request carries, and */
	unsigned long mint_gen; /* its token's generation (proxy/flow/mint.h) */
	int line_due;           /* an allowed HTTP/1.1 request's line is to be written */
	struct event *flush[2]; /* writes the socket under the client's (0), the upstream's (1) TLS */
	/* What no response may carry back (proxy/proto/scrub.h): the forms of the
	 * values bound here, by every snapshot since the tunnel opened
	 * (scrub_gen the last added); the current response's or WebSocket's
	 * scan state, and what it overwrote. */
	struct px_scrub *scrub;
	unsigned long scrub_gen;
	struct evbuffer *plain;     /* a chunked body, decoded, not yet passed on */
	struct px_scrub_state body;
	struct px_scrub_ws ws;
	size_t reflected;
	const char *reflected_name; /* the scrub's */
	const char *reflected_where;
	/* The current request's or WebSocket's placeholders to replace
	 * (proxy/flow/replace.c), or NULL. */
	struct px_bph_req *rp;
};

/* The budget the bytes C sends up now count against, or NULL. */
static inline struct px_budget *
px_conn_up_budget(const struct px_conn *c)
{
	return c->term ? c->tm->req_budget : c->budget;
}

/* ---- conn.c: the connection itself ---- */

/* The timer's callback: the current phase's timeout (ARG is the conn). */
void px_conn_timer_cb(evutil_socket_t fd, short what, void *arg);
/* A client bufferevent's event callback for phases that relay nothing:
 * an error or EOF closes the connection. */
void px_conn_event_close(struct bufferevent *bev, short what, void *arg);
/* Install phase PH: its callbacks on C's bufferevents (those it has) and
 * its timeout on C's timer. */
void px_conn_enter(struct px_conn *c, const struct px_phase *ph);
/* Write C's close line (WHY: why it closed, NULL for a plain end), give
 * back everything it holds, and free it.  C is gone on return. */
void px_conn_free(struct px_conn *c, const char *why);
/*
 * Refuse the current request: STATUS with a text/plain body for a person
 * and an agent, X-Postern-Reason for machines, the decision line (or, after
 * an allow, the close line's why), a human line, and close once written.
 * AUDITED: the caller has written the audit line and the human log line
 * itself (the SNI check, the revoke), so neither is written twice.
 */
void px_conn_refuse_ex(struct px_conn *c, int status, enum cf_reason reason,
    const struct cf_rule *rule, const char *detail, int audited);
void px_conn_refuse(struct px_conn *c, int status, enum cf_reason reason,
    const struct cf_rule *rule, const char *detail);
/* Drop the upstream, stop reading, flush what is queued to the client and
 * close (or linger, for a refusal at accept). */
/* Queue LEN bytes of DATA to the client, written at once when nothing
 * waits before them (px_io_bev_send(), io.h): a short answer (a 200, a
 * refusal) then costs one send(2) instead of a round trip through the
 * loop for EPOLLOUT, its two epoll_ctl(2) and a wake-up.  0, or -1 when
 * out of memory. */
int px_conn_cli_send(struct px_conn *c, const void *data, size_t len);
/* The same for the first N bytes of SRC, to side S (either one)
 * (px_io_bev_send_buffer()); they leave SRC either way.  0, or -1 when
 * out of memory. */
int px_conn_send_buffer(struct conn_side *s, struct evbuffer *src, size_t n);
/* One recv(2) into the client's input, as its bufferevent's own read would
 * add it (px_io_bev_read_now()).  The bytes read, 0 at EOF, or a negative
 * errno (-EAGAIN: nothing there). */
ssize_t px_conn_cli_recv(struct px_conn *c);
/*
 * The client's next read, while its input is empty: one recv(2) of the
 * proxy's own instead of the bufferevent's FIONREAD ioctl(2) and readv(2),
 * then the phase's cli_read as the bufferevent would call it (or its
 * cli_event at EOF or an error, with the read disabled, as it would;
 * io.h, 6).  Later reads are the bufferevent's again.  A client behind a
 * TLS filter, or with a read watermark, is left to its bufferevent.  The
 * bufferevent's read goes back on, as it was, at any phase change
 * (px_conn_enter()).
 */
void px_conn_cli_read_own(struct px_conn *c);
void px_conn_close_after_write(struct px_conn *c);
/* The upstream went away (or is let go) while C stays: its bufferevent
 * freed, and C->up marked at EOF for whatever asks next. */
void px_conn_up_gone(struct px_conn *c);
/*
 * The upstream callbacks of a phase that holds a request inside a
 * terminated tunnel (for a decider, a body to hash, a token): the
 * upstream may not speak between requests.  Before its first answer it
 * is let go (px_conn_up_gone()), and the request gets its 502 when it
 * goes on; after, the connection ends.  An upstream that closes is let go.
 */
void px_conn_held_up_read(struct bufferevent *bev, void *arg);
void px_conn_held_up_event(struct bufferevent *bev, short what, void *arg);
/* The idle timeout: close C when it was idle for idle_timeout, else arm
 * the timer for the rest. */
void px_conn_idle_timeout(struct px_conn *c);
/* Forget an idle upstream (freeing its bufferevent). */
void px_pool_drop(struct pooled *p);
/* Small helpers: the address of SA as text (no port); note activity; arm
 * C's timer for MS; the current [proxy] settings; C's host as text; the
 * milliseconds from THEN to NOW. */
char *px_conn_sa_text(const struct sockaddr *sa, char *buf, size_t size);
void px_conn_touch(struct px_conn *c);
void px_conn_arm_timer(struct px_conn *c, unsigned ms);
const struct cf_proxy_settings *px_conn_settings(const struct px_conn *c);
/* Cut C->req.path where a placeholder of C's session (C->sess, set) begins,
 * so that none is ever in an audit line, a log line or a refusal's body
 * (conn.c; decide.c and, for HTTP/2 streams, h2tunnel.c call it). */
void px_conn_redact_path(struct px_conn *c);
void px_conn_host_text(const struct px_conn *c, char *buf, size_t size);
/* Nonzero for the allowlist's own refusals (host, port, path or method
 * not allowed): what report mode relaxes, mode = ask holds and a runtime
 * grant answers; never a deny rule, an address, SNI, the parser or a
 * secret's binding. */
int px_allowlist_refusal(enum cf_reason r);
/* An admin decides C's request (an answer, or the grant one left): C->req.dec
 * becomes an allow with no rule (BY, the rule that refused it, still says
 * whether its address may be private) or a refusal, denied_by_admin, with
 * HOW as its detail. */
void px_conn_admin_decides(struct px_conn *c, int allow, const struct cf_rule *by, const char *how);
/* Where the allowlist refused C->req.dec (or, in report mode, would have), a
 * runtime grant for C's session, host and port (grants.h) decides it
 * instead (px_conn_admin_decides()); without one C->req.dec is left as is. */
void px_conn_grant(struct px_conn *c);
long px_conn_ms_since(const struct timeval *then, const struct timeval *now);

/* ---- the two sides (relayd's se_in/se_out) ---- */

/*
 * A relay step is written once, over the side bytes come FROM and the
 * side they go TO; a bufferevent callback finds its side from its BEV
 * argument.  These are inline: they run on every read of a relay.
 */

/* The side of C whose bufferevent is BEV (a callback's argument). */
static inline struct conn_side *
px_conn_side_of(struct px_conn *c, const struct bufferevent *bev)
{
	return bev == c->cli.bev ? &c->cli : &c->up;
}

/* The side of C facing S. */
static inline struct conn_side *
px_conn_other(struct px_conn *c, const struct conn_side *s)
{
	return s == &c->cli ? &c->up : &c->cli;
}

/* Back-pressure (le-proxy): once TO's output holds RELAY_HIGH, stop
 * reading FROM until TO's write callback finds it drained to half
 * (px_conn_resume()).  Returns 1 when it stopped FROM. */
static inline int
px_conn_throttle(struct conn_side *from, struct conn_side *to)
{
	if (evbuffer_get_length(bufferevent_get_output(to->bev)) < RELAY_HIGH)
		return 0;
	bufferevent_disable(from->bev, EV_READ);
	bufferevent_setwatermark(to->bev, EV_WRITE, RELAY_HIGH / 2, 0);
	return 1;
}

/* S's write callback: once S's output is below RELAY_HIGH, drop its write
 * watermark and, when MAY_READ and the other side has not sent EOF, read
 * the other side again.  Returns 1 when S was drained (and the other side
 * has a bufferevent), 0 when nothing changed. */
static inline int
px_conn_resume(struct px_conn *c, struct conn_side *s, int may_read)
{
	struct conn_side *o = px_conn_other(c, s);

	if (o->bev == NULL || evbuffer_get_length(bufferevent_get_output(s->bev)) >= RELAY_HIGH)
		return 0;
	bufferevent_setwatermark(s->bev, EV_WRITE, 0, 0);
	if (may_read && !o->eof)
		bufferevent_enable(o->bev, EV_READ);
	return 1;
}

/* The start of every event callback on side S of C (conn.c): an error
 * closes C, "client error" or "upstream error" by S, and returns -1 (C is
 * gone); an event that is not EOF returns 0 (nothing to do); EOF marks S
 * (S->eof) and returns 1. */
int px_conn_side_event(struct px_conn *c, struct conn_side *s, short what);

/* ---- record.c: the audit record ---- */

/*
 * One audit record, by name (smokescreen's one decision line): every line
 * the proxy writes for a connection is built by px_record() from the
 * connection and these fields, so that a decision, a revoke and a close
 * name the same things the same way.  NULL and zero fields are left out.
 */
struct px_rec {
	const char *event;         /* "decision", "revoke" or "close" */
	const char *decision;      /* decision: "allow" or "deny" */
	int has_reason;
	enum cf_reason reason;     /* decision, revoke */
	const struct cf_rule *rule;
	const char *sni;           /* the ClientHello's server_name */
	const char *detail;
	const char *why;           /* close: why it closed, NULL for a plain end */
	const char *secret;        /* decision: the secret injected (its name) */
	/* decision: an allow in report mode that the allowlist would have
	 * refused with this reason ("would":"deny"); CF_R_ALLOWED if not. */
	enum cf_reason would;
	int current;               /* judged by the server's current snapshot */
};

/* Write R for C to the audit log. */
void px_record(struct px_conn *c, const struct px_rec *r);
/*
 * The one decision line of the current request, and its count in
 * /metrics: written once, when the request is allowed (its upstream is
 * connected, and for a checked tunnel its ClientHello passed) or refused;
 * a second call for the same request does nothing.  A failure after the
 * allow (the upstream times out or answers badly) is no second decision:
 * it is the close line's "why".
 */
void px_record_decision(struct px_conn *c, int allow, enum cf_reason reason,
    const struct cf_rule *rule, const char *detail, const char *sni);
/* A tunnel held for the SNI check is allowed once its first flight
 * passes; closed or revoked before that, it was allowed as it stood:
 * write that allow now. */
void px_record_pending_allow(struct px_conn *c);
/* A request inside a terminated tunnel is done: its own line (event
 * "request": method, path without query, status, bytes, the secret
 * injected by name). */
void px_record_request(struct px_conn *c);
/* The fields of one request line that are the request's, not the
 * connection's: an HTTP/2 stream's come from proxy/flow/h2, not from C.
 * PROTO ("h2") and REASON (a refusal's code) are left out when NULL. */
struct px_reqline {
	const char *method, *path, *secret, *proto, *reason;
	/* An allow in report mode: the reason code the allowlist would
	 * have refused it with ("would":"deny"), NULL if none. */
	const char *would;
	int status;
	uint64_t bytes_up, bytes_down;
	/* An allowed request: "allow", the rule and where it is written
	 * (the line is also its decision line); NULL for a refused one,
	 * whose decision line was written when it was refused. */
	const char *decision, *rule, *rule_at;
	/* The snapshot that decided it (config NULL: C's own), when C may
	 * have moved on since (another HTTP/2 stream's decision). */
	unsigned long generation;
	const char *config;
};
/* A response of C's terminated tunnel carried back COUNT occurrences of
 * secret NAME in WHERE ("header", "body", "websocket"), overwritten before
 * the client: its line (event "reflect", reason secret_reflected; the
 * request's method, path, proto and snapshot from L, or from C when L is
 * NULL) and its count in /metrics. */
void px_record_reflected(struct px_conn *c, const struct px_reqline *l, const char *name,
    const char *where, size_t count);
/* The same for what px_term_reflected() gathered for C's current request
 * or WebSocket, if anything; then forgotten. */
void px_record_reflected_due(struct px_conn *c);
/* Write the request line L of a request inside C's terminated tunnel
 * (host and port are C's).  An allowed request inside a terminated tunnel
 * has this one line (px_record_decision() writes none for it: it counts
 * the decision in /metrics and leaves the line to this), written after
 * its answer, or when the connection closes before one. */
void px_record_request_line(struct px_conn *c, const struct px_reqline *l);

/* ---- decide.c ---- */

/*
 * Decide the request whose head REQ (HEAD_LEN bytes, still in C's input)
 * was just parsed, by C's snapshot (inside a terminated tunnel REQ's header
 * table may be edited for the injection): refuse it, or look it up, vet every
 * address, connect, and hand it to the tunnel or the forward path.  C may
 * be freed or closing on return.
 */
void px_decide(struct px_conn *c, struct px_http_request *req, size_t head_len);
/* Decide C's SOCKS5 CONNECT (accept.c has set C->req.host and C->req.port
 * from the request, and drained it): exactly as an HTTP CONNECT to that
 * host and port.  C may be freed or closing on return. */
void px_decide_socks(struct px_conn *c);

/* ---- forward.c ---- */

/* C's forward state (struct px_fwd) and its head buffer, made for its
 * first request on the forward path: 0, or -1 when out of memory. */
int px_forward_begin(struct px_conn *c);

/* Reuse C's idle upstream to its host when the snapshot and rule that
 * vetted it still hold, and start the request on it: returns 1 (C is
 * then on its way, or freed); 0 when there is none to reuse. */
int px_forward_reuse(struct px_conn *c);
/* Send C's pending request head upstream and relay the body and answer. */
void px_forward_start(struct px_conn *c);

/* ---- parent.c, parentmsg.c ---- */

/* C's request is allowed and its addresses in C->req.lk vetted: reach it
 * through C->req.parent (a CONNECT; plain HTTP for a name with
 * upstream_proxy_names in absolute form), the first vetted address as
 * its upstream.  C may be freed or closing on return. */
void px_parent_connect(struct px_conn *c);
/* Rewrite C's pending plain-HTTP head for the parent: absolute form, and
 * the parent's credential.  0, or -1 when out of memory. */
int px_parent_http_head(struct px_conn *c);
/* The authority C->req.parent is asked for, "ADDR:PORT" (the vetted
 * address, C->req.addr) or, with upstream_proxy_names, "NAME:PORT", into
 * BUF. */
void px_parent_target(const struct px_conn *c, char *buf, size_t size);
/* The parent refused C's request with the answer whose head is the LEN
 * bytes at HEAD (a CONNECT's, or a 407 to an absolute-form request): 502
 * parent_refused, quoting its status line. */
void px_parent_refused(struct px_conn *c, const char *head, size_t len);

/* ---- reflect.c ---- */

/*
 * The scrub of C's terminated tunnel, with the forms of every value the
 * current snapshot binds to its host and port added (once per snapshot),
 * or NULL when none is bound there (an inspected host).  A response that
 * overwrote something is told with px_term_reflected().
 */
struct px_scrub *px_term_scrub(struct px_conn *c);
/* A minted token VALUE (VLEN bytes) of SEC put on by INJ: its forms join
 * what no response of C's tunnel may carry back.  Returns 0, or -ENOMEM
 * when the scan can take no more (the token must not go up then). */
int px_term_scrub_minted(struct px_conn *c, const struct cf_secret *sec,
    const struct cf_inject *inj, const char *value, size_t vlen);
/* N occurrences of secret NAME were overwritten in a response of C's
 * terminated tunnel, in WHERE ("header", "body", "websocket"): counted in
 * /metrics at once, audited with the request's line (or, for a WebSocket,
 * when the connection closes). */
void px_term_reflected(struct px_conn *c, size_t n, const char *name, const char *where);

/* ---- h2tunnel.c ---- */

/* Both handshakes of C's terminated tunnel are over and both sides chose
 * h2: relay the decrypted streams through a proxy/flow/h2 relay, each stream
 * decided as term_decide() decides an HTTP/1.1 request.  C may be freed
 * on return. */
void px_h2tunnel_start(struct px_conn *c);

/* ---- tunnel.c ---- */

/* A CONNECT is connected upstream: answer 200 and relay, after the SNI
 * check of the client's first flight unless sni = off. */
void px_tunnel_open(struct px_conn *c);
/* After a 101 (RFC 9110 §7.8) the connection is a tunnel: relay both ways,
 * passing on what upstream already sent. */
void px_tunnel_upgrade(struct px_conn *c);
/* Nonzero when C's CONNECT (host and port set) goes to a host:port its
 * session terminates TLS for, and the proxy can (the registry is set). */
int px_tunnel_terminates(const struct px_conn *c);
/*
 * The detail of a 502 for an upstream that closed without answering:
 * PLAIN, or, before the first answer of a terminated tunnel whose client
 * offered no h2, a text saying that an upstream speaking HTTP/2 only does
 * that and what the client must do (postern does not translate).
 */
const char *px_tunnel_closed_detail(const struct px_conn *c, const char *plain);

#endif
