/*
 * proxy/flow/replace.h: the session's placeholders replaced by their
 * values in the URL path, the body and the client's WebSocket text frames
 * of a request inside a terminated tunnel, for a secret bound to the
 * tunnel's host with "inject = HOST replace WHERE" (conf/inject.h).  The
 * codec is proxy/proto/bodyph.h; this is where the flow hands it bytes.
 * Only bound hosts: a placeholder going elsewhere is refused before
 * (secret_misdirected), never replaced.
 */
#ifndef POSTERN_PROXY_FLOW_REPLACE_H
#define POSTERN_PROXY_FLOW_REPLACE_H

#include <stddef.h>
#include <stdint.h>

struct px_conn;
struct px_http_request;
struct evbuffer;

/*
 * px_http_build_tls_head() for REQ inside C's tunnel, with the path's
 * placeholders of secrets bound there "replace path" replaced by their
 * values (percent-encoded as a path segment needs).  Same arguments and
 * result; REQ is left as it was.
 */
int px_replace_build_head(struct px_conn *c, const struct px_http_request *req, const char *query,
    size_t qlen, const char *extra, size_t elen, struct evbuffer *out);

/*
 * Make ready the rewrite of C's request REQ, its head built in
 * C->fwd->pending and its framing taken: a form or JSON body to a host a
 * secret is bound to "replace body" (Content-Length: held whole, at most
 * replace_max bytes, and sent with its new length; chunked: rewritten
 * chunk by chunk), or a WebSocket upgrade bound "replace websocket".
 * Returns 0, or 1 after refusing C (413: a body over replace_max).
 */
int px_replace_begin(struct px_conn *c, const struct px_http_request *req);

/*
 * Pass N bytes of the request body (as framed on the wire) from IN to
 * OUT, rewritten when px_replace_begin() made a rewrite ready, else as
 * they are.  Returns 0, -EPROTO (bad framing) or -ENOMEM.
 */
int px_replace_body(struct px_conn *c, struct evbuffer *in, struct evbuffer *out, size_t n);

/* Nonzero when px_replace_body() is to be used for C's request body. */
int px_replace_has_body(const struct px_conn *c);

/*
 * The client's WebSocket bytes buffered at IN, after a 101: the buffer to
 * pass on, IN itself when nothing is rewritten, else one holding the
 * rewritten frames (IN is then emptied; a frame not yet whole is kept
 * aside).  Returns NULL after closing C: frames the proxy will not pass.
 */
struct evbuffer *px_replace_ws(struct px_conn *c, struct evbuffer *in);

/* Nonzero when a secret of C's session is bound to the tunnel's host and
 * port with "replace": only the HTTP/1.1 path rewrites, so no h2. */
int px_replace_binds(const struct px_conn *c);

#endif
