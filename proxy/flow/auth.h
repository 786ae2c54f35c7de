/*
 * proxy/flow/auth.h: the token step of a connection on an auth=token
 * listener (postern-proxy(8) "TOKEN LISTENERS"), internal to proxy/flow/.
 * Such a connection is accepted with no session (PX_AUTH_PENDING): it
 * counts against max_connections but holds no session's share.  Its
 * session is chosen by a credential (conf/token.h), presented either as a
 * Proxy-Authorization header on every request, or once as the bridge's
 * POSTERN-TOKEN preface before anything else; then it takes the
 * session's share and is that session's for the rest of its life.
 */
#ifndef POSTERN_PROXY_FLOW_AUTH_H
#define POSTERN_PROXY_FLOW_AUTH_H

#include "proxy/proto/http.h"

struct px_conn;

/*
 * C is PX_AUTH_PENDING and has read nothing yet: when its input begins
 * with the preface, judge it and take it from the input.  Returns 1 when
 * C is now bound, 0 when C sent no preface (read on), -1 when C waits for
 * the rest of it or was refused (C may be freed or closing).
 */
int px_auth_preface(struct px_conn *c);

/*
 * The head REQ of C's request (C->auth not PX_AUTH_NONE, C->sess from
 * C->session by new_request()): a pending connection is bound by REQ's
 * Proxy-Authorization, a header-bound one must present it again for the
 * same session, a preface-bound one needs none.  Returns 0 when REQ may be
 * decided; -1 when it was refused (407, 429, 503; C may be freed).
 */
int px_auth_request(struct px_conn *c, const struct px_http_request *req);

#endif
