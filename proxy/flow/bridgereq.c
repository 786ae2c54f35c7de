/*
 * proxy/flow/bridgereq.c: a bridge's session request on a session's own
 * listener, answered by the proxy itself (see bridgereq.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conf/canary.h"
#include "conf/secret.h"
#include "proxy/flow/conn.h"
#include "proxy/core/log.h"
#include "proxy/core/server.h"
#include "proxy/proto/bridgereply.h"
#include "proxy/flow/bridgereq.h"
#include "proxy/flow/leakscan.h"
#include "proxy/tls/registry.h"

/* A session has at most this many secrets worth telling (each is one
 * variable of the sandbox). */
#define MAX_PLACEHOLDERS 256

int
px_bridgereq_is(const struct px_http_request *req)
{
	return !req->is_connect && req->form == PX_TARGET_ORIGIN && req->method_len == 3 &&
	    memcmp(req->method, "GET", 3) == 0 && req->target_len == strlen(PX_SESSINFO_PATH) &&
	    memcmp(req->target, PX_SESSINFO_PATH, req->target_len) == 0;
}

void
px_bridgereq_answer(struct px_conn *c)
{
	/* Each secret: its variable, also_env, and up to two more
	 * (cf_secret_more_env()); then the canaries. */
	const char *names[4 * MAX_PLACEHOLDERS + CF_CANARY_MAX], *values[4 * MAX_PLACEHOLDERS + CF_CANARY_MAX];
	char canary[CF_CANARY_MAX * (CF_PLACEHOLDER_MAX + 1)];
	size_t i, j, k = 0, n = cf_session_nsecrets(c->sess);
	char *pem;
	/* A copy: with workers = N a reload on the first worker's loop
	 * may replace the registry's PEM while this worker renders it. */
	int rc = px_tlsreg_pem_copy(px_server_tls(c->srv), c->sess->name, &pem);

	if (rc < 0) {
		px_conn_free(c, "out of memory");
		return;
	}
	if (n > MAX_PLACEHOLDERS)
		n = MAX_PLACEHOLDERS;
	for (i = 0; i < n; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);

		names[k] = cf_secret_placeholder_env(sec);
		values[k++] = cf_session_placeholder(c->sess, i);
		if (cf_secret_also_env(sec) != NULL) {
			names[k] = cf_secret_also_env(sec);
			values[k++] = cf_session_placeholder(c->sess, i);
		}
		for (j = 0; k < 4 * MAX_PLACEHOLDERS && cf_secret_more_env(sec, j) != NULL; j++) {
			names[k] = cf_secret_more_env(sec, j);
			values[k++] = cf_session_placeholder_more(c->sess, i, j);
		}
	}
	k += px_leakscan_canary_env(c, names + k, values + k, CF_CANARY_MAX, canary,
	    sizeof(canary));
	rc = px_bridgereply_render(bufferevent_get_output(c->cli.bev), names, values, k, pem);
	if (rc == 0)
		log_debug("session %s: session info (%zu placeholder%s%s) to %s", c->sess->name,
		    n, n == 1 ? "" : "s", pem != NULL ? ", CA" : "", c->peer);
	free(pem);
	if (rc < 0) {
		/* Never half an answer: a bridge refuses to start on a body
		 * it cannot parse, and should. */
		log_warnx("session %s: cannot answer the session request: %s", c->sess->name,
		    strerror(-rc));
		px_conn_free(c, "session info not rendered");
		return;
	}
	px_conn_close_after_write(c);
}

int
px_namereq_is(const struct px_http_request *req)
{
	size_t n = strlen(PX_NAMEREQ_PATH);

	return !req->is_connect && req->form == PX_TARGET_ORIGIN && req->method_len == 3 &&
	    memcmp(req->method, "GET", 3) == 0 && req->target_len > n &&
	    memcmp(req->target, PX_NAMEREQ_PATH, n) == 0;
}

/* The mode px_decide() judges a CONNECT to H:PORT in: CF_MODE_TLS when
 * the session terminates TLS there. */
static enum cf_mode
connect_mode(const struct cf_session *s, const struct cf_host *h, uint16_t port)
{
	return h->kind == CF_HOST_NAME && cf_session_terminates(s, h->name, port) ? CF_MODE_TLS :
	    CF_MODE_CONNECT;
}

/* Add PORT to the ascending set PORTS[0..*N) of at most MAX. */
static void
port_add(uint16_t *ports, size_t *n, size_t max, uint16_t port)
{
	size_t i;

	for (i = 0; i < *n && ports[i] < port; i++)
		;
	if ((i < *n && ports[i] == port) || *n == max)
		return;
	memmove(ports + i + 1, ports + i, (*n - i) * sizeof(*ports));
	ports[i] = port;
	(*n)++;
}

size_t
px_namereq_ports(const struct cf_session *s, const struct cf_host *h, uint16_t *ports,
    size_t max, struct cf_decision *d)
{
	/* Ports worth a listener inside a range too wide to listen on all. */
	static const uint16_t wide[] = { 22, 80, 443 };
	uint16_t cand[PX_NAMEREQ_MAX_PORTS];
	size_t ncand = 0, n = 0, i, k;
	struct cf_decision dd;
	unsigned p;

	for (i = 0; i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];

		if (!cf_rule_match_host(r, h))
			continue;
		if (!r->port_given) {
			/* A rule without a port allows CONNECT on 443 only. */
			port_add(cand, &ncand, PX_NAMEREQ_MAX_PORTS, 443);
		} else if ((unsigned)r->port_hi - r->port_lo < PX_NAMEREQ_RANGE) {
			for (p = r->port_lo; p <= r->port_hi; p++)
				port_add(cand, &ncand, PX_NAMEREQ_MAX_PORTS, (uint16_t)p);
		} else {
			for (k = 0; k < sizeof(wide) / sizeof(wide[0]); k++)
				if (wide[k] >= r->port_lo && wide[k] <= r->port_hi)
					port_add(cand, &ncand, PX_NAMEREQ_MAX_PORTS, wide[k]);
		}
	}
	/* Report mode allows what no rule names: the usual ports of an
	 * unlisted name (or of another port of a listed one) are worth a
	 * listener too, and are judged below like the others. */
	for (k = 0; (s->report || s->ask) && k < sizeof(wide) / sizeof(wide[0]); k++)
		port_add(cand, &ncand, PX_NAMEREQ_MAX_PORTS, wide[k]);
	/* Each candidate judged exactly as the CONNECT would be: a deny rule
	 * or a path-only rule takes it away again (unless the session
	 * terminates TLS there: then, as px_decide() judges that CONNECT, a
	 * path or methods= rule admits the tunnel and judges each request). */
	for (i = 0; i < ncand && n < max; i++) {
		cf_decide(s, connect_mode(s, h, cand[i]), h, cand[i], NULL, 0, NULL, &dd);
		/* mode = ask: the name check must not wait (the bridge's stub
		 * gives it a second), so it is answered as report mode would,
		 * and the CONNECT that follows is what is asked. */
		if (dd.allow || (s->ask && (dd.reason == CF_R_HOST_NOT_ALLOWED ||
		    dd.reason == CF_R_PORT_NOT_ALLOWED || dd.reason == CF_R_PATH_NOT_ALLOWED ||
		    dd.reason == CF_R_METHOD_NOT_ALLOWED)))
			ports[n++] = cand[i];
	}
	if (n == 0 && d != NULL) {
		/* In report mode the candidates are the usual ports: the
		 * refusal speaks of 443, as the name check does. */
		uint16_t p0 = s->report || s->ask || ncand == 0 ? 443 : cand[0];

		cf_decide(s, connect_mode(s, h, p0), h, p0, NULL, 0, NULL, d);
	}
	return n;
}

void
px_namereq_answer(struct px_conn *c, const struct px_http_request *req)
{
	size_t off = strlen(PX_NAMEREQ_PATH), n, i;
	uint16_t ports[PX_NAMEREQ_MAX_PORTS];
	struct evbuffer *out = bufferevent_get_output(c->cli.bev);
	char body[16 + PX_NAMEREQ_MAX_PORTS * 6];
	const char *why = NULL;
	struct cf_decision d;
	struct cf_host h;
	int len;

	/* Judged as the CONNECT it stands for, so the refusal reads like one. */
	snprintf(c->req.method, sizeof(c->req.method), "DNS");
	c->req.mode = CF_MODE_CONNECT;
	c->req.path[0] = '\0';
	if (cf_host_parse(req->target + off, req->target_len - off, CF_HOST_NO_IP, &h, &why) < 0) {
		char detail[200];

		snprintf(detail, sizeof(detail), "the name check asks for no valid host name: %s",
		    why != NULL ? why : "bad name");
		px_conn_refuse(c, 400, CF_R_BAD_REQUEST, NULL, detail);
		return;
	}
	c->req.host = h;
	memset(&d, 0, sizeof(d));
	n = px_namereq_ports(c->sess, &h, ports, PX_NAMEREQ_MAX_PORTS, &d);
	if (n == 0) {
		c->req.port = 443;
		if (d.rule != NULL && d.rule->port_given)
			c->req.port = d.rule->port_lo;
		if (d.reason == CF_R_HOST_NOT_ALLOWED) {
			/* A query names no port: say which one the hint is
			 * for, so that ssh's user allows host:22 at once. */
			size_t dl = strlen(d.detail);

			snprintf(d.detail + dl, sizeof(d.detail) - dl, "; asked by the sandbox's DNS "
			    "stub, which knows no port: a program using another than %u needs "
			    "HOST:PORT", c->req.port);
		}
		px_conn_refuse(c, 403, d.reason, d.rule, d.detail);
		return;
	}
	c->req.port = ports[0];
	len = snprintf(body, sizeof(body), "postern-name 1\nports");
	for (i = 0; i < n; i++)
		len += snprintf(body + len, sizeof(body) - (size_t)len, " %u", ports[i]);
	len += snprintf(body + len, sizeof(body) - (size_t)len, "\n");
	evbuffer_add_printf(out, "HTTP/1.1 200 OK\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %d\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n\r\n%s", len, body);
	log_debug("session %s: name %s allowed on %zu port%s, to %s", c->sess->name, h.name, n,
	    n == 1 ? "" : "s", c->peer);
	px_conn_close_after_write(c);
}
