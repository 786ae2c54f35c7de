/*
 * proxy/flow/parent.c: the way to an allowed upstream through the
 * session's parent proxy (upstream_proxy, conf/parent.h).  The decision
 * and the vetting of every address are done before (decide.c); this
 * connects to the parent instead of the upstream, asks it with CONNECT for
 * the vetted address (or the name, with upstream_proxy_names = yes), and,
 * once it answers 2xx, hands the connection to the tunnel or the forward
 * path as if it were connected direct.  Plain HTTP goes through such a
 * CONNECT too, in origin form, since a parent given an absolute-form
 * request replaces Host with the request's authority (RFC 9112 §3.2.2):
 * the address there would lose the name.  With upstream_proxy_names it
 * goes in absolute form instead (px_parent_http_head()).
 * Proxy-Authorization goes to the parent only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conf/parent.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/connect.h"
#include "proxy/flow/revoke.h"
#include "proxy/core/prio.h"

/* The header lines of a parent's answer to CONNECT that are read. */
#define PARENT_HDRS 64

static void
parent_timeout(struct px_conn *c)
{
	char d[CF_HOST_TEXT_MAX + 128];

	snprintf(d, sizeof(d), "the parent proxy %s did not answer the CONNECT in time",
	    c->req.parent->text);
	px_conn_refuse(c, 502, CF_R_PARENT_UNREACHABLE, c->req.dec.rule, d);
}

/* As in the lookup (decide.c): the client waits for its answer; bytes it
 * sends anyway wait in its input for the tunnel. */
static void
parent_cli_read(struct bufferevent *bev, void *arg)
{
	(void)arg;
	bufferevent_disable(bev, EV_READ);
}

static void
parent_cli_event(struct bufferevent *bev, short what, void *arg)
{
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR))
		return;
	px_conn_event_close(bev, what, arg);
}

static void
parent_up_event(struct bufferevent *bev, short what, void *arg)
{
	struct px_conn *c = arg;
	char d[CF_HOST_TEXT_MAX + 128];

	(void)bev;
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	snprintf(d, sizeof(d), "the parent proxy %s closed the connection without answering the CONNECT",
	    c->req.parent->text);
	px_conn_refuse(c, 502, CF_R_PARENT_REFUSED, c->req.dec.rule, d);
}

/* The parent's answer to CONNECT: 2xx opens the tunnel, anything else is
 * the parent's refusal, told to the client as postern's. */
static void
parent_up_read(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct px_http_header hdrs[PARENT_HDRS];
	struct px_http_response resp;
	struct px_http_limits lim;
	size_t avail = evbuffer_get_length(in), want, head_len = 0;
	const char *why = NULL;
	const char *data;
	char d[CF_HOST_TEXT_MAX + 400];
	int rc;

	lim.max_headers = PARENT_HDRS;
	lim.max_header_bytes = px_conn_settings(c)->max_header_bytes;
	want = avail > lim.max_header_bytes + 1 ? lim.max_header_bytes + 1 : avail;
	data = (const char *)evbuffer_pullup(in, (ev_ssize_t)want);
	px_http_response_init(&resp, hdrs, PARENT_HDRS);
	/* Parsed from its start each time: the answer is one short head. */
	rc = px_http_parse_response(data, want, &lim, 1, &resp, &head_len, &why);
	if (rc == PX_HTTP_INCOMPLETE)
		return;
	if (rc != PX_HTTP_OK) {
		snprintf(d, sizeof(d), "the parent proxy %s sent a malformed answer to the CONNECT: %s",
		    c->req.parent->text, why ? why : "?");
		px_conn_refuse(c, 502, CF_R_PARENT_REFUSED, c->req.dec.rule, d);
		return;
	}
	if (resp.status >= 200 && resp.status <= 299) {
		/* The head is the parent's, not the upstream's: not counted.
		 * Whatever follows it is the upstream's first bytes. */
		evbuffer_drain(in, head_len);
		px_conn_touch(c);
		px_conn_arm_timer(c, px_conn_settings(c)->idle_timeout_ms);
		if (c->req.mode != CF_MODE_CONNECT) {
			px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, NULL, NULL);
			px_forward_start(c);
			return;
		}
		if (px_revoke_late(c))
			return;
		px_tunnel_open(c);
		return;
	}
	px_parent_refused(c, data, head_len);
}

static const struct px_phase parent_phase = {
	.name = "parent", .cli_read = parent_cli_read, .cli_event = parent_cli_event,
	.up_read = parent_up_read, .up_event = parent_up_event, .timeout = parent_timeout,
};

/* Write the CONNECT to the parent (RFC 9110 §9.3.6). */
static int
send_connect(struct px_conn *c)
{
	struct evbuffer *out = evbuffer_new();
	char t[CF_HOST_TEXT_MAX + 16];
	int rc = 0;

	if (out == NULL)
		return -1;
	px_parent_target(c, t, sizeof(t));
	rc |= evbuffer_add_printf(out, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", t, t) < 0;
	if (c->req.parent->auth != NULL)
		rc |= evbuffer_add_printf(out, "Proxy-Authorization: %s\r\n", c->req.parent->auth) < 0;
	rc |= evbuffer_add(out, "\r\n", 2);
	if (rc == 0)
		rc = px_conn_send_buffer(&c->up, out, evbuffer_get_length(out));
	/* The credential leaves no copy behind in freed memory. */
	evbuffer_free(out);
	return rc != 0 ? -1 : 0;
}

static void
parent_connected(int fd, int err, size_t index, void *arg)
{
	struct px_conn *c = arg;
	char d[CF_HOST_TEXT_MAX + 200];

	(void)index;
	c->req.connector = NULL;
	free(c->req.lk);
	c->req.lk = NULL;
	if (fd < 0) {
		snprintf(d, sizeof(d), "could not connect to the parent proxy %s: %s", c->req.parent->text,
		    strerror(err));
		px_conn_refuse(c, 502, CF_R_PARENT_UNREACHABLE, c->req.dec.rule, d);
		return;
	}
	c->up.bev = bufferevent_socket_new(px_server_base(c->srv), fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->up.bev == NULL) {
		close(fd);
		px_conn_refuse(c, 502, CF_R_PARENT_UNREACHABLE, c->req.dec.rule, "out of memory");
		return;
	}
	bufferevent_priority_set(c->up.bev, PX_PRI_BULK);
	px_conn_touch(c);
	if (c->req.mode != CF_MODE_CONNECT && c->req.parent->names) {
		/* Plain HTTP for the name: the request itself, in absolute
		 * form. */
		if (px_parent_http_head(c) != 0) {
			px_conn_free(c, "out of memory");
			return;
		}
		px_conn_arm_timer(c, px_conn_settings(c)->idle_timeout_ms);
		px_record_decision(c, 1, CF_R_ALLOWED, c->req.dec.rule, NULL, NULL);
		px_forward_start(c);
		return;
	}
	px_conn_enter(c, &parent_phase);
	px_conn_arm_timer(c, px_conn_settings(c)->connect_timeout_ms);
	if (send_connect(c) != 0) {
		px_conn_free(c, "out of memory");
		return;
	}
	bufferevent_enable(c->up.bev, EV_READ);
}

/* Connect to the parent's addresses in C->req.lk (ports set). */
static void
dial(struct px_conn *c)
{
	size_t i;

	for (i = 0; i < c->req.lk->naddrs; i++) {
		struct sockaddr *sa = (struct sockaddr *)&c->req.lk->addrs[i];

		if (sa->sa_family == AF_INET)
			((struct sockaddr_in *)(void *)sa)->sin_port = htons(c->req.parent->port);
		else
			((struct sockaddr_in6 *)(void *)sa)->sin6_port = htons(c->req.parent->port);
	}
	c->req.connector = px_connect_start(px_server_base(c->srv), c->req.lk->addrs, c->req.lk->addrlens,
	    c->req.lk->naddrs, px_conn_settings(c)->connect_timeout_ms, parent_connected, c);
	if (c->req.connector == NULL) {
		char d[CF_HOST_TEXT_MAX + 200];

		snprintf(d, sizeof(d), "could not connect to the parent proxy %s: %s", c->req.parent->text,
		    strerror(errno));
		px_conn_refuse(c, 502, CF_R_PARENT_UNREACHABLE, c->req.dec.rule, d);
	}
}

static void
parent_dns_cb(int status, const struct px_dns_result *res, const char *errmsg, void *arg)
{
	struct px_conn *c = arg;
	size_t i;

	c->req.dnsq = NULL;
	if (status != 0) {
		char d[CF_HOST_TEXT_MAX + 300];

		snprintf(d, sizeof(d), "the parent proxy %s could not be resolved: %s", c->req.parent->text,
		    errmsg ? errmsg : px_dns_strerror(status));
		px_conn_refuse(c, 502, CF_R_PARENT_UNREACHABLE, c->req.dec.rule, d);
		return;
	}
	c->req.lk->naddrs = res->naddrs < PX_DNS_MAX_ADDRS ? res->naddrs : PX_DNS_MAX_ADDRS;
	for (i = 0; i < c->req.lk->naddrs; i++) {
		c->req.lk->addrs[i] = res->addrs[i];
		c->req.lk->addrlens[i] = res->addrlens[i];
	}
	dial(c);
}

void
px_parent_connect(struct px_conn *c)
{
	const struct cf_host *h = &c->req.parent->host;
	struct lookup *lk = c->req.lk;

	c->req.via_parent = 1;
	/* The upstream is the first vetted address: revoke = yes judges it,
	 * and the parent is asked for it (without upstream_proxy_names). */
	memset(&c->up_peer, 0, sizeof(c->up_peer));
	memcpy(&c->up_peer, &lk->addrs[0], lk->addrlens[0] < sizeof(c->up_peer) ?
	    lk->addrlens[0] : sizeof(c->up_peer));
	px_conn_sa_text(&c->up_peer.sa, c->req.addr, sizeof(c->req.addr));
	/* The parent's own addresses are the admin's choice: not vetted. */
	if (h->kind != CF_HOST_NAME) {
		struct sockaddr_storage *ss = &lk->addrs[0];

		memset(ss, 0, sizeof(*ss));
		if (h->kind == CF_HOST_IPV4) {
			struct sockaddr_in *sin = (struct sockaddr_in *)ss;

			sin->sin_family = AF_INET;
			sin->sin_addr = h->addr.v4;
			lk->addrlens[0] = sizeof(*sin);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

			sin6->sin6_family = AF_INET6;
			sin6->sin6_addr = h->addr.v6;
			lk->addrlens[0] = sizeof(*sin6);
		}
		lk->naddrs = 1;
		dial(c);
		return;
	}
	{
		const struct cf_pin *pin = cf_config_pin(c->cfg, h->name);

		if (pin != NULL) {
			size_t i;

			for (i = 0; i < pin->naddrs && i < CF_PIN_MAX_ADDRS; i++) {
				lk->addrs[i] = pin->addrs[i];
				lk->addrlens[i] = pin->addrs[i].ss_family == AF_INET ?
				    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
			}
			lk->naddrs = i;
			dial(c);
			return;
		}
	}
	c->req.dnsq = px_dns_resolve(px_server_dns(c->srv), h->name, parent_dns_cb, c);
	if (c->req.dnsq == NULL)
		px_conn_refuse(c, 502, CF_R_PARENT_UNREACHABLE, c->req.dec.rule,
		    "could not start a DNS lookup for the parent proxy");
}
