/*
 * proxy/proto/bridgereply.h: the proxy's answer to a bridge's session request
 * ("GET /.well-known/postern/session", see bridge/session.h for the
 * protocol, version 1, and postern-bridge(8) "SESSION INFO"): the
 * placeholders the session's sandbox gets and its CA, as one whole HTTP
 * response.  A pure function: no I/O, no server state.
 */
#ifndef POSTERN_PROXY_BRIDGEREPLY_H
#define POSTERN_PROXY_BRIDGEREPLY_H

#include <stddef.h>

struct evbuffer;

/* The request target a bridge asks for (origin form, RFC 9112 §3.2.1). */
#define PX_SESSINFO_PATH "/.well-known/postern/session"

/*
 * Append to OUT the whole response: "HTTP/1.1 200 OK", Content-Type
 * text/plain; charset=utf-8, Content-Length, Cache-Control: no-store,
 * Connection: close, then the body: "postern-session 1", one "env NAME
 * VALUE" line for each of the N pairs NAMES[i], VALUES[i] (in order), and
 * when CA_PEM is not NULL, "ca" and CA_PEM (one or more PEM certificate
 * blocks, LF line ends, as px_ca_pem() gives it; a missing final LF is
 * added).  Every name must be [A-Za-z_][A-Za-z0-9_]* of at most 255
 * bytes, given once; every value 1-4096 bytes of printable ASCII without
 * space; CA_PEM must have no CR or NUL: otherwise -EINVAL and OUT is
 * unchanged, since a bridge refuses to start on a body it cannot parse.
 * Returns 0, -EINVAL, or -ENOMEM (OUT unchanged).  Nothing is kept; the
 * strings stay the caller's.  The caller writes OUT and closes the
 * connection after it (the response says Connection: close).
 */
int px_bridgereply_render(struct evbuffer *out, const char *const *names,
    const char *const *values, size_t n, const char *ca_pem);

#endif
