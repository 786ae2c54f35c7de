/*
 * proxy/flow/leakscan.h: the session's own secrets and canaries in what a
 * request sends (proxy/proto/leak.h is the scan).  A request to a host a
 * secret of its session is not bound to may carry neither that secret's
 * placeholder nor its value, in any encoding the scan knows, in its target,
 * headers, body, or the host name itself; no request to any host may carry
 * a canary (conf/canary.h).  A refusal is secret_misdirected; a canary also
 * writes an alert line and counts in postern_canary_total.
 *
 * A head is refused before anything goes upstream.  A body streams: its
 * bytes go as they come, and the scan keeps the last few in a carry; when
 * a piece completes an occurrence, that piece does not go, and the caller
 * cuts the connection (the upstream sees a body cut short).
 *
 * The scan is made for a connection the first time a request of a session
 * with secrets or canaries needs it, and freed with the connection.
 */
#ifndef POSTERN_PROXY_LEAKSCAN_H
#define POSTERN_PROXY_LEAKSCAN_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

struct px_conn;
struct px_leakscan;
struct px_http_request;
struct px_h2_req;

/*
 * Judge REQ, a request of C to HOST:PORT: its target and header values.
 * Makes the body's scan ready (or none).  Returns 0, or 1 when C was
 * refused (403 secret_misdirected, audited): the caller stops.
 */
int px_leakscan_request(struct px_conn *c, const struct px_http_request *req, const char *host,
    uint16_t port);

/*
 * Judge host name HOST (what a CONNECT, a target or an SNI names) of C on
 * PORT.  Returns 0, or 1 when it carries a needle: with REFUSE, C was
 * refused (403); without, the refusal is audited and C's close names it:
 * the caller closes C.
 */
int px_leakscan_host(struct px_conn *c, const char *host, uint16_t port, int refuse);

/*
 * The next N request-body bytes at the front of IN, about to go upstream
 * (framing included: a chunked body is scanned without it).  Returns 0,
 * or -EACCES when they complete an occurrence: none of them may go, the
 * refusal is audited and C's close names it; the caller closes C with
 * px_conn_free(c, NULL).
 */
int px_leakscan_body(struct px_conn *c, struct evbuffer *in, size_t n);

/*
 * An HTTP/2 request R of C in a terminated tunnel to HOST:PORT: its path,
 * authority and header values.  Returns 0, or 1 with the refusal's detail
 * in D (SIZE bytes), counted and any alert written: the caller refuses
 * the stream with secret_misdirected.
 */
int px_leakscan_h2(struct px_conn *c, const struct px_h2_req *r, const char *host, uint16_t port,
    char *d, size_t size);

/*
 * The scan of the DATA of R, an HTTP/2 request of C to HOST:PORT allowed
 * (px_h2_verdict's leak), with its needles in *ACTIVE; NULL when there is
 * nothing to look for.  It lives as long as C.
 */
struct px_leak;
const struct px_leak *px_leakscan_h2_body(struct px_conn *c, const struct px_h2_req *r,
    const char *host, uint16_t port, uint64_t *active);
/*
 * The DATA of C's current HTTP/2 stream carried NEEDLE of scan LEAK in
 * encoding ENC (enum px_leak_enc), and the stream was reset: count it,
 * write the alert of a canary, and the refusal's decision line.
 */
void px_leakscan_h2_hit(struct px_conn *c, const struct px_leak *leak, size_t needle, int enc);

/*
 * The session's canaries for its sandbox: up to MAX names and values into
 * NAMES and VALUES, values written in BUF (SIZE bytes).  Returns how many.
 */
size_t px_leakscan_canary_env(const struct px_conn *c, const char **names, const char **values,
    size_t max, char *buf, size_t size);

/* Free C's scan.  A NULL scan is a no-op. */
void px_leakscan_free(struct px_leakscan *ls);

#endif
