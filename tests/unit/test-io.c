/*
 * tests/unit/test-io.c: proxy/core/io.c, the proxy's own reads and writes
 * under libevent's bufferevents.  First what of libevent they rely on
 * (io.h, 1 to 5), each checked against the libevent this is built with,
 * so that an upgrade that changes one fails here; then each function of
 * io.h on a real socket bufferevent.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proxy/core/io.h"
#include "tests/unit/tap.h"

static struct event_base *base;

/* A socket bufferevent on one end of a fresh socketpair; *PEER the other. */
static struct bufferevent *
pair(int *peer)
{
	int sv[2];
	struct bufferevent *bev;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
		return NULL;
	bev = bufferevent_socket_new(base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	*peer = sv[1];
	return bev;
}

/* Write all of LEN bytes of BUF to FD (nonblocking, small enough to fit). */
static int
put(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len;
}

/* What the input callbacks saw during one read (io.h, 3 and 4). */
struct seen {
	int calls, nested;
	size_t first_added;
	int reserve_ok;	/* the input's end was open inside the callback */
	int commit_ok;
	int inside;
};

static void
seen_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct seen *s = arg;
	struct evbuffer_iovec v;

	if (info->n_added == 0)
		return;
	if (s->inside) {
		s->nested++;
		return;
	}
	if (s->calls++ > 0)
		return;
	s->first_added = info->n_added;
	s->reserve_ok = evbuffer_reserve_space(buf, 1, &v, 1) == 1;
	if (s->reserve_ok) {
		((char *)v.iov_base)[0] = '+';
		v.iov_len = 1;
		s->inside = 1;
		s->commit_ok = evbuffer_commit_space(buf, &v, 1) == 0;
		s->inside = 0;
	}
}

static size_t read_cb_len;

static void
len_read_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	if (read_cb_len == 0)
		read_cb_len = evbuffer_get_length(bufferevent_get_input(bev));
}

static short event_what;
static int event_read_on;

static void
what_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)arg;
	event_what = what;
	event_read_on = (bufferevent_get_enabled(bev) & EV_READ) != 0;
}

static void
test_libevent(void)
{
	struct bufferevent *bev;
	struct evbuffer *in, *out;
	struct evbuffer_iovec v;
	struct seen s;
	char big[20000];
	int peer;

	tap_diag("libevent %s", event_get_version());
	bev = pair(&peer);
	if (!tap_ok(bev != NULL, "a socket bufferevent"))
		return;
	in = bufferevent_get_input(bev);
	out = bufferevent_get_output(bev);

	/* 1: the input's end and the output's front are frozen. */
	tap_ok(evbuffer_add(in, "x", 1) == -1, "1: its input refuses evbuffer_add (end frozen)");
	tap_ok(evbuffer_reserve_space(in, 16, &v, 1) == -1,
	    "1: its input refuses evbuffer_reserve_space (end frozen)");
	tap_ok(evbuffer_add(out, "abc", 3) == 0, "1: its output takes evbuffer_add (end open)");
	tap_ok(evbuffer_drain(out, 1) == -1 && evbuffer_get_length(out) == 3,
	    "1: its output refuses evbuffer_drain (front frozen)");
	tap_ok(evbuffer_write_atmost(out, bufferevent_getfd(bev), -1) == -1 &&
	    evbuffer_get_length(out) == 3, "1: its output refuses evbuffer_write_atmost (front frozen)");

	/* 2: one unfreeze opens what the bufferevent froze, one freeze
	 * closes it again. */
	evbuffer_unfreeze(in, 0);
	tap_ok(evbuffer_add(in, "x", 1) == 0, "2: one evbuffer_unfreeze opens the input's end");
	evbuffer_freeze(in, 0);
	tap_ok(evbuffer_add(in, "y", 1) == -1 && evbuffer_get_length(in) == 1,
	    "2: one evbuffer_freeze closes it again");
	tap_ok(evbuffer_drain(in, 1) == 0, "2: the input's front stays open");
	evbuffer_unfreeze(out, 1);
	tap_ok(evbuffer_drain(out, 1) == 0, "2: one evbuffer_unfreeze opens the output's front");
	evbuffer_freeze(out, 1);
	tap_ok(evbuffer_drain(out, 1) == -1 && evbuffer_get_length(out) == 2,
	    "2: one evbuffer_freeze closes it again");
	bufferevent_free(bev);
	close(peer);

	/* 3 and 4: one read takes 4096 bytes of 20000 waiting; the input's
	 * callbacks run inside it, the end open, and a commit from inside
	 * runs them again at once. */
	bev = pair(&peer);
	if (bev == NULL)
		return;
	in = bufferevent_get_input(bev);
	memset(big, 'b', sizeof(big));
	memset(&s, 0, sizeof(s));
	evbuffer_add_cb(in, seen_cb, &s);
	read_cb_len = 0;
	bufferevent_setcb(bev, len_read_cb, NULL, NULL, NULL);
	tap_ok(put(peer, big, sizeof(big)), "20000 bytes wait");
	tap_ok(bufferevent_get_max_single_read(bev) > 4096,
	    "3: the bufferevent's single-read size is above 4096 (%ld)",
	    (long)bufferevent_get_max_single_read(bev));
	bufferevent_enable(bev, EV_READ);
	event_base_loop(base, EVLOOP_ONCE);
	tap_ok(s.first_added == 4096, "3: its read takes 4096 bytes a call (took %zu)",
	    s.first_added);
	tap_ok(s.reserve_ok, "4: inside the input's callback, its end is open");
	tap_ok(s.commit_ok && s.nested == 1,
	    "4: a commit inside the callback runs the callbacks again at once (%d)", s.nested);
	tap_ok(read_cb_len == 4097, "4: all before the read callback (it saw %zu)", read_cb_len);
	tap_ok(evbuffer_add(in, "x", 1) == -1, "4: after the read its end is frozen again");

	/* 6: at EOF, EV_READ off, then the event callback. */
	event_what = 0;
	event_read_on = 1;
	bufferevent_setcb(bev, NULL, NULL, what_event_cb, NULL);
	close(peer);
	while (event_what == 0 && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	tap_ok(event_what == (BEV_EVENT_READING | BEV_EVENT_EOF),
	    "6: at EOF its event callback has BEV_EVENT_READING|BEV_EVENT_EOF (0x%x)",
	    (unsigned)event_what);
	tap_ok(!event_read_on, "6: with EV_READ disabled first");
	bufferevent_free(bev);
}

static void
test_plain(void)
{
	int sv[2];
	char b[8];

	if (!tap_ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0, "a socketpair"))
		return;
	tap_ok(px_io_recv(sv[0], b, sizeof(b), 0) == -EAGAIN, "px_io_recv: -EAGAIN when empty");
	tap_ok(px_io_send(sv[1], "abc", 3) == 3, "px_io_send: writes");
	tap_ok(px_io_recv(sv[0], b, 1, MSG_PEEK) == 1 && b[0] == 'a', "px_io_recv: MSG_PEEK");
	tap_ok(px_io_recv(sv[0], b, sizeof(b), 0) == 3 && memcmp(b, "abc", 3) == 0,
	    "px_io_recv: the peeked bytes are still there");
	close(sv[1]);
	tap_ok(px_io_recv(sv[0], b, sizeof(b), 0) == 0, "px_io_recv: 0 at EOF");
	tap_ok(px_io_send(sv[0], "x", 1) == -EPIPE, "px_io_send: -EPIPE, no SIGPIPE");
	close(sv[0]);
}

static void
test_bev(void)
{
	struct bufferevent *bev;
	struct evbuffer *in, *out, *src;
	char b[64], big[40000];
	ssize_t n;
	int peer;

	bev = pair(&peer);
	if (!tap_ok(bev != NULL, "a socket bufferevent"))
		return;
	in = bufferevent_get_input(bev);
	out = bufferevent_get_output(bev);

	/* px_io_bev_send: at once on an empty output, queued behind bytes. */
	tap_ok(px_io_bev_send(bev, "hello", 5) == 0 && evbuffer_get_length(out) == 0,
	    "px_io_bev_send: written at once, nothing queued");
	tap_ok(read(peer, b, sizeof(b)) == 5 && memcmp(b, "hello", 5) == 0,
	    "px_io_bev_send: the peer has them before the loop runs");
	tap_ok(evbuffer_add(out, "one ", 4) == 0 && px_io_bev_send(bev, "two", 3) == 0 &&
	    evbuffer_get_length(out) == 7, "px_io_bev_send: queued behind bytes waiting");
	tap_ok(read(peer, b, sizeof(b)) == -1 && errno == EAGAIN,
	    "px_io_bev_send: nothing jumps the queue");

	/* px_io_bev_write_now: the output written, its front frozen again. */
	n = px_io_bev_write_now(bev, 1024);
	tap_ok(n == 7 && evbuffer_get_length(out) == 0, "px_io_bev_write_now: wrote %zd", n);
	tap_ok(read(peer, b, sizeof(b)) == 7 && memcmp(b, "one two", 7) == 0,
	    "px_io_bev_write_now: in order");
	tap_ok(evbuffer_add(out, "z", 1) == 0 && evbuffer_drain(out, 1) == -1,
	    "px_io_bev_write_now: the output's front frozen again");
	tap_ok(px_io_bev_write_now(bev, 1024) == 1 && read(peer, b, sizeof(b)) == 1,
	    "px_io_bev_write_now: again");

	/* px_io_bev_send_buffer: SRC's bytes go, at once or queued. */
	src = evbuffer_new();
	evbuffer_add(src, "abcdef", 6);
	tap_ok(px_io_bev_send_buffer(bev, src, 4) == 0 && evbuffer_get_length(src) == 2 &&
	    evbuffer_get_length(out) == 0, "px_io_bev_send_buffer: 4 of 6 written at once");
	tap_ok(read(peer, b, sizeof(b)) == 4 && memcmp(b, "abcd", 4) == 0,
	    "px_io_bev_send_buffer: the peer has them");
	evbuffer_add(out, "q", 1);
	tap_ok(px_io_bev_send_buffer(bev, src, 2) == 0 && evbuffer_get_length(src) == 0 &&
	    evbuffer_get_length(out) == 3, "px_io_bev_send_buffer: queued behind bytes waiting");
	evbuffer_free(src);
	(void)px_io_bev_write_now(bev, 1024);
	(void)read(peer, b, sizeof(b));

	/* px_io_bev_read_now: one read into the input, its end frozen again,
	 * and the bufferevent's own read carries on after it. */
	tap_ok(px_io_bev_read_now(bev) == -EAGAIN, "px_io_bev_read_now: -EAGAIN when empty");
	tap_ok(put(peer, "ping", 4) && px_io_bev_read_now(bev) == 4 &&
	    evbuffer_get_length(in) == 4, "px_io_bev_read_now: read into the input");
	tap_ok(evbuffer_add(in, "x", 1) == -1, "px_io_bev_read_now: its end frozen again");
	read_cb_len = 0;
	bufferevent_setcb(bev, len_read_cb, NULL, NULL, NULL);
	bufferevent_enable(bev, EV_READ);
	tap_ok(put(peer, "pong", 4), "more waits");
	event_base_loop(base, EVLOOP_ONCE);
	tap_ok(read_cb_len == 8, "px_io_bev_read_now: the bufferevent's own read after it (%zu)",
	    read_cb_len);
	bufferevent_disable(bev, EV_READ);
	evbuffer_drain(in, evbuffer_get_length(in));
	close(peer);
	tap_ok(px_io_bev_read_now(bev) == 0, "px_io_bev_read_now: 0 at EOF");
	bufferevent_free(bev);

	/* px_io_bev_topup: a read that filled 4096 reads on at once. */
	bev = pair(&peer);
	if (bev == NULL)
		return;
	memset(big, 't', sizeof(big));
	tap_ok(px_io_bev_topup(bev) == 0, "px_io_bev_topup: on");
	tap_ok(put(peer, big, sizeof(big)), "40000 bytes wait");
	read_cb_len = 0;
	bufferevent_setcb(bev, len_read_cb, NULL, NULL, NULL);
	bufferevent_enable(bev, EV_READ);
	event_base_loop(base, EVLOOP_ONCE);
	tap_ok(read_cb_len == sizeof(big),
	    "px_io_bev_topup: one read callback sees all 40000 (%zu)", read_cb_len);
	bufferevent_disable(bev, EV_READ);
	evbuffer_drain(bufferevent_get_input(bev), sizeof(big));
	read_cb_len = 0;
	bufferevent_enable(bev, EV_READ);
	tap_ok(put(peer, "short", 5), "5 bytes wait");
	event_base_loop(base, EVLOOP_ONCE);
	tap_ok(read_cb_len == 5, "px_io_bev_topup: a short read as before (%zu)", read_cb_len);
	tap_ok(evbuffer_add(bufferevent_get_input(bev), "x", 1) == -1,
	    "px_io_bev_topup: the input's end frozen again");
	bufferevent_free(bev);
	close(peer);
}

int
main(void)
{
	base = event_base_new();
	if (!tap_ok(base != NULL, "an event base"))
		return tap_done();
	test_libevent();
	test_plain();
	test_bev();
	event_base_free(base);
	return tap_done();
}
