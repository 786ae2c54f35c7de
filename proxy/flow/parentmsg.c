/*
 * proxy/flow/parentmsg.c: what the proxy says to a parent proxy and about
 * it, for both ways to it (parent.c's CONNECT, forward.c's absolute form):
 * the authority it is asked for, a plain-HTTP head rewritten for it, and
 * its refusal told to the client.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "base/text.h"
#include "conf/parent.h"
#include "proxy/flow/conn.h"

/* The parent's status line, as a refusal's detail quotes it. */
#define STATUS_SHOWN 120

void
px_parent_target(const struct px_conn *c, char *buf, size_t size)
{
	char h[CF_HOST_TEXT_MAX];
	int v6;

	if (c->req.parent->names) {
		px_conn_host_text(c, h, sizeof(h));
		snprintf(buf, size, "%s:%u", h, c->req.port);
		return;
	}
	v6 = c->up_peer.sa.sa_family == AF_INET6;
	snprintf(buf, size, "%s%s%s:%u", v6 ? "[" : "", c->req.addr, v6 ? "]" : "", c->req.port);
}

int
px_parent_http_head(struct px_conn *c)
{
	struct evbuffer *h = c->fwd->pending, *n;
	struct evbuffer_ptr sp;
	size_t len = evbuffer_get_length(h);
	char t[CF_HOST_TEXT_MAX + 16];
	int rc = 0;

	/* "METHOD SP origin-form SP HTTP/1.1 CRLF ...": the target becomes
	 * absolute (RFC 9112 §3.2.2), the credential follows the line. */
	sp = evbuffer_search(h, " ", 1, NULL);
	if (sp.pos < 0 || (size_t)sp.pos + 1 >= len)
		return -1;
	if ((n = evbuffer_new()) == NULL)
		return -1;
	px_parent_target(c, t, sizeof(t));
	rc |= evbuffer_remove_buffer(h, n, (size_t)sp.pos + 1) < 0;
	rc |= evbuffer_add_printf(n, "http://%s", t) < 0;
	{
		/* An asterisk-form target (OPTIONS *) is the authority alone. */
		unsigned char first = 0;

		evbuffer_copyout(h, &first, 1);
		if (first == '*')
			evbuffer_drain(h, 1);
	}
	{
		struct evbuffer_ptr eol = evbuffer_search(h, "\r\n", 2, NULL);

		if (eol.pos < 0) {
			evbuffer_free(n);
			return -1;
		}
		rc |= evbuffer_remove_buffer(h, n, (size_t)eol.pos + 2) < 0;
	}
	if (c->req.parent->auth != NULL)
		rc |= evbuffer_add_printf(n, "Proxy-Authorization: %s\r\n", c->req.parent->auth) < 0;
	rc |= evbuffer_add_buffer(n, h);
	rc |= evbuffer_add_buffer(h, n);
	evbuffer_free(n);
	return rc != 0 ? -1 : 0;
}

void
px_parent_refused(struct px_conn *c, const char *head, size_t len)
{
	/* The status line, escaped and cut: the parent's words, shown to
	 * the client and the audit log. */
	const char *eol = memchr(head, '\r', len);
	size_t n = eol != NULL ? (size_t)(eol - head) : len;
	char d[CF_HOST_TEXT_MAX + 400], line[STATUS_SHOWN * 4 + 8];
	int is407 = n >= 12 && memcmp(head + 9, "407", 3) == 0;

	if (n > STATUS_SHOWN)
		n = STATUS_SHOWN;
	bs_escape(head, n, line, sizeof(line), 0);
	snprintf(d, sizeof(d), "the parent proxy %s refused the %s: \"%s\"%s", c->req.parent->text,
	    c->req.mode == CF_MODE_CONNECT || !c->req.parent->names ? "CONNECT" : "request", line,
	    is407 ? (c->req.parent->auth != NULL ? "; it refused the credential of upstream_proxy_auth" :
	    "; it wants a credential: set upstream_proxy_auth") : "");
	px_conn_refuse(c, 502, CF_R_PARENT_REFUSED, c->req.dec.rule, d);
}
