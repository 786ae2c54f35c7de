/*
 * proxy/sessreq.h: the session request of a bridge (or of `postern-sidecar
 * run`), "GET /.well-known/postern/session" in origin form on a session's
 * own listener, answered by the proxy itself with that session's
 * placeholders and CAs (proxy/sessinfo.h renders, bridge/session.h is the
 * protocol).  Nothing in the answer is secret: the sandbox gets all of it
 * anyway.  Inside a terminated tunnel an origin-form request is the
 * upstream's, never this.
 */
#ifndef POSTERN_PROXY_SESSREQ_H
#define POSTERN_PROXY_SESSREQ_H

#include "proxy/http.h"

struct px_conn;

/* Nonzero when REQ, read on a listener, is the session request. */
int px_sessreq_is(const struct px_http_request *req);

/* Answer C's session request (C->sess is set) and close after the answer
 * is written. */
void px_sessreq_answer(struct px_conn *c);

#endif
