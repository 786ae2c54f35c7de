/*
 * bridge/relay.h: the bridge's relay.  Loopback TCP listeners in, one new
 * connection to the proxy's UNIX socket per accepted TCP connection out, and
 * the bytes moved both ways (copied while the destination keeps up, spliced
 * through a pipe per direction once it lags), in one thread driven by one
 * epoll instance.  Other file descriptors (the bridge's signalfd) can be
 * watched by the same loop.
 */
#ifndef POSTERN_BRIDGE_RELAY_H
#define POSTERN_BRIDGE_RELAY_H

#include <stddef.h>
#include <sys/socket.h>

struct br_relay;

/* Called from br_relay_run() when a watched descriptor is readable. */
typedef void (*br_watch_cb)(int fd, void *arg);

/*
 * Create a relay towards the UNIX stream socket at PATH (copied; a path
 * name, not an abstract name).  Nothing is connected yet: every accepted
 * TCP connection later opens its own UNIX connection, so PATH need not exist
 * now.  Returns the relay, or NULL with errno set: ENAMETOOLONG when PATH
 * does not fit in sun_path, EINVAL when it is empty, ENOMEM, or what
 * epoll_create1(2) failed with.  The caller owns it and frees it with
 * br_relay_free().
 */
struct br_relay *br_relay_new(const char *path);

/*
 * Close every listener, connection and watched descriptor of R and free R.
 * br_relay_free(NULL) does nothing.
 */
void br_relay_free(struct br_relay *r);

/*
 * Open a TCP listener on SA (LEN bytes, AF_INET or AF_INET6; an AF_INET6
 * listener is IPv6-only) and add it to R.  The socket is listening when this
 * returns, so a client may connect at once: its connection waits in the
 * backlog until br_relay_run() accepts it.  When BOUND is not NULL the
 * address actually bound (with the kernel's port when SA's port is 0) is
 * stored there.  Returns 0, or a negative errno from socket(2), bind(2) or
 * listen(2); -EADDRNOTAVAIL or -EAFNOSUPPORT mean the namespace has no such
 * address or family, which the caller may choose to ignore.
 */
int br_relay_listen(struct br_relay *r, const struct sockaddr *sa,
    socklen_t len, struct sockaddr_storage *bound);

/*
 * Add FD, a stream socket of any family already listening (non-blocking),
 * as a listener of R whose connections are relayed as they are: R owns FD
 * on success.  Returns 0, or a negative errno (-ENOMEM, or from
 * epoll_ctl(2)); FD is then still the caller's.
 */
int br_relay_adopt(struct br_relay *r, int fd);

/*
 * Like br_relay_listen(), for a --forward: each connection accepted on SA
 * is not relayed as it is but asked of the proxy as "CONNECT TARGET"
 * (TARGET, "HOST:PORT", is copied), and its bytes flow only once the proxy
 * answers 2xx.  Any other answer, or none, closes the client's connection
 * unanswered (EOF or a reset) and is said on stderr, once per TARGET and
 * reason.  Several listeners may share one TARGET (127.0.0.1 and ::1).
 * Returns as br_relay_listen(), or -ENOMEM.
 */
int br_relay_forward(struct br_relay *r, const struct sockaddr *sa,
    socklen_t len, const char *target, struct sockaddr_storage *bound);

/*
 * Have br_relay_run() call CB(FD, ARG) whenever FD is readable (level
 * triggered).  R takes ownership of FD and closes it in br_relay_free().
 * Returns 0 or a negative errno (-ENOMEM, or from epoll_ctl(2)).
 */
int br_relay_watch(struct br_relay *r, int fd, br_watch_cb cb, void *arg);

/*
 * Run the loop: accept, connect, relay and answer 503 when the UNIX socket
 * cannot be reached, until br_relay_stop() is called (typically from a watch
 * callback).  A failing connection is closed on its own and never stops the
 * loop.  Returns 0 after br_relay_stop(), or a negative errno when
 * epoll_wait(2) itself fails.
 */
int br_relay_run(struct br_relay *r);

/* Make br_relay_run() return once the events in hand have been handled. */
void br_relay_stop(struct br_relay *r);

/* Log the body of a proxy's refusal, P up to END (untrusted), one escaped
 * log line ("  TEXT") per line of it, blank lines left out. */
void br_relay_log_body(const char *p, const char *end);

#endif
