/*
 * bridge/relay.c: accept loopback TCP, connect to the proxy's UNIX socket,
 * relay both ways (see relay.h).
 *
 * Every descriptor is non-blocking and registered edge-triggered; each side
 * of a connection remembers whether it may still be readable or writable,
 * and a flag is only cleared when a read says EAGAIN or comes back short.
 * Each direction has a pipe, and the memory a connection can pin is the
 * pipe's capacity per direction: when the destination is slow the pipe
 * fills, the bridge stops reading the source, and TCP or UNIX-socket flow
 * control pushes back on the sender instead of the bridge buffering without
 * bound.
 *
 * While the destination takes everything, bytes go recv(2) -> one buffer
 * shared by all connections -> send(2) (dir_copy()), and only what send(2)
 * leaves over goes into the pipe; while the pipe holds bytes, the source is
 * spliced into it behind them and the pipe is spliced out.  Copying looks
 * like the slower way and is not: splice(2) hands the sender's pages on to
 * the receiver, so every page in flight on the whole path (up to the
 * client's TCP receive window, megabytes) is cold when the sender fills it
 * again and when the receiver reads it, whereas a copy frees the sender's
 * pages at once and hands the receiver pages that were just written.
 * Measured (perf record -a, 1 GiB down, bench-bridge's server and client):
 * with splice(2) the server's copy into the UNIX socket and the client's
 * copy out of TCP took 11% of all samples each, against 2% and 6% with a
 * copying relay, and the whole stream went 5-20% slower.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/pump.h"
#include "base/tcp.h"
#include "base/text.h"
#include "base/unix.h"
#include "bridge/forward.h"
#include "bridge/relay.h"
#include "bridge/upstream.h"

/* Upper bound on one splice(2) call; the pipe's slots limit it further. */
#define SPLICE_CHUNK (1U << 20)
/* Accepts per listener event, so one busy listener cannot starve the rest. */
#define ACCEPT_BATCH 64
/* A UNIX listener with a full backlog: retry this often, for this long. */
#define RETRY_MS 5
#define CONNECT_PATIENCE_MS 5000
/* After a 503: how long to wait for the client's EOF before closing. */
#define DRAIN_MS 3000
/* Out of descriptors: how long the listeners pause before accepting again. */
#define PAUSE_MS 100
#define MAX_EVENTS 128
/*
 * A direction that moves bulk data (a full read, a full pipe) has its pipe
 * grown from the kernel's default (16 slots) to this many bytes, so each
 * read moves more and the bridge wakes up less often.  It bounds what one
 * direction can hold.  Not more: the pipe's pages are in flight too, and
 * with 1 MiB (the unprivileged maximum) the upload went slower, not faster
 * (bench-bridge's bulk up, 5 rounds side by side: 2771 against 3265 MB/s).
 */
#define BULK_PIPE (256 * 1024)
/*
 * A forwarded connection's CONNECT answer, head and (for a refusal) body:
 * the proxy's are a few hundred bytes; more is not an answer to log.
 */
#define FWD_REPLY_MAX 4096
/*
 * The relay's copy buffer (dir_copy()), one for all connections: the size
 * of one recv(2) of bulk data.  A read never takes more than the empty pipe
 * can hold, for what send(2) leaves over goes there: COPY_MIN bytes until
 * the pipe's size is known (an empty pipe has room for two pages at the
 * least, PIPE_MIN_DEF_BUFFERS), which it is once a read filled COPY_MIN and
 * the pipe was grown to BULK_PIPE.  A small message costs a recv(2) and a
 * send(2): the short recv(2) says the socket is empty, so no third call
 * has to say EAGAIN.
 */
#define COPY_MAX BULK_PIPE
#define COPY_MIN 8192

enum handle_kind {
	H_LISTENER,
	H_WATCH,
	H_TCP,
	H_UNIX,
};

/* What epoll_event.data.ptr points at: one per registered descriptor. */
struct handle {
	enum handle_kind kind;
};

/*
 * A --forward: what its listeners' connections ask the proxy to CONNECT
 * to, and the last refusal said on stderr, so that a client retrying in a
 * loop gets it said once, not once per attempt.
 */
struct fwd {
	char *target;
	char said[BS_REPLY_REASON_MAX + 8];
	struct fwd *next;
};

struct listener {
	struct handle h;
	int fd;
	bool paused;
	struct fwd *fwd;    /* NULL: a proxy listener, bytes go as they are */
	struct listener *next;
};

struct watch {
	struct handle h;
	int fd;
	br_watch_cb cb;
	void *arg;
	struct watch *next;
};

enum conn_state {
	C_NEW,        /* accepted, UNIX connect not tried yet */
	C_CONNECTING, /* UNIX backlog was full; retrying on a timer */
	C_TCPWAIT,    /* tcp: upstream, its connect(2) in progress */
	C_HANDSHAKE,  /* forward: CONNECT sent, reading the proxy's answer */
	C_REFUSED,    /* forward: refused, reading the answer's body to log it */
	C_RELAY,      /* splicing both ways */
	C_DRAIN,      /* 503 sent, reading the client until its EOF */
	C_DEAD,       /* closed, freed after the current batch of events */
};

/*
 * One side of a connection: a socket, what epoll last said about it, and
 * whether EPOLLOUT is in its interest set.  EPOLLOUT is only asked for once
 * a write to the side has met a full buffer: otherwise every read by the
 * peer of a UNIX socket (unix_write_space) would wake the bridge for
 * nothing, twice per request-response exchange.
 */
struct side {
	struct handle h;
	int fd;
	bool rd, wr;
	bool out;
	bool hup;  /* epoll said EPOLLRDHUP, EPOLLHUP or EPOLLERR once */
};

/* One direction: SRC -> pipe -> DST. */
struct dir {
	struct side *src, *dst;
	struct bs_pipe p; /* the pipe (-1 when none) */
	size_t inpipe; /* bytes in the pipe, not yet out */
	bool grown;    /* the pipe was enlarged to BULK_PIPE (or tried) */
	bool eof;      /* SRC said EOF */
	bool dead;     /* DST refused writes; this direction was abandoned */
	bool shut;     /* DST has been shut down for writing */
};

struct conn {
	struct br_relay *r;
	enum conn_state state;
	struct side tcp, unx;
	struct dir up;   /* client -> proxy */
	struct dir down; /* proxy -> client */
	uint64_t deadline;
	struct fwd *fwd;            /* the --forward it came in on, or NULL */
	char *reply;                /* forward: the answer so far (FWD_REPLY_MAX) */
	size_t nreply;
	struct bs_reply rep;        /* forward: the parsed head, once C_REFUSED */
	bool queued;                /* on the timer queue */
	struct conn *prev, *next;   /* all live connections */
	struct conn *wprev, *wnext; /* connections waiting on the timer */
	struct conn *dnext;         /* dead, to be freed */
};

struct br_relay {
	int ep;
	struct br_upstream up;      /* the proxy (upstream.h) */
	struct listener *listeners;
	struct watch *watches;
	struct fwd *fwds;
	struct conn *conns;
	struct conn *waiting;
	struct conn *dead;
	/*
	 * Empty pipes kept for the next connections: creating and destroying
	 * two pipes is six system calls and two inodes per connection, a
	 * tenth of the bridge's cost for a short one.
	 */
	struct bs_pipe_pool pool;
	bool stop;
	bool paused;
	uint64_t resume_at;
	/* Report a failing proxy socket once per outage, not once per client. */
	bool upstream_down;
	/* Likewise running out of descriptors or memory on our side. */
	bool starved;
	/* dir_copy()'s buffer: one thread, one buffer (COPY_MAX bytes). */
	char *buf;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int
ep_add(struct br_relay *r, int fd, uint32_t events, struct handle *h)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = h;
	if (epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

static void
ep_mod(struct br_relay *r, int fd, uint32_t events, struct handle *h)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = h;
	(void)epoll_ctl(r->ep, EPOLL_CTL_MOD, fd, &ev);
}

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

struct br_relay *
br_relay_new(const char *path)
{
	struct br_relay *r = NULL;
	struct br_upstream up;
	const char *why;
	int saved, err;

	if (path == NULL || path[0] == '\0') {
		errno = EINVAL;
		return NULL;
	}
	err = br_upstream_parse(path, &up, &why);
	if (err < 0) {
		errno = -err;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->up = up;
	/* Its pages are only touched by bulk data. */
	r->buf = malloc(COPY_MAX);
	r->ep = r->buf != NULL ? epoll_create1(EPOLL_CLOEXEC) : -1;
	if (r->ep < 0) {
		saved = r->buf != NULL ? errno : ENOMEM;
		free(r->buf);
		free(r);
		errno = saved;
		return NULL;
	}
	return r;
}

static void conn_close(struct conn *c);
static void reap_dead(struct br_relay *r);

void
br_relay_free(struct br_relay *r)
{
	struct listener *l, *ln;
	struct watch *w, *wn;
	struct fwd *f, *fn;

	if (r == NULL)
		return;
	while (r->conns != NULL)
		conn_close(r->conns);
	reap_dead(r);
	for (l = r->listeners; l != NULL; l = ln) {
		ln = l->next;
		close(l->fd);
		free(l);
	}
	for (w = r->watches; w != NULL; w = wn) {
		wn = w->next;
		close(w->fd);
		free(w);
	}
	for (f = r->fwds; f != NULL; f = fn) {
		fn = f->next;
		free(f->target);
		free(f);
	}
	bs_pipe_pool_clear(&r->pool);
	close(r->ep);
	free(r->buf);
	free(r);
}

static int
listener_add(struct br_relay *r, const struct sockaddr *sa, socklen_t len,
    struct fwd *fwd, struct sockaddr_storage *bound)
{
	struct listener *l = NULL;
	socklen_t blen;
	int fd = -1, one = 1, err;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* A restarted bridge must not wait out TIME_WAIT on its own port. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		err = -errno;
		goto out;
	}
	if (sa->sa_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) {
		err = -errno;
		goto out;
	}
	if (bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0) {
		err = -errno;
		goto out;
	}
	/* Reno, not a pacing default, for its loopback connections. */
	(void)bs_tcp_loopback_reno(fd);
	if (bound != NULL) {
		blen = sizeof(*bound);
		if (getsockname(fd, (struct sockaddr *)bound, &blen) < 0) {
			err = -errno;
			goto out;
		}
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		err = -ENOMEM;
		goto out;
	}
	l->h.kind = H_LISTENER;
	l->fd = fd;
	l->fwd = fwd;
	err = ep_add(r, fd, EPOLLIN, &l->h);
	if (err < 0)
		goto out;
	l->next = r->listeners;
	r->listeners = l;
	l = NULL;
	fd = -1;
	err = 0;
out:
	free(l);
	if (fd >= 0)
		close(fd);
	return err;
}

int
br_relay_listen(struct br_relay *r, const struct sockaddr *sa, socklen_t len,
    struct sockaddr_storage *bound)
{
	return listener_add(r, sa, len, NULL, bound);
}

int
br_relay_forward(struct br_relay *r, const struct sockaddr *sa, socklen_t len,
    const char *target, struct sockaddr_storage *bound)
{
	struct fwd *f;

	/* The IPv4 and IPv6 listeners of one --forward share what was said. */
	for (f = r->fwds; f != NULL; f = f->next)
		if (strcmp(f->target, target) == 0)
			break;
	if (f == NULL) {
		f = calloc(1, sizeof(*f));
		if (f == NULL)
			return -ENOMEM;
		f->target = strdup(target);
		if (f->target == NULL) {
			free(f);
			return -ENOMEM;
		}
		f->next = r->fwds;
		r->fwds = f;
	}
	return listener_add(r, sa, len, f, bound);
}

int
br_relay_watch(struct br_relay *r, int fd, br_watch_cb cb, void *arg)
{
	struct watch *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	w->h.kind = H_WATCH;
	w->fd = fd;
	w->cb = cb;
	w->arg = arg;
	err = ep_add(r, fd, EPOLLIN, &w->h);
	if (err < 0) {
		free(w);
		return err;
	}
	w->next = r->watches;
	r->watches = w;
	return 0;
}

void
br_relay_stop(struct br_relay *r)
{
	r->stop = true;
}

/* --- the timer queue: connections retrying a connect or draining --- */

static void
wait_add(struct conn *c, uint64_t deadline)
{
	struct br_relay *r = c->r;

	if (c->queued)
		return;
	c->queued = true;
	c->deadline = deadline;
	c->wprev = NULL;
	c->wnext = r->waiting;
	if (r->waiting != NULL)
		r->waiting->wprev = c;
	r->waiting = c;
}

static void
wait_del(struct conn *c)
{
	struct br_relay *r = c->r;

	if (!c->queued)
		return;
	c->queued = false;
	if (c->wprev != NULL)
		c->wprev->wnext = c->wnext;
	else
		r->waiting = c->wnext;
	if (c->wnext != NULL)
		c->wnext->wprev = c->wprev;
	c->wprev = c->wnext = NULL;
}

/* --- the pipe pool --- */

static int
pipe_get(struct br_relay *r, struct dir *d)
{
	return bs_pipe_get(&r->pool, &d->p, 0);
}

/*
 * Give D's pipe back, or close it.  A pipe is reused only when every byte
 * spliced into it has been spliced out again, so no byte of one connection
 * can ever reach another, and only at the kernel's default size.
 */
static void
pipe_put(struct br_relay *r, struct dir *d)
{
	if (d->inpipe == 0 && !d->grown)
		bs_pipe_put(&r->pool, &d->p);
	else
		bs_pipe_close(&d->p);
}

/* --- connection life --- */

static void
conn_close(struct conn *c)
{
	struct br_relay *r = c->r;

	if (c->state == C_DEAD)
		return;
	wait_del(c);
	/* Closing a descriptor also removes it from the epoll set. */
	close_fd(&c->tcp.fd);
	close_fd(&c->unx.fd);
	pipe_put(r, &c->up);
	pipe_put(r, &c->down);
	free(c->reply);
	c->reply = NULL;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		r->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	/*
	 * Events for this connection may still sit in the batch epoll_wait()
	 * returned; free it only after that batch.
	 */
	c->state = C_DEAD;
	c->dnext = r->dead;
	r->dead = c;
}

static void
reap_dead(struct br_relay *r)
{
	struct conn *c;

	while ((c = r->dead) != NULL) {
		r->dead = c->dnext;
		free(c);
	}
}

/*
 * The proxy cannot be reached: answer the client with a 503 that names the
 * socket and the error, instead of resetting it (RFC 9110 §15.6.4: the
 * server is unable to handle the request; a reset would leave an agent
 * guessing).  Then shut our sending side and read the client until its EOF:
 * closing a socket with unread request bytes would make the kernel send a
 * reset that can destroy the 503 before the client reads it.
 */
static void
conn_refuse(struct conn *c, int err, bool local)
{
	struct br_relay *r = c->r;
	/* The path escaped (at most 4 x 107 bytes) fits, headers and all. */
	char body[768], msg[1024];
	const char *name;
	size_t blen = 0;
	int n;

	if (local && !r->starved) {
		/* Our own limits, not the proxy's fault: say which. */
		log_notice("cannot open a relay: %s; %s",
		    strerror(err), c->fwd != NULL ? "closing the forwarded connection" :
		    "answering 503");
		r->starved = true;
	} else if (!local && !r->upstream_down) {
		log_notice("proxy socket %s: %s; %s until it works",
		    r->up.name, strerror(err), c->fwd != NULL ?
		    "closing forwarded connections" : "answering 503");
		r->upstream_down = true;
	}
	if (c->fwd != NULL) {
		/*
		 * A forwarded port carries whatever its client speaks, not
		 * necessarily HTTP: a 503 would be bytes of a protocol it
		 * never asked for.  The close says "no", stderr says why.
		 */
		conn_close(c);
		return;
	}
	name = strerrorname_np(err);
	n = snprintf(body, sizeof(body), "postern-bridge: cannot %s the proxy's %s ",
	    local ? "open a relay to" : "connect to", r->up.tcp ? "TCP listener" : "UNIX socket");
	if (n < 0)
		goto fail;
	blen = (size_t)n;
	/* Control and non-ASCII bytes as \xNN, so that a strange socket
	 * path cannot break the 503 response. */
	blen += bs_escape(r->up.name, strlen(r->up.name), body + blen,
	    sizeof(body) - blen, 0);
	n = snprintf(body + blen, sizeof(body) - blen, ": %s (%s)\n",
	    strerror(err), name != NULL ? name : "?");
	if (n < 0 || (size_t)n >= sizeof(body) - blen)
		goto fail;
	blen += (size_t)n;
	n = snprintf(msg, sizeof(msg),
	    "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: text/plain\r\n"
	    "Content-Length: %zu\r\n"
	    "Connection: close\r\n"
	    "X-Postern-Reason: proxy_unavailable\r\n"
	    "\r\n%s", blen, body);
	if (n < 0 || (size_t)n >= sizeof(msg))
		goto fail;
	/* A few hundred bytes into a fresh socket's send buffer: never short. */
	if (send(c->tcp.fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n)
		goto fail;
	if (shutdown(c->tcp.fd, SHUT_WR) < 0)
		goto fail;
	if (ep_add(r, c->tcp.fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->tcp.h) < 0)
		goto fail;
	close_fd(&c->unx.fd);
	c->state = C_DRAIN;
	c->tcp.rd = true;
	wait_add(c, now_ms() + DRAIN_MS);
	return;
fail:
	conn_close(c);
}

static void conn_pump(struct conn *c);
static void conn_start_relay(struct conn *c);

/*
 * Say on stderr why the proxy would not connect a forwarded connection:
 * the status, the X-Postern-Reason and the answer's body, which names the
 * rule that is missing (proxy/flow/conn.c refuse_ex()).  Said once per forward
 * and reason, so that a client retrying in a loop does not flood stderr;
 * said again after a connection got through.  WHAT, when not NULL, stands
 * for an answer that could not be read.
 */
static void
fwd_report(struct conn *c, const char *what)
{
	struct fwd *f = c->fwd;
	char key[sizeof(f->said)];

	if (what != NULL)
		snprintf(key, sizeof(key), "%s", what);
	else
		snprintf(key, sizeof(key), "%d %s", c->rep.status, c->rep.reason);
	if (strcmp(key, f->said) == 0)
		return;
	snprintf(f->said, sizeof(f->said), "%s", key);
	if (what != NULL) {
		log_notice("forward to %s: %s; closing the connection",
		    f->target, what);
		return;
	}
	log_notice("forward to %s: the proxy refused CONNECT %s: %d %s; "
	    "closing the connection", f->target, f->target,
	    c->rep.status, c->rep.reason[0] ? c->rep.reason : "(no reason given)");
	br_relay_log_body(c->reply + c->rep.head_len, c->reply + c->nreply);
}

void
br_relay_log_body(const char *p, const char *end)
{
	const char *nl;
	char line[512];

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		br_forward_escape(p, (size_t)(nl - p), line, sizeof(line));
		if (line[0] != '\0')
			log_notice("  %s", line);
		p = nl + 1;
	}
}

/*
 * A forwarded connection reached the proxy: ask it for the tunnel
 * (RFC 9110 §9.3.6), and read its answer before any byte of the client's
 * is passed on, which stay in the kernel meanwhile.
 */
static void
conn_send_connect(struct conn *c)
{
	char req[2 * BR_FORWARD_TARGET_MAX + 64];
	int n;

	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
	    c->fwd->target, c->fwd->target);
	c->reply = malloc(FWD_REPLY_MAX);
	if (n < 0 || (size_t)n >= sizeof(req) || c->reply == NULL) {
		conn_close(c);
		return;
	}
	/* A few hundred bytes into a fresh socket's send buffer: never short. */
	if (send(c->unx.fd, req, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n ||
	    ep_add(c->r, c->unx.fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->unx.h) < 0) {
		conn_close(c);
		return;
	}
	c->state = C_HANDSHAKE;
}

/*
 * Read the proxy's answer to a forwarded connection's CONNECT.  A 2xx
 * starts the relay (bytes that came with it go to the client first); any
 * other answer is a refusal, whose body is read to its end (the proxy
 * closes after it) and said on stderr; then the client's connection is
 * closed unanswered, which it sees as EOF or a reset.
 */
static void
conn_handshake(struct conn *c)
{
	const char *what = NULL;
	size_t extra;
	ssize_t n;
	int rc;

	for (;;) {
		if (c->nreply >= FWD_REPLY_MAX) {
			if (c->state == C_HANDSHAKE)
				what = "the proxy's answer has no end of head in 4096 bytes";
			break;
		}
		n = recv(c->unx.fd, c->reply + c->nreply, FWD_REPLY_MAX - c->nreply, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			if (c->state == C_HANDSHAKE)
				what = "the proxy closed the connection without an answer";
			break;
		}
		c->nreply += (size_t)n;
		if (c->state != C_HANDSHAKE)
			continue;
		rc = bs_reply_parse(c->reply, c->nreply, &c->rep);
		if (rc == 0)
			continue;
		if (rc < 0) {
			what = "the proxy's answer is not an HTTP response";
			break;
		}
		if (c->rep.status < 200 || c->rep.status > 299) {
			/* 1xx included: RFC 9110 §9.3.6 has none before a 2xx. */
			c->state = C_REFUSED;
			continue;
		}
		extra = c->nreply - c->rep.head_len;
		/* At most 4 KiB into a fresh socket's send buffer: never short. */
		if (extra > 0 && send(c->tcp.fd, c->reply + c->rep.head_len, extra,
		    MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)extra) {
			conn_close(c);
			return;
		}
		free(c->reply);
		c->reply = NULL;
		c->fwd->said[0] = '\0';
		conn_start_relay(c);
		return;
	}
	fwd_report(c, what);
	conn_close(c);
}

/*
 * Open the pipes and register both sockets, edge-triggered, for reading
 * (writing is added when a write first meets a full buffer): from here on
 * the state flags in struct side drive the relay.
 */
static void
conn_start_relay(struct conn *c)
{
	struct br_relay *r = c->r;
	int err;

	if (r->upstream_down) {
		log_notice("proxy socket %s: reachable again",
		    r->up.name);
		r->upstream_down = false;
	}
	if (pipe_get(r, &c->up) < 0 || pipe_get(r, &c->down) < 0)
		goto fail;
	r->starved = false;
	c->state = C_RELAY;
	/* Both sockets are connected and their buffers empty: writable. */
	c->tcp.wr = c->unx.wr = true;
	err = ep_add(r, c->tcp.fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->tcp.h);
	/*
	 * A forwarded connection's UNIX side is registered since its
	 * CONNECT: modifying it re-arms the edge for bytes that came after
	 * the proxy's answer.
	 */
	if (err == 0 && c->fwd != NULL)
		ep_mod(r, c->unx.fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->unx.h);
	else if (err == 0)
		err = ep_add(r, c->unx.fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->unx.h);
	if (err < 0) {
		conn_close(c);
		return;
	}
	/*
	 * Data may be waiting already; EPOLL_CTL_ADD has queued the edge for
	 * it, so the pump runs when it is delivered.
	 */
	return;
fail:
	err = errno;
	pipe_put(r, &c->up);
	conn_refuse(c, err, true);
}

/* The proxy is connected: the token preface, when the upstream takes one
 * (upstream.h), then the forward's CONNECT or the relay. */
static void
conn_connected(struct conn *c)
{
	int err;

	wait_del(c);
	if ((err = br_upstream_preface(&c->r->up, c->unx.fd)) < 0) {
		conn_refuse(c, -err, false);
		return;
	}
	if (c->fwd != NULL)
		conn_send_connect(c);
	else
		conn_start_relay(c);
}

/* A tcp: upstream's connect(2) ended (epoll said writable): its result. */
static void
conn_tcp_done(struct conn *c)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(c->unx.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0 && epoll_ctl(c->r->ep, EPOLL_CTL_DEL, c->unx.fd, NULL) < 0)
		err = errno;
	c->unx.rd = c->unx.wr = c->unx.hup = false;
	if (err != 0) {
		wait_del(c);
		conn_refuse(c, err, false);
		return;
	}
	conn_connected(c);
}

/*
 * Try the connect.  A UNIX stream socket connects or fails at once; the
 * one transient answer is EAGAIN, a full backlog on the proxy's side, which
 * cannot be waited for with epoll, so it is retried on the timer.  A TCP
 * one (a tcp: upstream) is in progress until epoll says it is writable
 * (conn_tcp_done()), for at most CONNECT_PATIENCE_MS.
 */
static void
conn_connect(struct conn *c)
{
	struct br_relay *r = c->r;
	int err;

	if (c->unx.fd < 0) {
		c->unx.fd = socket(r->up.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->unx.fd < 0) {
			conn_refuse(c, errno, true);
			return;
		}
		if (r->up.tcp) {
			int one = 1;
			(void)setsockopt(c->unx.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
	}
	if (connect(c->unx.fd, (struct sockaddr *)&r->up.ss, r->up.len) == 0) {
		conn_connected(c);
		return;
	}
	err = errno;
	if (r->up.tcp && err == EINPROGRESS) {
		c->state = C_TCPWAIT;
		if (ep_add(r, c->unx.fd, EPOLLOUT | EPOLLET, &c->unx.h) < 0) {
			conn_refuse(c, errno, true);
			return;
		}
		wait_add(c, now_ms() + CONNECT_PATIENCE_MS);
		return;
	}
	if (err == EAGAIN || err == EINTR) {
		if (c->state != C_CONNECTING) {
			c->state = C_CONNECTING;
			wait_add(c, now_ms() + CONNECT_PATIENCE_MS);
		}
		return;
	}
	wait_del(c);
	conn_refuse(c, err, false);
}

static void
conn_new(struct br_relay *r, int fd, struct fwd *fwd)
{
	struct conn *c;
	int one = 1;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		/* Out of memory closes this client, never the bridge. */
		close(fd);
		return;
	}
	c->r = r;
	c->state = C_NEW;
	c->fwd = fwd;
	c->tcp.h.kind = H_TCP;
	c->tcp.fd = fd;
	c->unx.h.kind = H_UNIX;
	c->unx.fd = -1;
	c->up.p.r = c->up.p.w = c->down.p.r = c->down.p.w = -1;
	c->up.src = &c->tcp;
	c->up.dst = &c->unx;
	c->down.src = &c->unx;
	c->down.dst = &c->tcp;
	/*
	 * The bridge forwards what it got when it got it; Nagle would only
	 * add latency to a request that is already complete.
	 */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->next = r->conns;
	if (r->conns != NULL)
		r->conns->prev = c;
	r->conns = c;
	conn_connect(c);
}

/* What dir_pump() returns when the destination refuses writes. */
#define PUMP_DST_GONE (-1)
/* ... and when the pipe would not take bytes already read (cannot happen). */
#define PUMP_FAIL (-2)

/*
 * Try to make D's pipe BULK_PIPE bytes (once), and learn its size, which
 * bounds a read of dir_copy().  A refusal (the user's pipe quota) leaves
 * it as it is.
 */
static void
dir_grow(struct dir *d)
{
	int sz;

	d->grown = true;
	sz = fcntl(d->p.w, F_SETPIPE_SZ, BULK_PIPE);
	if (sz <= 0)
		sz = fcntl(d->p.w, F_GETPIPE_SZ);
	if (sz > 0)
		d->p.cap = (size_t)sz;
}

/*
 * The copy path: D's pipe is empty and its destination writable, so bytes
 * are read into BUF and sent from there, what send(2) does not take going
 * into the pipe.  Returns 1 when something changed (bytes moved, EOF, a
 * flag), or PUMP_DST_GONE / PUMP_FAIL as dir_pump().
 *
 * A recv(2) that returns less than asked for has emptied the socket: the
 * source's readable flag is cleared without the read that would say EAGAIN,
 * since bytes arriving later give a new edge.  Not so once epoll has said
 * the peer shut down or failed: that news may have come with the very event
 * that brought these bytes, so the next read must see the EOF.
 */
static int
dir_copy(struct dir *d, char *buf)
{
	size_t len = COPY_MIN;
	ssize_t n, w, k;

	if (d->p.cap > len)
		len = d->p.cap < COPY_MAX ? d->p.cap : COPY_MAX;
	do
		n = recv(d->src->fd, buf, len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN) {
		d->src->rd = false;
		return 1;
	}
	if (n <= 0) {
		/* EOF, or a failure (a reset), which counts as EOF. */
		d->eof = true;
		return 1;
	}
	if ((size_t)n < len && !d->src->hup)
		d->src->rd = false;
	do
		w = send(d->dst->fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0 && errno == EAGAIN) {
		d->dst->wr = false;
		w = 0;
	} else if (w < 0) {
		return PUMP_DST_GONE;
	}
	if (w < n) {
		/* The rest waits in the empty pipe, ahead of any later byte. */
		k = write(d->p.w, buf + w, (size_t)(n - w));
		if (k != n - w)
			return PUMP_FAIL;
		d->inpipe += (size_t)k;
	}
	/* A full read is bulk data: read more at a time from now on. */
	if ((size_t)n == len && !d->grown)
		dir_grow(d);
	return 1;
}

/*
 * Move what can be moved in one direction.  Returns 0, PUMP_DST_GONE when
 * the destination refuses writes (EPIPE, a reset), or PUMP_FAIL when the
 * connection must be closed.  A source that fails (a reset) counts as its
 * EOF: what it sent before is in the pipe and is still delivered.
 *
 * An EAGAIN from "source -> pipe" is ambiguous: the source may be empty or
 * the pipe full (its slots, not its bytes, are the limit).  So the source's
 * readable flag is only cleared when the pipe is empty and the EAGAIN can
 * only mean the source; otherwise the pipe is drained first and the source
 * tried again, which never loses an edge.
 */
static int
dir_pump(struct dir *d, char *buf)
{
	bool progress;
	ssize_t n;
	int rc;

	do {
		progress = false;
		if (!d->eof && d->src->rd && d->inpipe == 0 && d->dst->wr) {
			rc = dir_copy(d, buf);
			if (rc < 0)
				return rc;
			progress = rc > 0;
		} else if (!d->eof && d->src->rd) {
			n = bs_pump_in(d->src->fd, &d->p, SPLICE_CHUNK);
			if (n > 0) {
				d->inpipe += (size_t)n;
				progress = true;
			} else if (n == 0) {
				d->eof = true;
				progress = true;
			} else if (n == -EAGAIN) {
				if (d->inpipe == 0) {
					d->src->rd = false;
				} else if (!d->grown) {
					/* The pipe is full: bulk data. */
					size_t was = d->p.cap;

					dir_grow(d);
					progress = d->p.cap > was;
				}
			} else {
				d->eof = true;
				progress = true;
			}
		}
		if (d->inpipe > 0 && d->dst->wr) {
			n = bs_pump_out(&d->p, d->dst->fd, d->inpipe);
			if (n > 0) {
				d->inpipe -= (size_t)n;
				progress = true;
			} else if (n == -EAGAIN) {
				d->dst->wr = false;
			} else if (n < 0) {
				return PUMP_DST_GONE;
			}
		}
	} while (progress);
	/* Half-close, both ways: the peer sees our EOF once all is written. */
	if (d->eof && d->inpipe == 0 && !d->shut) {
		if (shutdown(d->dst->fd, SHUT_WR) < 0 && errno != ENOTCONN)
			return PUMP_DST_GONE;
		d->shut = true;
	}
	return 0;
}

/*
 * A side whose writes met a full buffer must hear when there is room again:
 * add EPOLLOUT to its interest.  Modifying an edge-triggered registration
 * re-arms it, so a buffer that drained in the meantime still gives an edge.
 * It stays armed from then on: a side that filled up once is likely a bulk
 * sink, and re-arming each time would cost a system call per pipe-full.
 */
static int
side_want_out(struct br_relay *r, struct side *s)
{
	struct epoll_event ev;

	if (s->out || s->wr)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
	ev.data.ptr = &s->h;
	if (epoll_ctl(r->ep, EPOLL_CTL_MOD, s->fd, &ev) < 0)
		return -1;
	s->out = true;
	return 0;
}

static void conn_drain(struct conn *c);

/*
 * The proxy's side is finished (both directions done, the proxy having
 * refused the rest of the client's bytes): keep reading the client until its
 * EOF, as after a 503, so that closing does not reset away the answer it may
 * not have read yet.
 */
static void
conn_linger(struct conn *c)
{
	close_fd(&c->unx.fd);
	pipe_put(c->r, &c->up);
	pipe_put(c->r, &c->down);
	c->state = C_DRAIN;
	c->tcp.rd = true;
	wait_add(c, now_ms() + DRAIN_MS);
	conn_drain(c);
}

static void
conn_pump(struct conn *c)
{
	int err;

	err = dir_pump(&c->up, c->r->buf);
	if (err == PUMP_FAIL) {
		conn_close(c);
		return;
	}
	if (err == PUMP_DST_GONE) {
		/*
		 * The proxy will take no more (it answered and closed, say
		 * with a 403 during an upload).  What it sent before must
		 * still reach the client: stop this direction only, read the
		 * client no further, and let the other direction finish.
		 */
		c->up.eof = c->up.shut = c->up.dead = true;
	}
	if (dir_pump(&c->down, c->r->buf) < 0) {
		/* The client is gone: nothing left to deliver. */
		conn_close(c);
		return;
	}
	if (c->up.shut && c->down.shut) {
		if (c->up.dead)
			conn_linger(c);
		else
			conn_close(c);
		return;
	}
	if ((c->up.inpipe > 0 && side_want_out(c->r, &c->unx) < 0) ||
	    (c->down.inpipe > 0 && side_want_out(c->r, &c->tcp) < 0))
		conn_close(c);
}

/* After a 503: discard what the client sends until its EOF, then close. */
static void
conn_drain(struct conn *c)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = recv(c->tcp.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		/* EOF or an error: done. */
		conn_close(c);
		return;
	}
}

static void
side_event(struct side *s, uint32_t ev)
{
	struct conn *c;

	if (s->h.kind == H_TCP)
		c = (struct conn *)((char *)s - offsetof(struct conn, tcp));
	else
		c = (struct conn *)((char *)s - offsetof(struct conn, unx));
	if (c->state == C_DEAD)
		return;
	/* Errors and hang-ups surface through the next splice(2). */
	if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		s->rd = true;
	if (ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		s->hup = true;
	if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		s->wr = true;
	if (c->state == C_RELAY)
		conn_pump(c);
	else if (c->state == C_TCPWAIT && s == &c->unx)
		conn_tcp_done(c);
	else if (c->state == C_DRAIN)
		conn_drain(c);
	else if ((c->state == C_HANDSHAKE || c->state == C_REFUSED) && s == &c->unx)
		conn_handshake(c);
}

static void
listeners_pause(struct br_relay *r, bool pause)
{
	struct listener *l;

	for (l = r->listeners; l != NULL; l = l->next) {
		ep_mod(r, l->fd, pause ? 0 : EPOLLIN, &l->h);
		l->paused = pause;
	}
	r->paused = pause;
	if (pause)
		r->resume_at = now_ms() + PAUSE_MS;
}

static void
listener_event(struct br_relay *r, struct listener *l)
{
	int i, fd;

	for (i = 0; i < ACCEPT_BATCH && !l->paused; i++) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_new(r, fd, l->fwd);
			continue;
		}
		switch (errno) {
		case EAGAIN:
			return;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			/*
			 * Out of descriptors or memory: stop accepting for a
			 * moment instead of spinning on a listener that stays
			 * readable.  The clients wait in the backlog.
			 */
			log_notice("accept: %s; pausing %d ms",
			    strerror(errno), PAUSE_MS);
			listeners_pause(r, true);
			return;
		default:
			/* ECONNABORTED, EPROTO, EINTR: that client only. */
			continue;
		}
	}
}

/* Run the timer queue: connect retries, drain deadlines, paused listeners. */
static void
run_timers(struct br_relay *r)
{
	struct conn *c, *next;
	uint64_t now = now_ms();

	for (c = r->waiting; c != NULL; c = next) {
		next = c->wnext;
		if (c->state == C_CONNECTING) {
			if (now >= c->deadline) {
				wait_del(c);
				conn_refuse(c, EAGAIN, false);
			} else {
				conn_connect(c);
			}
		} else if (c->state == C_TCPWAIT && now >= c->deadline) {
			wait_del(c);
			conn_refuse(c, ETIMEDOUT, false);
		} else if (c->state == C_DRAIN && now >= c->deadline) {
			conn_close(c);
		}
	}
	if (r->paused && now >= r->resume_at)
		listeners_pause(r, false);
}

static int
next_timeout(const struct br_relay *r)
{
	const struct conn *c;
	uint64_t now, first = UINT64_MAX;

	if (r->waiting == NULL && !r->paused)
		return -1;
	now = now_ms();
	for (c = r->waiting; c != NULL; c = c->wnext) {
		if (c->state == C_CONNECTING)
			return RETRY_MS;
		if (c->deadline < first)
			first = c->deadline;
	}
	if (r->paused && r->resume_at < first)
		first = r->resume_at;
	if (first <= now)
		return 0;
	return first - now > 60000 ? 60000 : (int)(first - now);
}

int
br_relay_run(struct br_relay *r)
{
	struct epoll_event evs[MAX_EVENTS];
	struct handle *h;
	int i, n;

	r->stop = false;
	while (!r->stop) {
		n = epoll_wait(r->ep, evs, MAX_EVENTS, next_timeout(r));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < n; i++) {
			h = evs[i].data.ptr;
			switch (h->kind) {
			case H_LISTENER:
				listener_event(r, (struct listener *)h);
				break;
			case H_WATCH: {
				struct watch *w = (struct watch *)h;

				w->cb(w->fd, w->arg);
				break;
			}
			case H_TCP:
			case H_UNIX:
				side_event((struct side *)h, evs[i].events);
				break;
			}
		}
		run_timers(r);
		reap_dead(r);
	}
	return 0;
}
