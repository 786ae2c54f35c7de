/*
 * proxy/flow/connect.h: connect to one of a list of vetted addresses, Happy
 * Eyeballs style (RFC 8305).
 */
#ifndef POSTERN_PROXY_CONNECT_H
#define POSTERN_PROXY_CONNECT_H

#include <stddef.h>
#include <sys/socket.h>

struct event_base;
struct px_connector;

/*
 * Called once, from the event loop: FD is a connected non-blocking socket
 * now owned by the callee and INDEX the address it reached; or FD is -1 and
 * ERR the errno of the last failure (ETIMEDOUT when the overall timeout
 * ran out).  The connector is freed before the call.
 */
typedef void (*px_connect_cb)(int fd, int err, size_t index, void *arg);

/*
 * Start connecting to ADDRS[0..N) (ports set, already vetted, in the order
 * to try: interleaved by family); only the first 16 are ever tried.  A new attempt starts every 250 ms
 * (RFC 8305 §5 "Connection Attempt Delay") or as soon as the previous one
 * fails; the first to succeed wins and the others are closed.  Gives up
 * after TIMEOUT_MS.  Returns NULL with errno on immediate failure.
 */
struct px_connector *px_connect_start(struct event_base *base,
    const struct sockaddr_storage *addrs, const socklen_t *lens, size_t n,
    unsigned timeout_ms, px_connect_cb cb, void *arg);

/* Stop: close every attempt; the callback is never called.  NULL is ok. */
void px_connect_cancel(struct px_connector *c);

#endif
