/*
 * proxy/flow/fetch.c: one HTTPS exchange of the proxy's own (see fetch.h).
 * The addresses are tried in order, one at a time: an endpoint is one
 * service an admin named, not a page to load fast.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "conf/config.h"
#include "proxy/core/server.h"
#include "proxy/flow/fetch.h"
#include "proxy/proto/dns.h"
#include "proxy/proto/mintmsg.h"
#include "proxy/tls/registry.h"
#include "proxy/tls/tlsup.h"

/* Addresses tried, at most. */
#define FETCH_ADDRS 4

struct px_fetch {
	struct px_server *srv;
	char host[256];
	uint16_t port;
	char *req;
	size_t len;
	px_fetch_cb *cb;
	void *arg;
	struct px_dns_query *dnsq;
	struct event *timer;
	struct bufferevent *bev;
	struct sockaddr_storage addrs[FETCH_ADDRS];
	socklen_t addrlens[FETCH_ADDRS];
	size_t naddrs, next;
	int connected;
	unsigned deadline_ms;
	char err[200];
	char scratch[PX_MINT_RESPONSE_MAX];
};

static void try_next(struct px_fetch *f);

static void
fetch_free(struct px_fetch *f)
{
	if (f == NULL)
		return;
	px_dns_cancel(f->dnsq);
	if (f->timer != NULL)
		event_free(f->timer);
	if (f->bev != NULL)
		bufferevent_free(f->bev);
	if (f->req != NULL)
		OPENSSL_clear_free(f->req, f->len);
	OPENSSL_cleanse(f->scratch, sizeof(f->scratch));
	free(f);
}

void
px_fetch_cancel(struct px_fetch *f)
{
	fetch_free(f);
}

/* End F with STATUS and its body, or ERR. */
static void
finish(struct px_fetch *f, int status, const char *body, size_t blen, const char *err)
{
	f->cb(f->arg, status, body, blen, err);
	fetch_free(f);
}

static void
fail(struct px_fetch *f, const char *fmt, const char *what)
{
	char e[sizeof(f->err)];

	snprintf(e, sizeof(e), fmt, what);
	finish(f, 0, NULL, 0, e);
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_fetch *f = arg;

	(void)fd;
	(void)what;
	fail(f, "no answer from %s in time", f->host);
}

/* Try what F has read so far as the answer (EOF: nothing more comes). */
static void
try_answer(struct px_fetch *f, int eof)
{
	struct evbuffer *in = bufferevent_get_input(f->bev);
	size_t n = evbuffer_get_length(in), blen = 0;
	const char *why = NULL, *body = NULL;
	unsigned char *data;
	int status = 0, rc;

	if (n > PX_MINT_RESPONSE_MAX) {
		fail(f, "the answer of %s is too long", f->host);
		return;
	}
	data = evbuffer_pullup(in, -1);
	if (n == 0 && eof) {
		fail(f, "%s closed the connection without an answer", f->host);
		return;
	}
	rc = px_mint_response_parse((const char *)data, n, eof, &status, &body, &blen, f->scratch,
	    sizeof(f->scratch), &why);
	if (rc < 0) {
		char e[sizeof(f->err)];
		snprintf(e, sizeof(e), "the answer of %s %s", f->host, why);
		finish(f, 0, NULL, 0, e);
		return;
	}
	if (rc > 0)
		finish(f, status, body, blen, NULL);
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	try_answer(arg, 0);
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct px_fetch *f = arg;

	if (what & BEV_EVENT_CONNECTED) {
		f->connected = 1;
		if (bufferevent_write(bev, f->req, f->len) != 0) {
			fail(f, "out of memory writing to %s", f->host);
			return;
		}
		bufferevent_enable(bev, EV_READ);
		return;
	}
	if (f->connected && (what & BEV_EVENT_EOF)) {
		try_answer(f, 1);
		return;
	}
	if (!f->connected) {
		SSL *ssl = bufferevent_openssl_get_ssl(bev);
		long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;

		if (v != X509_V_OK) {
			snprintf(f->err, sizeof(f->err), "TLS to %s failed: %s", f->host, px_tlsup_reason(v));
			fail(f, "%s", f->err);
			return;
		}
		snprintf(f->err, sizeof(f->err), "could not connect to %s:%u", f->host, f->port);
		bufferevent_free(f->bev);
		f->bev = NULL;
		try_next(f);
		return;
	}
	try_answer(f, 1);
}

/* Dial F's next address, or fail with the last error. */
static void
try_next(struct px_fetch *f)
{
	SSL_CTX *ctx = px_tlsreg_upstream(px_server_tls(f->srv));
	SSL *ssl;

	if (f->next >= f->naddrs) {
		fail(f, "%s", f->err[0] ? f->err : "no address to connect to");
		return;
	}
	ssl = ctx != NULL ? SSL_new(ctx) : NULL;
	if (ssl == NULL || px_tlsup_prepare(ssl, f->host) != 0 ||
	    SSL_set_alpn_protos(ssl, (const unsigned char *)"\x08http/1.1", 9) != 0) {
		SSL_free(ssl);
		fail(f, "cannot set up TLS to %s", f->host);
		return;
	}
	f->bev = bufferevent_openssl_socket_new(px_server_base(f->srv), -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
	if (f->bev == NULL) {
		fail(f, "out of memory connecting to %s", f->host);
		return;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(f->bev, 1);
	bufferevent_setcb(f->bev, read_cb, NULL, event_cb, f);
	f->connected = 0;
	if (bufferevent_socket_connect(f->bev, (struct sockaddr *)&f->addrs[f->next],
	    (int)f->addrlens[f->next]) != 0) {
		f->next++;
		snprintf(f->err, sizeof(f->err), "could not connect to %s:%u", f->host, f->port);
		bufferevent_free(f->bev);
		f->bev = NULL;
		try_next(f);
		return;
	}
	f->next++;
}

/* Take up to FETCH_ADDRS of the N addresses at A, with F's port. */
static void
take_addrs(struct px_fetch *f, const struct sockaddr_storage *a, size_t n)
{
	size_t i;

	for (i = 0; i < n && f->naddrs < FETCH_ADDRS; i++) {
		struct sockaddr_storage *ss = &f->addrs[f->naddrs];

		*ss = a[i];
		if (ss->ss_family == AF_INET) {
			((struct sockaddr_in *)ss)->sin_port = htons(f->port);
			f->addrlens[f->naddrs++] = sizeof(struct sockaddr_in);
		} else if (ss->ss_family == AF_INET6) {
			((struct sockaddr_in6 *)ss)->sin6_port = htons(f->port);
			f->addrlens[f->naddrs++] = sizeof(struct sockaddr_in6);
		}
	}
}

static void
dns_cb(int status, const struct px_dns_result *res, const char *errmsg, void *arg)
{
	struct px_fetch *f = arg;

	f->dnsq = NULL;
	if (status != 0) {
		snprintf(f->err, sizeof(f->err), "%s could not be resolved: %s", f->host,
		    errmsg ? errmsg : px_dns_strerror(status));
		fail(f, "%s", f->err);
		return;
	}
	take_addrs(f, res->addrs, res->naddrs);
	try_next(f);
}

/* Start F on the next loop iteration, so that its callback never runs
 * inside px_fetch_start(). */
static void
start_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_fetch *f = arg;
	const struct cf_pin *pin;
	struct sockaddr_storage ss;
	struct timeval tv;

	(void)fd;
	(void)what;
	event_free(f->timer);
	f->timer = evtimer_new(px_server_base(f->srv), timeout_cb, f);
	if (f->timer == NULL) {
		fail(f, "out of memory asking %s", f->host);
		return;
	}
	tv.tv_sec = f->deadline_ms / 1000;
	tv.tv_usec = (f->deadline_ms % 1000) * 1000;
	evtimer_add(f->timer, &tv);
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, f->host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		take_addrs(f, &ss, 1);
	} else if (inet_pton(AF_INET6, f->host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		take_addrs(f, &ss, 1);
	} else if ((pin = cf_config_pin(px_server_config(f->srv), f->host)) != NULL) {
		take_addrs(f, pin->addrs, pin->naddrs);
	} else {
		f->dnsq = px_dns_resolve(px_server_dns(f->srv), f->host, dns_cb, f);
		if (f->dnsq == NULL)
			fail(f, "could not start a DNS lookup for %s", f->host);
		return;
	}
	try_next(f);
}

struct px_fetch *
px_fetch_start(struct px_server *srv, const char *host, uint16_t port, const char *req, size_t len,
    unsigned timeout_ms, px_fetch_cb *cb, void *arg)
{
	struct px_fetch *f;
	struct timeval tv;

	if (px_tlsreg_upstream(px_server_tls(srv)) == NULL || strlen(host) >= sizeof(f->host))
		return NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->srv = srv;
	snprintf(f->host, sizeof(f->host), "%s", host);
	f->port = port;
	f->cb = cb;
	f->arg = arg;
	f->len = len;
	if ((f->req = OPENSSL_malloc(len > 0 ? len : 1)) == NULL) {
		free(f);
		return NULL;
	}
	memcpy(f->req, req, len);
	f->timer = evtimer_new(px_server_base(srv), start_cb, f);
	if (f->timer == NULL) {
		fetch_free(f);
		return NULL;
	}
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	evtimer_add(f->timer, &tv);
	f->deadline_ms = timeout_ms;
	return f;
}
