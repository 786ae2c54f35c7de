/*
 * proxy/core/io.h: every read and write the proxy makes itself on a socket
 * that a libevent bufferevent owns, or that a tunnel's relay took over.
 *
 * A bufferevent reads and writes its socket on its own; these functions
 * do it in its place when that saves a loop pass, an epoll_ctl(2) or a
 * system call (the callers say which).  They are the only bypasses of
 * libevent in the proxy: no other file calls recv(2), send(2), readv(2),
 * writev(2) or evbuffer_(un)freeze() on such a socket or its buffers.
 *
 * Checked against libevent 2.1.12-stable (Debian 12), and relied on:
 *  1. A socket bufferevent (bufferevent_socket_new()) keeps its input
 *     frozen at the end (evbuffer_freeze(in, 0)) and its output frozen at
 *     the front (evbuffer_freeze(out, 1)), and unfreezes each only around
 *     its own evbuffer_read() / evbuffer_write_atmost().  A frozen end
 *     refuses evbuffer_add() and evbuffer_reserve_space() (-1); a frozen
 *     front refuses evbuffer_drain() and evbuffer_write_atmost() (-1).
 *  2. One evbuffer_unfreeze() opens the end the bufferevent froze, and
 *     one evbuffer_freeze() closes it again as it was.
 *  3. Its read takes at most 4096 bytes a call (EVBUFFER_MAX_READ in
 *     buffer.c) however much is waiting, one call a loop pass.
 *  4. The callbacks of its input (evbuffer_add_cb()) run inside that read,
 *     before it returns and before the input's end is frozen again, with
 *     n_added the bytes it read; evbuffer_commit_space() runs them again,
 *     at once, from inside.
 *  5. A socket bufferevent whose output is empty has nothing queued for
 *     its socket: bytes written to the socket directly go out in order.
 *  6. Its read runs the read callback after bytes, and at EOF or an error
 *     disables EV_READ and then runs the event callback with
 *     BEV_EVENT_READING and BEV_EVENT_EOF or BEV_EVENT_ERROR.
 *     px_conn_cli_read_own() (flow/conn.c) reads a client with an event
 *     of its own, px_io_bev_read_now(), and does the same.  That event,
 *     added on the socket before the bufferevent's read is disabled,
 *     keeps the socket's epoll registration as it is: a cost (no
 *     epoll_ctl(2)), measured by tests/bench, not checked here.
 * tests/unit/test-io.c checks 1 to 6 against the libevent it is built
 * with, and fails when one changes.
 *
 * The rule: a bypass of libevent is allowed only with a measured gain
 * beyond the machine's noise in an A/B of alternating runs (tests/bench/).
 * One that saves instructions but no measurable time goes back to the
 * plain libevent way.
 */
#ifndef POSTERN_PROXY_IO_H
#define POSTERN_PROXY_IO_H

#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>

struct bufferevent;
struct evbuffer;

/* ---- plain sockets ---------------------------------------------------------- */

/*
 * Inline, as the tunnel relay (flow/splice.c) had them before: it calls
 * them a few times a request, and out of line they cost a tunnelled TLS
 * request 4% more instructions (make bench-instr).
 */

/* One recv(2) of at most LEN bytes from FD into BUF, never blocking,
 * FLAGS added (MSG_PEEK).  The bytes read, 0 at EOF, or a negative errno
 * (-EAGAIN: nothing there).  EINTR is retried. */
static inline ssize_t
px_io_recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t n;

	do
		n = recv(fd, buf, len, flags | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* One send(2) of LEN bytes of BUF to FD, never blocking, no SIGPIPE.
 * The bytes written, or a negative errno (-EAGAIN: the socket is full).
 * EINTR is retried. */
static inline ssize_t
px_io_send(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* ---- under a socket bufferevent ------------------------------------------- */

/*
 * Queue LEN bytes of DATA on BEV's output, written to its socket at once
 * when nothing waits before them and BEV is a socket's bufferevent (not
 * a filter): what the socket does not take now is queued as before,
 * errors included (BEV's own write meets them and reports them).  0, or
 * -1 when out of memory.  Relies on 5.
 */
int px_io_bev_send(struct bufferevent *bev, const void *data, size_t len);
/* The same for the first N bytes of SRC (writev(2) of its chains); they
 * leave SRC either way.  0, or -1 when out of memory. */
int px_io_bev_send_buffer(struct bufferevent *bev, struct evbuffer *src, size_t n);
/*
 * One recv(2) of at most BEV's single-read size into its input, as BEV's
 * own read would add it (a socket's bufferevent, not a filter): the
 * input's end unfrozen for just that read.  The bytes read, 0 at EOF, or
 * a negative errno (-EAGAIN: nothing there; -ENOMEM: no room made, BEV's
 * own read should take it).  Relies on 1 and 2.
 */
ssize_t px_io_bev_read_now(struct bufferevent *bev);
/*
 * As BEV's own write (a socket's bufferevent): at most MAX bytes of its
 * output to its socket now, the output's front unfrozen for just that
 * write.  The bytes written, or -1: an error is left in the output for
 * BEV's own write to meet and report.  Relies on 1 and 2.
 */
ssize_t px_io_bev_write_now(struct bufferevent *bev, size_t max);
/*
 * Make each read of BEV's own (a socket's bufferevent) that took its
 * full 4096 bytes read on at once, one readv(2) of up to PX_IO_TOPUP
 * more into the same input, before BEV's read callback runs.  A read that
 * took less costs nothing more; EOF and errors are left for BEV's next
 * read.  0, or -1 when out of memory.  Relies on 3 and 4.
 */
#define PX_IO_TOPUP (64 * 1024 - 256)
int px_io_bev_topup(struct bufferevent *bev);

#endif
