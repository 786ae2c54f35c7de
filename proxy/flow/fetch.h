/*
 * proxy/flow/fetch.h: one HTTPS exchange the proxy makes on its own behalf
 * (a token endpoint, proxy/flow/mint.h), on a server's loop.
 *
 * The host is found as an upstream's is (an IP literal, a [hosts] pin,
 * else the proxy's own resolver, proxy/proto/dns.h) and verified as an
 * upstream of a terminated tunnel is (the snapshot's upstream_ca_file or
 * the system store, proxy/tls/tlsup.h).  The whole exchange has one
 * deadline and the answer a bound (PX_MINT_RESPONSE_MAX).  The request's
 * bytes are wiped when the exchange ends: they may hold a credential.
 */
#ifndef POSTERN_PROXY_FETCH_H
#define POSTERN_PROXY_FETCH_H

#include <stddef.h>
#include <stdint.h>

struct px_server;
struct px_fetch;

/*
 * The end of an exchange: STATUS is the answer's HTTP status with its BODY
 * (BLEN bytes, valid during the call only), or 0 with ERR a sentence saying
 * what failed (never holding the request's bytes).  Called once, from the
 * loop, never from inside px_fetch_start(); the exchange is freed after.
 */
typedef void px_fetch_cb(void *arg, int status, const char *body, size_t blen, const char *err);

/*
 * Send the LEN bytes at REQ (a whole HTTP/1.1 request, "Connection: close")
 * to HOST (normal form) on PORT over verified TLS, from SRV's loop, within
 * TIMEOUT_MS.  REQ is copied.  Returns the exchange, or NULL (out of memory
 * or no TLS context; CB is then never called).
 */
struct px_fetch *px_fetch_start(struct px_server *srv, const char *host, uint16_t port,
    const char *req, size_t len, unsigned timeout_ms, px_fetch_cb *cb, void *arg);

/* Stop F: its callback is never called.  NULL is a no-op. */
void px_fetch_cancel(struct px_fetch *f);

#endif
