/*
 * proxy/flow/accept.c: the first steps of the flow (conn.h): a client connection
 * accepted from a listener (who it is, its session's share), and its
 * request head, read and parsed (resumed, never parsed again, as it
 * arrives) and checked for form; then decide.c takes the request.  A
 * keep-alive connection comes back here for its next request.
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

#include <sys/socket.h>
#include <sys/un.h>

#include "base/text.h"
#include "conf/config.h"
#include "proxy/flow/auth.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/conns.h"
#include "proxy/proto/http.h"
#include "proxy/core/loopcall.h"
#include "proxy/core/mem.h"
#include "proxy/core/prio.h"
#include "proxy/proto/socks.h"
#include "proxy/admin/stats.h"
#include "proxy/core/worker.h"

/* ---- the request head --------------------------------------------------- */

/* A new request on C, its head read (C->req was zeroed when the head
 * began, in handle_head()): counted, and the current snapshot decides it. */
static void
new_request(struct px_conn *c)
{
	c->requests++;
	if (c->cfg != px_server_config(c->srv)) {
		cf_config_free(c->cfg);
		c->cfg = px_server_config_ref(c->srv);
	}
	c->generation = px_server_generation(c->srv);
	c->sess = cf_config_find_session(c->cfg, c->session);
}

/*
 * SOCKS5 (RFC 1928) on an HTTP listener: the greeting, then the request,
 * each taken whole (proxy/proto/socks.h) as its bytes arrive, in pieces of any
 * size; a client may send both at once.  The one header_timeout bounds
 * both, as it bounds an HTTP head.  A CONNECT is then decided exactly as
 * an HTTP CONNECT (px_decide_socks()); every answer after the greeting is
 * a SOCKS5 reply (conn.c, tunnel.c).
 */
static void
socks_step(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	struct px_socks_request req;
	unsigned char *data;
	const char *why = NULL;
	size_t len, used = 0;
	int rc, noauth = 0, rep = PX_SOCKS_REP_FAILURE;

	if (c->socks == 0) {
		c->socks = 1;
		snprintf(c->req.method, sizeof(c->req.method), "SOCKS5");
	}
	while ((len = evbuffer_get_length(in)) > 0) {
		/* Both messages are shorter than 300 bytes: a prefix that
		 * long decides either. */
		if (len > 300)
			len = 300;
		data = evbuffer_pullup(in, (ev_ssize_t)len);
		if (data == NULL) {
			px_conn_free(c, "out of memory");
			return;
		}
		if (c->socks == 1) {
			static const unsigned char chosen[2] = { PX_SOCKS_VERSION, 0x00 };

			rc = px_socks_greeting(data, len, &used, &noauth, &why);
			if (rc == PX_SOCKS_INCOMPLETE)
				return;
			if (rc == PX_SOCKS_BAD) {
				px_conn_refuse(c, 400, CF_R_BAD_REQUEST, NULL, why);
				return;
			}
			if (c->auth == PX_AUTH_PENDING) {
				/* No credential can come in RFC 1928 here: a
				 * client needs the bridge's preface first. */
				px_conn_refuse(c, 407, CF_R_PROXY_AUTH_REQUIRED, NULL,
				    "SOCKS5 on an auth=token listener needs the POSTERN-TOKEN preface "
				    "first (postern-bridge --token-file); username/password (RFC 1929) "
				    "is not taken");
				return;
			}
			if (!noauth) {
				/* RFC 1928 §3: X'FF', and the client closes.  The
				 * session is the listener's: there is no one to
				 * authenticate, so no other method is offered. */
				px_conn_refuse(c, 400, CF_R_BAD_REQUEST, NULL,
				    "the SOCKS5 client offers no method postern accepts (only 0x00, "
				    "no authentication)");
				return;
			}
			evbuffer_drain(in, used);
			evbuffer_add(bufferevent_get_output(c->cli.bev), chosen, sizeof(chosen));
			c->socks = 2;
			continue;
		}
		rc = px_socks_request(data, len, &used, &req, &rep, &why);
		if (rc == PX_SOCKS_INCOMPLETE)
			return;
		/* One request per connection: what follows it is the
		 * tunnel's (the client's first flight). */
		c->socks = 3;
		new_request(c);
		if (rc == PX_SOCKS_BAD) {
			snprintf(c->req.method, sizeof(c->req.method), "SOCKS5");
			c->req.socks_rep = rep;
			px_conn_refuse(c, 400, CF_R_BAD_REQUEST, NULL, why);
			return;
		}
		evbuffer_drain(in, used);
		snprintf(c->req.method, sizeof(c->req.method), "%s", px_socks_cmd_name(req.cmd));
		if (req.cmd != PX_SOCKS_CONNECT) {
			/* RFC 1928 §4: BIND and UDP ASSOCIATE would open a
			 * door the rules cannot judge (an inbound connection,
			 * datagrams to anywhere): X'07', audited. */
			c->req.socks_rep = PX_SOCKS_REP_CMD_UNSUPPORTED;
			px_conn_refuse(c, 405, CF_R_BAD_REQUEST, NULL,
			    "postern takes the SOCKS5 CONNECT command only, not BIND or UDP ASSOCIATE");
			return;
		}
		c->req.host = req.host;
		c->req.port = req.port;
		px_decide_socks(c);
		return;
	}
}

/* Is C's next read SOCKS5?  The first byte of its first request says
 * (0x05: no HTTP method begins with it); inside a terminated tunnel the
 * requests are HTTP. */
static int
is_socks(struct px_conn *c)
{
	unsigned char b;

	if (c->socks == 1 || c->socks == 2)
		return 1;
	if (c->socks != 0 || c->requests != 0 || c->term)
		return 0;
	return evbuffer_copyout(bufferevent_get_input(c->cli.bev), &b, 1) == 1 && b == PX_SOCKS_VERSION;
}

static void
handle_head(struct px_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	const struct cf_proxy_settings *p = px_conn_settings(c);
	struct px_http_request req;
	struct px_http_limits lim;
	size_t len = evbuffer_get_length(in), want, head_len = 0;
	const char *why = NULL;
	unsigned char *data;
	int status = 400, rc;

	if (len == 0)
		return;
	if (!c->head_timer_armed) {
		/* The first bytes of a head: a new request, which starts from
		 * nothing of the last one. */
		memset(&c->req, 0, sizeof(c->req));
		c->head_timer_armed = 1;
		px_conn_arm_timer(c, p->header_timeout_ms);
	}
	px_conn_touch(c);
	/* An auth=token listener: the bridge's preface comes first. */
	if (c->auth == PX_AUTH_PENDING && c->requests == 0 && !c->socks) {
		if ((rc = px_auth_preface(c)) < 0)
			return;
		if (rc == 1 && (len = evbuffer_get_length(in)) == 0)
			return;
	}
	if (is_socks(c)) {
		socks_step(c);
		return;
	}
	lim.max_headers = p->max_headers;
	lim.max_header_bytes = p->max_header_bytes;
	if (c->nhdrs_cap < lim.max_headers + 1) {
		struct px_http_header *nh = realloc(c->hdrs, (lim.max_headers + 1) * sizeof(*nh));
		if (nh == NULL) {
			px_conn_free(c, "out of memory");
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
		px_conn_free(c, "out of memory");
		return;
	}
	px_http_request_init(&req, c->hdrs, c->nhdrs_cap);
	req.resume = c->req.rs;
	rc = px_http_parse_request((const char *)data, want, &lim, &req, &head_len, &status, &why);
	if (rc == PX_HTTP_INCOMPLETE) {
		c->req.rs = req.resume;
		if (len > lim.max_header_bytes) {
			px_conn_refuse(c, 431, CF_R_BAD_REQUEST, NULL, "request head larger than max_header_bytes");
		}
		return;
	}
	new_request(c);
	if (rc == PX_HTTP_OK || rc == PX_HTTP_HOST_MISMATCH) {
		size_t ml = req.method_len < sizeof(c->req.method) - 1 ? req.method_len : sizeof(c->req.method) - 1;
		memcpy(c->req.method, req.method, ml);
		c->req.method[ml] = '\0';
	}
	/* The session first, then everything that is the session's. */
	if ((rc == PX_HTTP_OK || rc == PX_HTTP_HOST_MISMATCH) && c->auth != PX_AUTH_NONE && !c->term &&
	    px_auth_request(c, &req) != 0)
		return;
	if (rc == PX_HTTP_HOST_MISMATCH) {
		c->req.host = req.host;
		c->req.port = req.port;
		px_conn_refuse(c, 400, CF_R_HOST_MISMATCH, NULL,
		    "the Host header names another host than the request URI");
		return;
	}
	if (rc != PX_HTTP_OK) {
		char d[256];
		snprintf(d, sizeof(d), "malformed request: %s", why ? why : "bad syntax");
		px_conn_refuse(c, status == 431 ? 431 : 400, CF_R_BAD_REQUEST, NULL, d);
		return;
	}
	px_decide(c, &req, head_len);
}

/* ---- the head phase ----------------------------------------------------- */

static void
head_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	px_loopcall_check();
	handle_head(arg);
}

/*
 * Slowloris: a head that did not arrive in header_timeout gets a 408 (or,
 * when not a byte of it came, a plain close).  Between two requests of a
 * keep-alive connection, before the next head begins, the idle timeout
 * applies instead.
 */
static void
head_timeout(struct px_conn *c)
{
	if (c->head_timer_armed || c->requests == 0) {
		if (evbuffer_get_length(bufferevent_get_input(c->cli.bev)) > 0) {
			px_conn_refuse(c, 408, CF_R_TIMEOUT, NULL, c->socks ?
			    "the SOCKS5 greeting and request did not arrive within header_timeout" :
			    "the request head did not arrive within header_timeout");
		} else {
			px_conn_free(c, "header_timeout");
		}
		return;
	}
	px_conn_idle_timeout(c);
}

/*
 * Between two requests of a terminated tunnel the upstream must not speak;
 * if it closes, the client's connection ends too (RFC 9112 §9.5).  Before
 * the first answer, though, the client is owed a reason: an h2-only server
 * may close right after its handshake, so the upstream is let go
 * (px_conn_up_gone()) and the first request gets its 502 (decide.c).
 */
static void
head_up_read_cb(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_loopcall_check();
	if (c->up.bytes == 0) {
		px_conn_up_gone(c);
		return;
	}
	px_conn_free(c, "upstream spoke between requests");
}

static void
head_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		if (c->up.bytes != 0 && evbuffer_get_length(bufferevent_get_input(c->cli.bev)) == 0) {
			px_conn_free(c, NULL);
			return;
		}
		/* A head is arriving, or none was answered yet: it gets its
		 * answer (a 502). */
		px_conn_up_gone(c);
	}
}

/* Reading a request head. */
static const struct px_phase head_phase = {
	.name = "head", .cli_read = head_read_cb, .cli_event = px_conn_event_close,
	.up_read = head_up_read_cb, .up_event = head_up_event_cb,
	.timeout = head_timeout,
};

/* The answer is out on a keep-alive connection (forward.c), or a
 * terminated tunnel's handshakes are over (tunnel.c): read the next
 * request, judged on its own (C->req is zeroed when its head begins). */
static void
head_next(struct px_conn *c)
{
	c->head_timer_armed = 0;
	px_conn_arm_timer(c, px_conn_settings(c)->idle_timeout_ms);
	px_conn_enter(c, &head_phase);
	bufferevent_enable(c->cli.bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_input(c->cli.bev)) > 0)
		handle_head(c);
	else
		px_conn_cli_read_own(c);
}

/* ---- accept ------------------------------------------------------------- */

/*
 * One recv(2) of what the client already sent into C's input, before the
 * loop waits for it: a client writes its head as soon as its connect
 * returns, and under load that is before the loop got round to the
 * accept, so the head is usually there.  Read now, it is answered in the
 * same pass; a refusal then never registers the socket with epoll at
 * all (the add and the delete cancel in the loop's changelist), a tunnel
 * saves a wait.  Returns the bytes read; 0 when there were none (EOF and
 * errors are left for the bufferevent's own read to meet and report).
 */
static size_t
read_at_accept(struct px_conn *c)
{
	ssize_t n = px_conn_cli_recv(c);

	return n > 0 ? (size_t)n : 0;
}

static void admit(struct px_conn *c, int over, unsigned held);

void
px_conn_accept(struct px_listener *l, int fd, const struct sockaddr *sa, int salen)
{
	struct px_server *srv = px_listener_server(l);
	struct px_conn *c;
	struct bs_str b;
	unsigned held = 0;
	int over = 0;

	(void)salen;
	c = px_mem_bin_get(PX_BIN_CONN, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->srv = srv;
	c->phase = &head_phase;
	c->next_request = head_next;
	c->pid = c->uid = -1;
	bs_str_init(&b, c->session, sizeof(c->session));
	/* An auth=token listener's client has no session until its
	 * credential (auth.h): it is counted open only then. */
	if (px_listener_auth_token(l))
		c->auth = PX_AUTH_PENDING;
	bs_str_add(&b, c->auth == PX_AUTH_PENDING ? PX_AUTH_NOSESSION : px_listener_session(l));
	c->cfg = px_server_config_ref(srv);
	c->generation = px_server_generation(srv);
	c->sess = cf_config_find_session(c->cfg, c->session);
	event_base_gettimeofday_cached(px_server_base(srv), &c->started);
	c->last_activity = c->started;
	if (c->auth != PX_AUTH_PENDING)
		px_stats_conn_open(px_server_stats(srv), c->session);
	px_workers_accepted(srv);

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

		/* TCP_NODELAY comes from the listener, or else with the
		 * first allowed request (start_lookup() in decide.c). */
		c->nodelay = px_listener_nodelay(l);
		px_conn_sa_text(sa, a, sizeof(a));
		bs_str_init(&b, c->peer, sizeof(c->peer));
		if (sa->sa_family == AF_INET) {
			bs_str_add(&b, a);
			bs_str_addn(&b, ":", 1);
			bs_str_uint(&b, ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port));
		} else {
			bs_str_addn(&b, "[", 1);
			bs_str_add(&b, a);
			bs_str_addn(&b, "]:", 2);
			bs_str_uint(&b, ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port));
		}
	}

	/* Into the server's set, with the session's and the uid's share
	 * checked at once, before the request head (conns.c says why). */
	over = px_conns_add(c, &held, admit);

	/* FD is non-blocking already: evconnlistener accepts with accept4()'s
	 * SOCK_NONBLOCK (px_accept_fn, server.h). */
	c->cli.bev = bufferevent_socket_new(px_server_base(srv), fd, BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(px_server_base(srv), px_conn_timer_cb, c);
	if (c->cli.bev == NULL || c->timer == NULL) {
		if (c->cli.bev == NULL)
			close(fd);
		px_conn_free(c, "out of memory");
		return;
	}
	bufferevent_priority_set(c->cli.bev, PX_PRI_BULK);
	event_priority_set(c->timer, PX_PRI_BULK);
	/* Waiting for a slot (conns.h): nothing is read, as in the backlog. */
	if (over != -EAGAIN)
		admit(c, over, held);
}

/* C has its slot (OVER 0), or is over its share (or out of memory):
 * answer, or start reading its first request head. */
static void
admit(struct px_conn *c, int over, unsigned held)
{
	struct px_server *srv = c->srv;

	if (over == -ENOMEM) {
		px_conn_free(c, "out of memory");
		return;
	}
	if (over != 0) {
		char detail[200];
		if (over == -EDQUOT)
			snprintf(detail, sizeof(detail), "session %s holds %u connections, its "
			    "max_connections", c->session, held);
		else
			snprintf(detail, sizeof(detail), "uid %ld holds %u connections in session %s, "
			    "its max_connections_per_uid", c->uid, held, c->session);
		px_conn_arm_timer(c, LINGER_MS);
		px_conn_refuse(c, 503, over == -EDQUOT ? CF_R_SESSION_CONNECTION_LIMIT :
		    CF_R_UID_CONNECTION_LIMIT, NULL, detail);
		return;
	}
	px_conn_enter(c, &head_phase);
	/* Writing is enabled from birth and the write event is added when
	 * output arrives; enabling EV_WRITE on an empty buffer would only add
	 * and remove an epoll registration for nothing. */
	bufferevent_enable(c->cli.bev, EV_READ);
	c->head_timer_armed = 1;
	px_conn_arm_timer(c, cf_config_proxy(px_server_config(srv))->header_timeout_ms);
	if (read_at_accept(c) > 0)
		handle_head(c);
	else
		px_conn_cli_read_own(c);
}
