/*
 * proxy/core/io.c: the proxy's own reads and writes under libevent's
 * bufferevents and on a relay's sockets (see io.h, which lists what of
 * libevent they rely on).
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/util.h>

#include "proxy/core/io.h"

/* The most a socket bufferevent's read takes in one call: libevent's
 * EVBUFFER_MAX_READ (io.h, 3). */
#define LIBEVENT_MAX_READ 4096

int
px_io_bev_send(struct bufferevent *bev, const void *data, size_t len)
{
	struct evbuffer *out = bufferevent_get_output(bev);
	ssize_t n = 0;

	if (len > 0 && evbuffer_get_length(out) == 0 && bufferevent_get_underlying(bev) == NULL) {
		n = px_io_send(bufferevent_getfd(bev), data, len);
		/* EAGAIN, or an error the bufferevent meets on its own
		 * write of the same bytes and reports as it always did. */
		if (n < 0)
			n = 0;
	}
	if ((size_t)n == len)
		return 0;
	return evbuffer_add(out, (const char *)data + n, len - (size_t)n);
}

int
px_io_bev_send_buffer(struct bufferevent *bev, struct evbuffer *src, size_t n)
{
	struct evbuffer *out = bufferevent_get_output(bev);
	int w;

	/* An error is left for the bufferevent's own write to meet and
	 * report, as in px_io_bev_send(). */
	if (n > 0 && evbuffer_get_length(out) == 0 && bufferevent_get_underlying(bev) == NULL &&
	    (w = evbuffer_write_atmost(src, bufferevent_getfd(bev), (ev_ssize_t)n)) > 0)
		n -= (size_t)w;
	if (n == 0)
		return 0;
	return evbuffer_remove_buffer(src, out, n) < 0 ? -1 : 0;
}

ssize_t
px_io_bev_read_now(struct bufferevent *bev)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t max = (size_t)bufferevent_get_max_single_read(bev);
	struct evbuffer_iovec v;
	ssize_t n = -ENOMEM;

	/* A socket bufferevent keeps its input's end frozen but while its
	 * own read adds to it; this read is one of its reads. */
	evbuffer_unfreeze(in, 0);
	if (evbuffer_reserve_space(in, (ev_ssize_t)max, &v, 1) == 1) {
		if (v.iov_len > max)
			v.iov_len = max;
		n = px_io_recv(bufferevent_getfd(bev), v.iov_base, v.iov_len, 0);
		/* Nothing read: the reservation lapses uncommitted. */
		if (n > 0) {
			v.iov_len = (size_t)n;
			if (evbuffer_commit_space(in, &v, 1) != 0)
				n = -ENOMEM;
		}
	}
	evbuffer_freeze(in, 0);
	return n;
}

ssize_t
px_io_bev_write_now(struct bufferevent *bev, size_t max)
{
	struct evbuffer *out = bufferevent_get_output(bev);
	evutil_socket_t fd = bufferevent_getfd(bev);
	ssize_t n;

	if (fd < 0)
		return -1;
	/* The socket's bufferevent keeps its output's front frozen but
	 * while it writes; this write is one of its writes. */
	evbuffer_unfreeze(out, 1);
	n = evbuffer_write_atmost(out, fd, (ev_ssize_t)max);
	evbuffer_freeze(out, 1);
	return n;
}

/* Set while topup_cb() commits: the commit runs the input's callbacks
 * again, this one among them (io.h, 4). */
static _Thread_local int topup_busy;

static void
topup_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct bufferevent *bev = arg;
	struct evbuffer_iovec v[2];
	struct iovec iov[2];
	evutil_socket_t fd;
	ssize_t n;
	size_t left;
	int nv, i;

	if (topup_busy || info->n_added != LIBEVENT_MAX_READ || (fd = bufferevent_getfd(bev)) < 0)
		return;
	nv = evbuffer_reserve_space(buf, PX_IO_TOPUP, v, 2);
	if (nv <= 0)
		return;
	for (i = 0; i < nv; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
	}
	do {
		n = readv(fd, iov, nv);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return;	/* the reservation lapses with the next one */
	left = (size_t)n;
	for (i = 0; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	topup_busy = 1;
	evbuffer_commit_space(buf, v, nv);
	topup_busy = 0;
}

int
px_io_bev_topup(struct bufferevent *bev)
{
	return evbuffer_add_cb(bufferevent_get_input(bev), topup_cb, bev) != NULL ? 0 : -1;
}
