/*
 * proxy/flow/bridgereq.h: the session request of a bridge (or of `postern-sidecar
 * run`), "GET /.well-known/postern/session" in origin form on a session's
 * own listener, answered by the proxy itself with that session's
 * placeholders and CAs (proxy/proto/bridgereply.h renders, bridge/session.h is the
 * protocol).  Nothing in the answer is secret: the sandbox gets all of it
 * anyway.  Inside a terminated tunnel an origin-form request is the
 * upstream's, never this.
 */
#ifndef POSTERN_PROXY_BRIDGEREQ_H
#define POSTERN_PROXY_BRIDGEREQ_H

#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"
#include "proxy/proto/http.h"

struct px_conn;

/* Nonzero when REQ, read on a listener, is the session request. */
int px_bridgereq_is(const struct px_http_request *req);

/* Answer C's session request (C->sess is set) and close after the answer
 * is written. */
void px_bridgereq_answer(struct px_conn *c);

/*
 * The name check of a bridge's DNS stub (postern-bridge(8)
 * "TRANSPARENT CAPTURE"): "GET /.well-known/postern/name?host=NAME" in
 * origin form on a session's own listener.  NAME is judged by the
 * session's rules as a CONNECT would be, on each port its allow rules name
 * (a rule without a port: 443; a range of more than PX_NAMEREQ_RANGE
 * ports: only 22, 80 and 443 inside it), and nothing is resolved: real
 * resolution stays at CONNECT time.  A name allowed on at least one port
 * gets "200" and the body "postern-name 1" LF "ports P..." LF (ascending,
 * at most PX_NAMEREQ_MAX_PORTS); any other name a refusal exactly like a
 * CONNECT's (403, X-Postern-Reason, the audit line and, in run, the
 * --allow hint), judged on port 443, or on the first port a rule for it
 * names.  An unparsable NAME is a 400 bad_request.
 */
#define PX_NAMEREQ_PATH "/.well-known/postern/name?host="
#define PX_NAMEREQ_MAX_PORTS 32
#define PX_NAMEREQ_RANGE 64

/* Nonzero when REQ, read on a listener, is the name check. */
int px_namereq_is(const struct px_http_request *req);

/*
 * The ports session S allows host H on for a CONNECT, in ascending order,
 * into PORTS (at most MAX).  Returns how many; 0 when none, and then D
 * (when not NULL) is the refusal to give.  Pure: reads S only.
 */
size_t px_namereq_ports(const struct cf_session *s, const struct cf_host *h, uint16_t *ports,
    size_t max, struct cf_decision *d);

/* Answer C's name check REQ (C->sess is set) and close after writing. */
void px_namereq_answer(struct px_conn *c, const struct px_http_request *req);

#endif
