/*
 * proxy/sessreq.c: a bridge's session request on a session's own
 * listener, answered by the proxy itself (see sessreq.h).
 */
#include "config.h"

#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conf/secret.h"
#include "proxy/conn.h"
#include "proxy/log.h"
#include "proxy/server.h"
#include "proxy/sessinfo.h"
#include "proxy/sessreq.h"
#include "proxy/sesstls.h"

/* A session has at most this many secrets worth telling (each is one
 * variable of the sandbox). */
#define MAX_PLACEHOLDERS 256

int
px_sessreq_is(const struct px_http_request *req)
{
	return !req->is_connect && req->form == PX_TARGET_ORIGIN && req->method_len == 3 &&
	    memcmp(req->method, "GET", 3) == 0 && req->target_len == strlen(PX_SESSINFO_PATH) &&
	    memcmp(req->target, PX_SESSINFO_PATH, req->target_len) == 0;
}

void
px_sessreq_answer(struct px_conn *c)
{
	const char *names[MAX_PLACEHOLDERS], *values[MAX_PLACEHOLDERS];
	size_t i, n = cf_session_nsecrets(c->sess);
	const char *pem = px_sesstls_pem(px_server_tls(c->srv), c->sess->name);
	int rc;

	if (n > MAX_PLACEHOLDERS)
		n = MAX_PLACEHOLDERS;
	for (i = 0; i < n; i++) {
		names[i] = cf_secret_placeholder_env(cf_session_secret(c->sess, i));
		values[i] = cf_session_placeholder(c->sess, i);
	}
	rc = px_sessinfo_render(bufferevent_get_output(c->cli.bev), names, values, n, pem);
	if (rc < 0) {
		/* Never half an answer: a bridge refuses to start on a body
		 * it cannot parse, and should. */
		log_warnx("session %s: cannot answer the session request: %s", c->sess->name,
		    strerror(-rc));
		px_conn_free(c, "session info not rendered");
		return;
	}
	log_debug("session %s: session info (%zu placeholder%s%s) to %s", c->sess->name, n,
	    n == 1 ? "" : "s", pem != NULL ? ", CA" : "", c->peer);
	px_conn_close_after_write(c);
}
