/*
 * tests/bench/proxy-load.c: the upstream server and the load client of
 * tests/bench/bench-proxy.sh.  The same client measures every path (direct
 * TCP, postern-proxy, tinyproxy, squid) against the same server, so that only
 * the proxy in between differs.  Loopback only.
 *
 *   proxy-load serve PORTFILE
 *       Serve on three free ports of 127.0.0.1 and write "RAW HTTP
 *       REFUSE" to PORTFILE.  RAW: the first byte of a connection picks what it does:
 *       'E' echo the rest; 'S' sink: read to EOF, answer the 8-byte count
 *       and close (the half-close probe); 'U' + 8-byte N: read N bytes, then
 *       answer the 8-byte count (bulk upload without needing a half-close);
 *       'G' + 8-byte N: send N bytes and close.  HTTP: a fixed 200 response
 *       to every request head, keep-alive unless the request says close or is
 *       HTTP/1.0 without keep-alive.  REFUSE: the refusal floor, a 403 of
 *       a proxy's size to the first head and the close, with nothing else
 *       done (no parsing, no decision, no log): what refusals/s one event
 *       loop can reach on this machine at all.
 *
 * Every client command takes PROXY (HOST:PORT of an HTTP proxy, or "-" for a
 * direct connection) and TARGET (HOST:PORT; through a proxy it is the
 * CONNECT authority, directly it is connected to):
 *
 *   proxy-load floor PORTFILE UPSTREAM [raw | duty LOGFILE]
 *       The tunnel floor: on a free port of 127.0.0.1 (written to
 *       PORTFILE), a CONNECT "proxy" that does only what a tunnel needs
 *       (the head read, a connect to UPSTREAM whatever it says, the 200,
 *       a read/write relay with one 1 MiB copy buffer, what a socket
 *       does not take kept until it does, both closed at either's end),
 *       nothing else.  UPSTREAM is HOST:PORT or unix:PATH.  With "raw"
 *       there is no head and no 200: each connection is relayed to
 *       UPSTREAM from its accept (the relay floor of bench-bridge).
 *       With "duty" the floor also does the two things every tunnel of
 *       postern's must, at their least: a half-close (one side's EOF is
 *       passed on with shutdown(2), that side is watched no more, and
 *       both close at the second EOF) and an audit line each way of
 *       postern's length appended to LOGFILE (a decision line written
 *       before the 200, the close lines of the tunnels ended meanwhile in
 *       the same write(2), or at the end of the batch of events).
 *   proxy-load up|down PROXY TARGET BYTES MAXSECS
 *       One bulk stream through one tunnel; prints "BYTES SECONDS MB/s"
 *       (stops early after MAXSECS, counting what was moved).
 *   proxy-load tps PROXY TARGET CONNS SECONDS
 *       CONNECT + 64-byte echo + close, CONNS at once; prints tunnels/s.
 *   proxy-load lat PROXY TARGET CONNS SECONDS
 *       CONNS established tunnels each doing 64-byte ping-pongs; prints
 *       "p50 p99" round trips in microseconds.
 *   proxy-load idle PROXY TARGET CONNS
 *       Open CONNS tunnels (each with one echo exchange), print "ready",
 *       hold them until standard input reaches EOF.
 *   proxy-load refuse PROXY TARGET CONNS SECONDS
 *       CONNECT to a TARGET the proxy refuses, read the response head,
 *       close; CONNS at once; prints refusals/s.  Any status but 403 is an
 *       error.
 *   proxy-load slowhead PROXY TARGET HEADS BYTES
 *       On one keep-alive connection, HEADS plain-HTTP requests for
 *       http://TARGET/, each a head of exactly BYTES bytes (padded with
 *       X-Pad fields) written one byte per write(2) with TCP_NODELAY and
 *       SLOW_GAP_US between writes, each answered with a 200 before the
 *       next is sent; prints the seconds taken.  The CPU this costs the
 *       proxy is what the script measures.
 *   proxy-load halfclose PROXY TARGET
 *       Send 5 bytes to the sink, shut down the write side, wait 3 s for
 *       the sink's count: prints "yes" when it comes back (the half-close
 *       went through and the other direction stayed open), else "no: WHY".
 *
 * Errors go to standard error; a timed command that saw errors still prints
 * its rate but exits 1 (a rate with failures in it is no result).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/unix.h"

#define BULK (1 << 20)
#define MSG 64
#define HEAD_MAX 4096

static char bulk[BULK];

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Digits only, no sign, no trailing bytes: these come from the script. */
static unsigned long long
num(const char *s)
{
	unsigned long long v = 0;

	if (*s == '\0')
		goto bad;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (~0ULL - 9) / 10)
			goto bad;
		v = v * 10 + (unsigned long long)(*s - '0');
	}
	return v;
bad:
	fprintf(stderr, "proxy-load: bad number\n");
	exit(2);
}

static void
parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - s)) >= sizeof(host)) {
		fprintf(stderr, "proxy-load: bad address %s\n", s);
		exit(2);
	}
	memcpy(host, s, n);
	host[n] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)num(colon + 1));
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		fprintf(stderr, "proxy-load: %s is not an IPv4 literal\n", host);
		exit(2);
	}
}

static void
nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		die("fcntl");
}

static void
nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
put64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t
get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* ------------------------------------------------------------------ */
/* The server                                                          */

enum srv_kind { K_LISTEN_RAW, K_LISTEN_HTTP, K_LISTEN_REFUSE, K_RAW, K_HTTP, K_REFUSE };

struct sconn {
	enum srv_kind kind;
	int fd;
	char mode;		/* RAW: 0 until the first byte, then E S U G */
	unsigned char hdr[8];	/* U and G: the count, as it arrives */
	unsigned hdr_len;
	uint64_t want, done;	/* U: bytes to read; G: to send; S: read */
	char out[65536];	/* echo, acks and HTTP responses */
	size_t out_len, out_off;
	bool close_after;	/* close once out is flushed */
	bool want_out;		/* EPOLLOUT is armed */
	char in[40960];		/* HTTP: the unparsed part of the input (a
				 * head up to postern's default 32 KiB cap) */
	size_t in_len;
};

static int sepfd;

/* A connection to the refusal floor: as little as a refusal needs. */
struct rconn {
	enum srv_kind kind;	/* K_REFUSE, where sconn has its kind */
	int fd;
	size_t len;
	char in[4096];
};

static const char http_resp[] =
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	"Content-Length: 13\r\n\r\nhello, world\n";
/* What the refusal floor answers to any head: a refusal of about the
 * size of a proxy's, then the close. */
static const char refuse_resp[] =
	"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
	"Content-Length: 96\r\nConnection: close\r\n\r\n"
	"refused: this server answers every request with 403 and closes "
	"(the bench's refusal floor)....\n";
static const char http_resp_close[] =
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	"Content-Length: 13\r\nConnection: close\r\n\r\nhello, world\n";

static void
sconn_free(struct sconn *c)
{
	close(c->fd);
	free(c);
}

static void
arm(struct sconn *c, bool out)
{
	struct epoll_event ev = { .data.ptr = c };

	if (c->want_out == out)
		return;
	c->want_out = out;
	ev.events = out ? EPOLLOUT : EPOLLIN;
	if (epoll_ctl(sepfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
		die("epoll_ctl");
}

/* Flush out; returns -1 when the connection died, 0 when all was written,
 * 1 when the socket is full (EPOLLOUT armed, reading paused). */
static int
sflush(struct sconn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off,
		    c->out_len - c->out_off);
		if (n < 0) {
			if (errno == EAGAIN) {
				arm(c, true);
				return 1;
			}
			return -1;
		}
		c->out_off += (size_t)n;
	}
	c->out_off = c->out_len = 0;
	if (c->close_after)
		return -1;
	return 0;
}

/* G: send until the count is reached, then close. */
static int
sgen(struct sconn *c)
{
	while (c->done < c->want) {
		uint64_t left = c->want - c->done;
		ssize_t n = write(c->fd, bulk, left < BULK ? left : BULK);
		if (n < 0) {
			if (errno == EAGAIN) {
				arm(c, true);
				return 1;
			}
			return -1;
		}
		c->done += (uint64_t)n;
	}
	return -1;
}

static bool
head_has(const char *h, size_t len, const char *needle)
{
	size_t nl = strlen(needle);

	for (size_t i = 0; i + nl <= len; i++) {
		size_t j;
		for (j = 0; j < nl; j++) {
			char a = h[i + j];
			if (a >= 'A' && a <= 'Z')
				a = (char)(a - 'A' + 'a');
			if (a != needle[j])
				break;
		}
		if (j == nl)
			return true;
	}
	return false;
}

/* HTTP: answer every complete head in in; bodies are not expected. */
static int
shttp(struct sconn *c)
{
	for (;;) {
		char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
		size_t hl;
		const char *eol;
		bool close_it;

		if (end == NULL) {
			if (c->in_len == sizeof(c->in))
				return -1;
			return 0;
		}
		hl = (size_t)(end - c->in) + 4;
		eol = memchr(c->in, '\r', hl);
		close_it = head_has(c->in, hl, "\nconnection: close");
		if (eol != NULL && eol - c->in >= 8 &&
		    memcmp(eol - 8, "HTTP/1.0", 8) == 0 &&
		    !head_has(c->in, hl, "\nconnection: keep-alive") &&
		    !head_has(c->in, hl, "\nproxy-connection: keep-alive"))
			close_it = true;
		if (close_it) {
			if (c->out_len + sizeof(http_resp_close) > sizeof(c->out))
				return -1;
			memcpy(c->out + c->out_len, http_resp_close,
			    sizeof(http_resp_close) - 1);
			c->out_len += sizeof(http_resp_close) - 1;
			c->close_after = true;
			c->in_len = 0;
			return 0;
		}
		if (c->out_len + sizeof(http_resp) > sizeof(c->out))
			return -1;
		memcpy(c->out + c->out_len, http_resp, sizeof(http_resp) - 1);
		c->out_len += sizeof(http_resp) - 1;
		memmove(c->in, c->in + hl, c->in_len - hl);
		c->in_len -= hl;
	}
}

/* Consume n bytes of RAW input at p; returns -1 to close. */
static int
sraw(struct sconn *c, const unsigned char *p, size_t n)
{
	while (n > 0) {
		if (c->mode == 0) {
			c->mode = (char)*p++;
			n--;
			if (c->mode != 'E' && c->mode != 'S' && c->mode != 'U' &&
			    c->mode != 'G')
				return -1;
			continue;
		}
		if ((c->mode == 'U' || c->mode == 'G') && c->hdr_len < 8) {
			size_t k = 8 - c->hdr_len < n ? 8 - c->hdr_len : n;
			memcpy(c->hdr + c->hdr_len, p, k);
			c->hdr_len += (unsigned)k;
			p += k;
			n -= k;
			if (c->hdr_len == 8) {
				c->want = get64(c->hdr);
				if (c->mode == 'G')
					return sgen(c);
			}
			continue;
		}
		switch (c->mode) {
		case 'E':
			if (c->out_len + n > sizeof(c->out))
				return -1;
			memcpy(c->out + c->out_len, p, n);
			c->out_len += n;
			return 0;
		case 'S':
			c->done += n;
			return 0;
		case 'U':
			c->done += n;
			if (c->done >= c->want) {
				put64((unsigned char *)c->out + c->out_len,
				    c->done);
				c->out_len += 8;
			}
			return 0;
		default: /* G sends, never reads */
			return 0;
		}
	}
	return 0;
}

static void
accept_all(int lfd, enum srv_kind kind)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		struct sconn *c;
		struct epoll_event ev = { .events = EPOLLIN };

		if (fd < 0) {
			if (errno != EAGAIN && errno != ECONNABORTED)
				perror("accept");
			return;
		}
		nodelay(fd);
		if (kind == K_REFUSE) {
			struct rconn *r = malloc(sizeof(*r));

			if (r == NULL)
				die("malloc");
			r->kind = kind;
			r->fd = fd;
			r->len = 0;
			ev.data.ptr = r;
			if (epoll_ctl(sepfd, EPOLL_CTL_ADD, fd, &ev) < 0)
				die("epoll_ctl");
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL)
			die("calloc");
		c->fd = fd;
		c->kind = kind;
		ev.data.ptr = c;
		if (epoll_ctl(sepfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			die("epoll_ctl");
	}
}

static int
listen_any(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;

	if (fd < 0)
		die("socket");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 4096) < 0)
		die("bind/listen");
	return fd;
}

static unsigned
port_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		die("getsockname");
	return ntohs(sa.sin_port);
}

/* The ports, those that are not 0, on one line of PORTFILE: written to a
 * temporary name and renamed, since the script polls for the file. */
static void
write_portfile(const char *portfile, unsigned a, unsigned b, unsigned c)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (f == NULL)
		die(tmp);
	fprintf(f, "%u", a);
	if (b != 0)
		fprintf(f, " %u", b);
	if (c != 0)
		fprintf(f, " %u", c);
	fprintf(f, "\n");
	if (fclose(f) != 0 || rename(tmp, portfile) < 0)
		die(portfile);
}

/* The refusal floor: read to the end of the head, answer, close.  The
 * answer fits any socket buffer: one write, no EPOLLOUT. */
static void
rfevent(struct rconn *r)
{
	ssize_t n = read(r->fd, r->in + r->len, sizeof(r->in) - r->len);

	if (n < 0 && errno == EAGAIN)
		return;
	if (n > 0) {
		r->len += (size_t)n;
		if (memmem(r->in, r->len, "\r\n\r\n", 4) == NULL && r->len < sizeof(r->in))
			return;
		(void)write(r->fd, refuse_resp, sizeof(refuse_resp) - 1);
	}
	close(r->fd);
	free(r);
}

/* One connection is ready: read what there is, or write what is pending. */
static void
sevent(struct sconn *c, uint32_t events)
{
	int r = 0;

	if (c->want_out) {
		if (c->mode == 'G' && c->out_len == 0)
			r = sgen(c);
		else
			r = sflush(c);
		if (r < 0)
			goto close_it;
		if (r == 0)
			arm(c, false);
		return;
	}
	(void)events;
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n;

		if (c->kind == K_HTTP) {
			n = read(c->fd, c->in + c->in_len,
			    sizeof(c->in) - c->in_len);
		} else {
			size_t room = c->mode == 'E' ?
			    sizeof(c->out) - c->out_len : BULK;
			n = read(c->fd, c->mode == 'E' ? c->out + c->out_len :
			    bulk, room);
			if (n > 0 && c->mode == 'E') {
				/* Echo in place: the bytes are already in out. */
				c->out_len += (size_t)n;
				r = sflush(c);
				if (r < 0)
					goto close_it;
				if (r > 0)
					return;
				continue;
			}
		}
		if (n == 0) {
			if (c->kind == K_RAW && c->mode == 'S') {
				put64((unsigned char *)c->out + c->out_len,
				    c->done);
				c->out_len += 8;
				c->close_after = true;
				if (sflush(c) > 0)
					return;
			}
			goto close_it;
		}
		if (n < 0) {
			if (errno == EAGAIN)
				return;
			goto close_it;
		}
		if (c->kind == K_HTTP) {
			c->in_len += (size_t)n;
			r = shttp(c);
		} else {
			r = sraw(c, (unsigned char *)bulk, (size_t)n);
		}
		if (r < 0)
			goto close_it;
		if (r > 0)
			return;
		r = sflush(c);
		if (r < 0)
			goto close_it;
		if (r > 0)
			return;
	}
	return;
close_it:
	epoll_ctl(sepfd, EPOLL_CTL_DEL, c->fd, NULL);
	sconn_free(c);
}

static _Noreturn void
cmd_serve(const char *portfile)
{
	struct sconn lraw = { .kind = K_LISTEN_RAW }, lhttp = { .kind = K_LISTEN_HTTP };
	struct sconn lrefuse = { .kind = K_LISTEN_REFUSE };
	struct epoll_event ev = { .events = EPOLLIN }, evs[256];

	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	sepfd = epoll_create1(0);
	if (sepfd < 0)
		die("epoll_create1");
	lraw.fd = listen_any();
	lhttp.fd = listen_any();
	lrefuse.fd = listen_any();
	ev.data.ptr = &lraw;
	epoll_ctl(sepfd, EPOLL_CTL_ADD, lraw.fd, &ev);
	ev.data.ptr = &lhttp;
	epoll_ctl(sepfd, EPOLL_CTL_ADD, lhttp.fd, &ev);
	ev.data.ptr = &lrefuse;
	epoll_ctl(sepfd, EPOLL_CTL_ADD, lrefuse.fd, &ev);
	write_portfile(portfile, port_of(lraw.fd), port_of(lhttp.fd), port_of(lrefuse.fd));
	for (;;) {
		int n = epoll_wait(sepfd, evs, 256, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			struct sconn *c = evs[i].data.ptr;

			/* Both kinds of connection begin with their kind. */
			if (*(const enum srv_kind *)evs[i].data.ptr == K_REFUSE)
				rfevent(evs[i].data.ptr);
			else if (c->kind == K_LISTEN_RAW)
				accept_all(c->fd, K_RAW);
			else if (c->kind == K_LISTEN_HTTP)
				accept_all(c->fd, K_HTTP);
			else if (c->kind == K_LISTEN_REFUSE)
				accept_all(c->fd, K_REFUSE);
			else
				sevent(c, evs[i].events);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The tunnel floor: the least a CONNECT proxy can do                   */

/*
 * One side of a floor tunnel.  The tunnel's two sides point at each
 * other; the client's side holds the head until the upstream's connect
 * completes.  Open, a side's read goes into the process's one copy
 * buffer (bulk[], BULK bytes: a read of postern's copy relay at most,
 * proxy/flow/splice.c) and straight to the peer; what the peer's socket does
 * not take waits in PEND, and the side is read no more until it is out.
 */
struct fside {
	int fd;
	struct fside *peer;
	bool client;		/* the accepted side */
	bool open;		/* the 200 is out: relay */
	bool dead;		/* closed: freed after the current batch */
	bool gone;		/* hung up with PEND not out: watched no more */
	bool ended;		/* duty: its EOF was passed on (shutdown) */
	struct fside *next_dead;
	uint32_t watching;	/* the events epoll has for fd */
	size_t len;
	char head[4096];
	char *pend;		/* read from this side, not yet taken by the peer */
	size_t pend_off, pend_len;
};

static int fepfd;
static struct sockaddr_storage f_up;	/* UPSTREAM: TCP, or a UNIX socket */
static socklen_t f_uplen;
static bool f_raw;			/* no head, no 200: relay from the accept */
static int f_log = -1;			/* duty: the audit file, else -1 */
/* duty: the close lines waiting for the next write(2), and a line each
 * of the length of postern's decision and close lines (268 and 317
 * bytes on the bench's tunnels). */
static char f_pend[1 << 16];
static size_t f_pend_len;
static char f_allow[268], f_close[317];

/* duty: write the waiting lines in one write(2). */
static void
fflush_lines(void)
{
	if (f_pend_len > 0 && write(f_log, f_pend, f_pend_len) != (ssize_t)f_pend_len)
		die("audit write");
	f_pend_len = 0;
}

/* duty: LINE waits for the next write (the batch written first if it is
 * full). */
static void
fqueue(const char *line, size_t len)
{
	if (f_pend_len + len > sizeof(f_pend))
		fflush_lines();
	memcpy(f_pend + f_pend_len, line, len);
	f_pend_len += len;
}
static struct fside *f_dead;	/* closed in this batch of events */

static void
fwatch(struct fside *x, uint32_t ev, int op)
{
	struct epoll_event e = { .events = ev, .data.ptr = x };

	if (epoll_ctl(fepfd, op, x->fd, &e) < 0)
		die("epoll_ctl");
	x->watching = ev;
}

/* An open side: read while nothing of its own waits, write while its
 * peer's bytes wait. */
static void
frewatch(struct fside *x)
{
	uint32_t want = (x->pend_len == 0 && !x->ended ? EPOLLIN : 0) |
	    (x->peer->pend_len > 0 ? EPOLLOUT : 0);

	if (x->dead || x->gone || want == x->watching)
		return;
	if (x->watching == 0)		/* duty: an ended side, unwatched */
		fwatch(x, want, EPOLL_CTL_ADD);
	else if (want == 0) {
		if (epoll_ctl(fepfd, EPOLL_CTL_DEL, x->fd, NULL) < 0)
			die("epoll_ctl");
		x->watching = 0;
	} else
		fwatch(x, want, EPOLL_CTL_MOD);
}

static void
fbury(struct fside *x)
{
	if (x == NULL || x->dead)
		return;
	close(x->fd);
	free(x->pend);
	x->pend = NULL;
	x->dead = true;
	x->next_dead = f_dead;
	f_dead = x;
}

/* Close both sides; they are freed once the batch of events that may
 * still name them is done. */
static void
fclose2(struct fside *x)
{
	if (f_log >= 0 && x->open && !x->dead)
		fqueue(f_close, sizeof(f_close));
	fbury(x->peer);
	fbury(x);
}

/* The upstream side of client X: connecting, watched for the end of it. */
static void
fconnect(struct fside *x)
{
	struct fside *u = calloc(1, sizeof(*u));

	if (u == NULL)
		die("calloc");
	u->fd = socket(f_up.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (u->fd < 0)
		die("socket");
	if (f_up.ss_family == AF_INET)
		nodelay(u->fd);
	u->peer = x;
	x->peer = u;
	if (connect(u->fd, (struct sockaddr *)&f_up, f_uplen) < 0 && errno != EINPROGRESS &&
	    errno != EAGAIN) {
		fclose2(x);
		return;
	}
	fwatch(u, EPOLLOUT, EPOLL_CTL_ADD);
}

/* Open: X's peer's waiting bytes to X, then X's readable bytes to its
 * peer.  Returns false when the tunnel closed. */
static bool
frelay(struct fside *x, uint32_t events)
{
	struct fside *p = x->peer;
	bool moved = false;
	ssize_t n, w;

	if ((events & EPOLLOUT) && p->pend_len > 0) {
		w = write(x->fd, p->pend + p->pend_off, p->pend_len);
		if (w < 0 && errno != EAGAIN)
			return false;
		if (w > 0) {
			p->pend_off += (size_t)w;
			p->pend_len -= (size_t)w;
			moved = true;
			if (p->pend_len == 0) {
				free(p->pend);
				p->pend = NULL;
				if (p->gone)
					return false;	/* its last bytes are out */
				frewatch(p);
			}
		}
	}
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && x->pend_len == 0 && !x->ended) {
		n = read(x->fd, bulk, BULK);
		if (n < 0 && errno == EAGAIN)
			goto out;
		if (n == 0 && f_log >= 0 && !p->ended && !p->gone) {
			/* duty: a half-close.  X's EOF goes on to its peer,
			 * X is watched no more; the peer's EOF ends both. */
			if (shutdown(p->fd, SHUT_WR) < 0 ||
			    epoll_ctl(fepfd, EPOLL_CTL_DEL, x->fd, NULL) < 0)
				return false;
			x->ended = true;
			x->watching = 0;
			return true;
		}
		if (n <= 0)
			return false;
		moved = true;
		/* Small messages: the peer's socket takes them whole. */
		w = write(p->fd, bulk, (size_t)n);
		if (w < 0 && errno == EAGAIN)
			w = 0;
		if (w < 0)
			return false;
		if (w < n) {
			x->pend = malloc((size_t)(n - w));
			if (x->pend == NULL)
				die("malloc");
			memcpy(x->pend, bulk + w, (size_t)(n - w));
			x->pend_off = 0;
			x->pend_len = (size_t)(n - w);
			frewatch(p);
		}
	}
out:
	if (!moved && (events & (EPOLLHUP | EPOLLERR))) {
		/* X hung up (a UNIX socket's peer closing says so at once).
		 * Bytes it sent that its peer has not taken yet still go out,
		 * and X is watched no more: epoll would say it again and
		 * again. */
		if (x->pend_len == 0)
			return false;
		if (epoll_ctl(fepfd, EPOLL_CTL_DEL, x->fd, NULL) < 0)
			die("epoll_ctl");
		x->gone = true;
		return true;
	}
	frewatch(x);
	return true;
}

static void
fevent(struct fside *x, uint32_t events)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	ssize_t n;

	if (x->dead)
		return;
	if (!x->client && !x->open) {
		/* The upstream's connect finished (or failed). */
		int err = 0;
		socklen_t el = sizeof(err);

		if (getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err != 0) {
			fclose2(x);
			return;
		}
		/* duty: the decision is in the file before a byte moves. */
		if (f_log >= 0) {
			fqueue(f_allow, sizeof(f_allow));
			fflush_lines();
		}
		if (!f_raw && write(x->peer->fd, ok, sizeof(ok) - 1) != (ssize_t)sizeof(ok) - 1) {
			fclose2(x);
			return;
		}
		x->open = x->peer->open = true;
		fwatch(x, EPOLLIN, EPOLL_CTL_MOD);
		/* Raw, the client is watched from now on. */
		if (f_raw)
			fwatch(x->peer, EPOLLIN, EPOLL_CTL_ADD);
		return;
	}
	if (x->open) {
		if (!frelay(x, events))
			fclose2(x);
		return;
	}
	n = read(x->fd, x->head + x->len, sizeof(x->head) - x->len);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		fclose2(x);
		return;
	}
	x->len += (size_t)n;
	if (memmem(x->head, x->len, "\r\n\r\n", 4) == NULL) {
		if (x->len == sizeof(x->head))
			fclose2(x);
		return;
	}
	/* Any head: the floor has one upstream, the bench server's raw
	 * port, and makes no decision.  (A client that sent more than its
	 * head before the 200 is no client of the bench.) */
	fconnect(x);
}

/*
 * floor PORTFILE UPSTREAM: a CONNECT "proxy" that does only what a tunnel
 * needs (read the head, connect to UPSTREAM whatever the head says,
 * answer 200, relay with read/write, close both on either's end): no
 * parsing, no decision, no DNS, no log, no limits.  Its tunnels/s is
 * what one event loop can reach on this machine at all.  RAW: no head and
 * no 200, each connection relayed to UPSTREAM from its accept.
 */
static void
cmd_floor(const char *portfile, const char *upstream, bool raw, const char *duty)
{
	struct epoll_event evs[256];
	int lfd;

	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	f_raw = raw;
	if (duty != NULL) {
		f_log = open(duty, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (f_log < 0)
			die(duty);
		memset(f_allow, 'a', sizeof(f_allow));
		memset(f_close, 'c', sizeof(f_close));
		f_allow[sizeof(f_allow) - 1] = f_close[sizeof(f_close) - 1] = '\n';
	}
	if (strncmp(upstream, "unix:", 5) == 0) {
		if (bs_unix_addr((struct sockaddr_un *)&f_up, &f_uplen, upstream + 5) < 0) {
			fprintf(stderr, "proxy-load: %s: path too long\n", upstream);
			exit(2);
		}
	} else {
		parse_addr(upstream, (struct sockaddr_in *)&f_up);
		f_uplen = sizeof(struct sockaddr_in);
	}
	fepfd = epoll_create1(0);
	if (fepfd < 0)
		die("epoll_create1");
	lfd = listen_any();
	{
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };

		if (epoll_ctl(fepfd, EPOLL_CTL_ADD, lfd, &e) < 0)
			die("epoll_ctl");
	}
	write_portfile(portfile, port_of(lfd), 0, 0);
	for (;;) {
		int n = epoll_wait(fepfd, evs, 256, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		while (f_dead != NULL) {
			struct fside *d = f_dead;

			f_dead = d->next_dead;
			free(d);
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr != NULL) {
				fevent(evs[i].data.ptr, evs[i].events);
				continue;
			}
			for (;;) {
				int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
				struct fside *x;

				if (fd < 0)
					break;
				nodelay(fd);
				x = calloc(1, sizeof(*x));
				if (x == NULL)
					die("calloc");
				x->fd = fd;
				x->client = true;
				if (f_raw)
					fconnect(x);
				else
					fwatch(x, EPOLLIN, EPOLL_CTL_ADD);
			}
		}
		/* duty: close lines no decision line took with it. */
		if (f_log >= 0)
			fflush_lines();
	}
}

/* ------------------------------------------------------------------ */
/* Blocking client helpers (bulk, idle, halfclose)                      */

static const char *g_proxy, *g_target;
static struct sockaddr_in g_dst;	/* the proxy, or the target */

static void
setup(const char *proxy, const char *target)
{
	g_proxy = strcmp(proxy, "-") == 0 ? NULL : proxy;
	g_target = target;
	parse_addr(g_proxy ? g_proxy : target, &g_dst);
}

static int
connect_req(char *req, size_t reqsz)
{
	return snprintf(req, reqsz, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
	    g_target, g_target);
}

/* The status of a response head, or -1. */
static int
head_status(const char *h, size_t len)
{
	/* "HTTP/1.x NNN" */
	if (len < 12 || memcmp(h, "HTTP/1.", 7) != 0 || h[8] != ' ')
		return -1;
	for (int i = 9; i < 12; i++)
		if (h[i] < '0' || h[i] > '9')
			return -1;
	return (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
}

/* Read a response head byte by byte (so nothing after it is consumed);
 * returns its status or -1. */
static int
read_head(int fd)
{
	char h[HEAD_MAX];
	size_t len = 0;

	while (len < sizeof(h)) {
		ssize_t n = read(fd, h + len, 1);
		if (n <= 0)
			return -1;
		len++;
		if (len >= 4 && memcmp(h + len - 4, "\r\n\r\n", 4) == 0)
			return head_status(h, len);
	}
	return -1;
}

/* A blocking connection to the target, through the tunnel if there is a
 * proxy; -1 with a message on failure. */
static int
open_tunnel(int timeout_s)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), st, rl;
	struct timeval tv = { .tv_sec = timeout_s };
	char req[512];

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	nodelay(fd);
	if (connect(fd, (struct sockaddr *)&g_dst, sizeof(g_dst)) < 0) {
		perror("proxy-load: connect");
		goto fail;
	}
	if (g_proxy == NULL)
		return fd;
	rl = connect_req(req, sizeof(req));
	if (write(fd, req, (size_t)rl) != rl) {
		perror("proxy-load: write CONNECT");
		goto fail;
	}
	st = read_head(fd);
	if (st != 200) {
		fprintf(stderr, "proxy-load: CONNECT %s: status %d\n",
		    g_target, st);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

static bool
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

static bool
read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		c += r;
		n -= (size_t)r;
	}
	return true;
}

static int
cmd_bulk(bool up, uint64_t bytes, double maxsecs)
{
	int fd = open_tunnel(1);
	unsigned char hdr[9];
	uint64_t moved = 0;
	double t0, t1;
	bool early = false;

	if (fd < 0)
		return 1;
	memset(bulk, 'x', sizeof(bulk));
	hdr[0] = up ? 'U' : 'G';
	put64(hdr + 1, bytes);
	t0 = now();
	if (!write_all(fd, hdr, sizeof(hdr)))
		die("proxy-load: write");
	while (moved < bytes) {
		uint64_t left = bytes - moved;
		size_t k = left < BULK ? (size_t)left : BULK;
		ssize_t n = up ? write(fd, bulk, k) : read(fd, bulk, k);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			/* SO_RCVTIMEO/SO_SNDTIMEO: only look at the clock. */
		} else if (n <= 0) {
			fprintf(stderr, "proxy-load: bulk stream ended after "
			    "%llu bytes\n", (unsigned long long)moved);
			return 1;
		} else {
			moved += (uint64_t)n;
		}
		if (now() - t0 > maxsecs) {
			early = true;
			break;
		}
	}
	if (up && !early) {
		unsigned char ack[8];
		if (!read_all(fd, ack, 8) || get64(ack) != bytes) {
			fprintf(stderr, "proxy-load: no upload ack\n");
			return 1;
		}
	}
	t1 = now();
	close(fd);
	if (early)
		fprintf(stderr, "proxy-load: stopped after %.1f s\n", maxsecs);
	printf("%llu %.3f %.1f\n", (unsigned long long)moved, t1 - t0,
	    moved / (t1 - t0) / 1e6);
	return 0;
}

static int
cmd_idle(unsigned conns)
{
	int *fds = calloc(conns, sizeof(int));
	char msg[MSG + 1], back[MSG];
	unsigned i;

	raise_nofile();
	if (fds == NULL)
		die("calloc");
	memset(msg, 'i', sizeof(msg));
	msg[0] = 'E';
	for (i = 0; i < conns; i++) {
		fds[i] = open_tunnel(5);
		if (fds[i] < 0)
			return 1;
		/* One exchange: every proxy has its upstream connection open
		 * and has relayed bytes both ways. */
		if (!write_all(fds[i], msg, sizeof(msg)) ||
		    !read_all(fds[i], back, sizeof(back))) {
			fprintf(stderr, "proxy-load: idle tunnel %u: no echo\n",
			    i);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, msg, sizeof(msg)) > 0)
		;
	for (i = 0; i < conns; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

static int
cmd_halfclose(void)
{
	int fd = open_tunnel(3);
	unsigned char got[8];
	ssize_t n;
	size_t have = 0;

	if (fd < 0) {
		printf("no: tunnel failed\n");
		return 0;
	}
	if (!write_all(fd, "Shello", 6) || shutdown(fd, SHUT_WR) < 0) {
		printf("no: write failed\n");
		return 0;
	}
	while (have < 8) {
		n = read(fd, got + have, 8 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			printf("no: %s\n", errno == EAGAIN ?
			    "no answer within 3 s" : strerror(errno));
			return 0;
		}
		if (n == 0) {
			printf("no: closed without the answer\n");
			return 0;
		}
		have += (size_t)n;
	}
	if (get64(got) != 5) {
		printf("no: the sink counted %llu bytes, not 5\n",
		    (unsigned long long)get64(got));
		return 0;
	}
	printf("yes\n");
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* epoll clients (tps, refuse, lat)                                     */

enum cstate { C_CONNECTING, C_HEAD, C_ECHO, C_IDLE };

struct cconn {
	int fd;
	enum cstate st;
	char head[HEAD_MAX];
	size_t head_len;
	size_t echo_got;
	double sent_at;
};

static int cepfd;
static char conn_req[512];
static int conn_req_len;
static char ping[MSG + 1];
static unsigned long errors;

static void
cwatch(struct cconn *c, uint32_t events, int op)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	if (epoll_ctl(cepfd, op, c->fd, &ev) < 0)
		die("epoll_ctl");
}

static void
cstart(struct cconn *c)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		die("socket");
	nodelay(c->fd);
	c->head_len = c->echo_got = 0;
	c->st = C_CONNECTING;
	if (connect(c->fd, (struct sockaddr *)&g_dst, sizeof(g_dst)) < 0 &&
	    errno != EINPROGRESS)
		die("connect");
	cwatch(c, EPOLLOUT, EPOLL_CTL_ADD);
}

static void
cclose(struct cconn *c)
{
	close(c->fd);	/* also leaves the epoll set */
	c->fd = -1;
}

/* Send the echo request: 'E' + 64 bytes on a fresh tunnel, 64 after. */
static bool
csend_ping(struct cconn *c, bool first)
{
	const char *p = first ? ping : ping + 1;
	size_t n = first ? MSG + 1 : MSG;

	c->echo_got = 0;
	c->sent_at = now();
	return write(c->fd, p, n) == (ssize_t)n;
}

/* Read up to the end of a response head; 1 done, 0 more to come, -1 bad. */
static int
cread_head(struct cconn *c)
{
	for (;;) {
		ssize_t n = read(c->fd, c->head + c->head_len,
		    sizeof(c->head) - c->head_len);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		if (n == 0)
			return -1;
		c->head_len += (size_t)n;
		if (memmem(c->head, c->head_len, "\r\n\r\n", 4) != NULL)
			return 1;
		if (c->head_len == sizeof(c->head))
			return -1;
	}
}

/* Read echo bytes; 1 when all 64 are back, 0 more to come, -1 bad. */
static int
cread_echo(struct cconn *c)
{
	char tmp[MSG];

	for (;;) {
		ssize_t n = read(c->fd, tmp, MSG - c->echo_got);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		if (n == 0)
			return -1;
		c->echo_got += (size_t)n;
		if (c->echo_got == MSG)
			return 1;
	}
}

/*
 * The loop of tps and refuse: each slot connects, (CONNECTs and reads the
 * head,) exchanges one echo (tps) and closes, then starts over.  Returns
 * the count of completed cycles.
 */
static unsigned long
cycle_loop(unsigned conns, double secs, bool refuse)
{
	struct cconn *cs = calloc(conns, sizeof(*cs));
	struct epoll_event evs[64];
	unsigned long done = 0;
	double end = now() + secs;

	if (cs == NULL)
		die("calloc");
	for (unsigned i = 0; i < conns; i++)
		cstart(&cs[i]);
	while (now() < end) {
		int n = epoll_wait(cepfd, evs, 64, 100);
		for (int i = 0; i < n; i++) {
			struct cconn *c = evs[i].data.ptr;
			int r;

			switch (c->st) {
			case C_CONNECTING: {
				int err = 0;
				socklen_t el = sizeof(err);
				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err != 0) {
					fprintf(stderr, "proxy-load: connect: %s\n",
					    strerror(err));
					goto fail;
				}
				if (g_proxy != NULL) {
					if (write(c->fd, conn_req,
					    (size_t)conn_req_len) != conn_req_len)
						goto fail;
					c->st = C_HEAD;
				} else {
					if (!csend_ping(c, true))
						goto fail;
					c->st = C_ECHO;
				}
				cwatch(c, EPOLLIN, EPOLL_CTL_MOD);
				break;
			}
			case C_HEAD:
				r = cread_head(c);
				if (r < 0)
					goto fail;
				if (r == 0)
					break;
				{
					int st = head_status(c->head, c->head_len);
					if (st != (refuse ? 403 : 200)) {
						fprintf(stderr, "proxy-load: "
						    "status %d\n", st);
						goto fail;
					}
				}
				if (refuse) {
					done++;
					cclose(c);
					cstart(c);
					break;
				}
				/* Bytes after the 200 head would be a bug here:
				 * the echo server speaks only when spoken to. */
				if (!csend_ping(c, true))
					goto fail;
				c->st = C_ECHO;
				break;
			case C_ECHO:
				r = cread_echo(c);
				if (r < 0)
					goto fail;
				if (r == 0)
					break;
				done++;
				cclose(c);
				cstart(c);
				break;
			default:
				break;
			}
			continue;
fail:
			errors++;
			cclose(c);
			cstart(c);
		}
	}
	for (unsigned i = 0; i < conns; i++)
		if (cs[i].fd >= 0)
			close(cs[i].fd);
	free(cs);
	return done;
}

static int
cmd_cycle(unsigned conns, double secs, bool refuse)
{
	double t0 = now();
	unsigned long done = cycle_loop(conns, secs, refuse);
	double t = now() - t0;

	printf("%.0f\n", done / t);
	if (errors > 0) {
		fprintf(stderr, "proxy-load: %lu errors\n", errors);
		return 1;
	}
	return 0;
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
cmd_lat(unsigned conns, double secs)
{
	struct cconn *cs = calloc(conns, sizeof(*cs));
	struct epoll_event evs[64];
	size_t cap = 1 << 20, ns = 0;
	double *samples = malloc(cap * sizeof(double)), end;

	raise_nofile();
	if (cs == NULL || samples == NULL)
		die("malloc");
	/* Establish every tunnel first (blocking), then measure. */
	for (unsigned i = 0; i < conns; i++) {
		cs[i].fd = open_tunnel(5);
		if (cs[i].fd < 0)
			return 1;
		nonblock(cs[i].fd);
		cs[i].st = C_ECHO;
		cwatch(&cs[i], EPOLLIN, EPOLL_CTL_ADD);
		if (!csend_ping(&cs[i], true))
			die("write");
	}
	/* The first exchange of each is a warm-up and not counted. */
	bool *warm = calloc(conns, sizeof(bool));
	if (warm == NULL)
		die("calloc");
	end = now() + secs;
	while (now() < end) {
		int n = epoll_wait(cepfd, evs, 64, 100);
		for (int i = 0; i < n; i++) {
			struct cconn *c = evs[i].data.ptr;
			int r = cread_echo(c);
			unsigned idx = (unsigned)(c - cs);

			if (r < 0) {
				fprintf(stderr, "proxy-load: tunnel %u died\n",
				    idx);
				return 1;
			}
			if (r == 0)
				continue;
			if (warm[idx]) {
				if (ns == cap) {
					cap *= 2;
					samples = realloc(samples,
					    cap * sizeof(double));
					if (samples == NULL)
						die("realloc");
				}
				samples[ns++] = now() - c->sent_at;
			}
			warm[idx] = true;
			if (!csend_ping(c, false))
				die("write");
		}
	}
	if (ns == 0) {
		fprintf(stderr, "proxy-load: no samples\n");
		return 1;
	}
	qsort(samples, ns, sizeof(double), dcmp);
	printf("%.1f %.1f\n", samples[(ns - 1) / 2] * 1e6,
	    samples[(size_t)((ns - 1) * 0.99)] * 1e6);
	for (unsigned i = 0; i < conns; i++)
		close(cs[i].fd);
	free(warm);
	free(samples);
	free(cs);
	return 0;
}

/*
 * slowhead: the cost of a head that arrives in pieces, one byte each.  The
 * pause between writes is what makes each byte a read of its own: written
 * back to back, the bytes pile up in the proxy's socket while it handles
 * the previous read, and it reads them many at a time, which hides how the
 * cost of one read grows with the head (a hostile client paces its bytes).
 */
#define SLOW_GAP_US 50
static int
cmd_slowhead(unsigned heads, size_t bytes)
{
	char *head = malloc(bytes + 1), *p;
	size_t len, rest, nlines, i;
	int fd = -1, rc = 1;
	double t0;
	unsigned k;

	if (head == NULL)
		die("malloc");
	len = (size_t)snprintf(head, bytes + 1, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n",
	    g_target, g_target);
	/* Field lines of at most 1000 bytes ("X-Pad-NNN: " value CRLF), then
	 * the empty line: exactly BYTES in all. */
	rest = bytes - len - 2;
	nlines = (rest + 999) / 1000;
	if (len + 2 >= bytes || rest / nlines < 16 || nlines > 999) {
		fprintf(stderr, "proxy-load: slowhead: %zu bytes is too short or too long\n", bytes);
		exit(2);
	}
	p = head + len;
	for (i = 0; i < nlines; i++) {
		size_t line = rest / nlines + (i < rest % nlines ? 1 : 0);
		p += sprintf(p, "X-Pad-%03zu: ", i);
		memset(p, 'a' + (int)(i % 26), line - 13);
		p += line - 13;
		memcpy(p, "\r\n", 2);
		p += 2;
	}
	memcpy(p, "\r\n", 2);
	p += 2;
	if ((size_t)(p - head) != bytes) {
		fprintf(stderr, "proxy-load: slowhead: built %zu bytes, not %zu\n",
		    (size_t)(p - head), bytes);
		goto out;
	}

	/* Sleeps of SLOW_GAP_US, not 50 µs more of the default slack. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	t0 = now();
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	nodelay(fd);
	if (connect(fd, (struct sockaddr *)&g_dst, sizeof(g_dst)) < 0) {
		perror("proxy-load: connect");
		goto out;
	}
	for (k = 0; k < heads; k++) {
		char body[13];
		int st;

		for (i = 0; i < bytes; i++) {
			struct timespec gap = { 0, SLOW_GAP_US * 1000L };

			if (!write_all(fd, head + i, 1)) {
				perror("proxy-load: slowhead: write");
				goto out;
			}
			nanosleep(&gap, NULL);
		}
		st = read_head(fd);
		if (st != 200 || !read_all(fd, body, sizeof(body))) {
			fprintf(stderr, "proxy-load: slowhead: head %u: status %d\n", k + 1, st);
			goto out;
		}
	}
	printf("%.3f\n", now() - t0);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(head);
	return rc;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: proxy-load serve PORTFILE\n"
	    "       proxy-load floor PORTFILE UPSTREAM [raw | duty LOGFILE]\n"
	    "       proxy-load up|down PROXY TARGET BYTES MAXSECS\n"
	    "       proxy-load tps|lat|refuse PROXY TARGET CONNS SECONDS\n"
	    "       proxy-load idle PROXY TARGET CONNS\n"
	    "       proxy-load slowhead PROXY TARGET HEADS BYTES\n"
	    "       proxy-load halfclose PROXY TARGET\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "serve") == 0) {
		if (argc != 3)
			usage();
		cmd_serve(argv[2]);
	}
	if (strcmp(argv[1], "floor") == 0) {
		if (argc == 5 && strcmp(argv[4], "raw") == 0)
			cmd_floor(argv[2], argv[3], true, NULL);
		if (argc == 6 && strcmp(argv[4], "duty") == 0)
			cmd_floor(argv[2], argv[3], false, argv[5]);
		if (argc != 4)
			usage();
		cmd_floor(argv[2], argv[3], false, NULL);
	}
	if (argc < 4)
		usage();
	signal(SIGPIPE, SIG_IGN);
	setup(argv[2], argv[3]);
	conn_req_len = connect_req(conn_req, sizeof(conn_req));
	memset(ping, 'p', sizeof(ping));
	ping[0] = 'E';
	cepfd = epoll_create1(0);
	if (cepfd < 0)
		die("epoll_create1");
	if ((strcmp(argv[1], "up") == 0 || strcmp(argv[1], "down") == 0) &&
	    argc == 6)
		return cmd_bulk(argv[1][0] == 'u', num(argv[4]),
		    (double)num(argv[5]));
	if (strcmp(argv[1], "tps") == 0 && argc == 6)
		return cmd_cycle((unsigned)num(argv[4]), (double)num(argv[5]),
		    false);
	if (strcmp(argv[1], "refuse") == 0 && argc == 6)
		return cmd_cycle((unsigned)num(argv[4]), (double)num(argv[5]),
		    true);
	if (strcmp(argv[1], "lat") == 0 && argc == 6)
		return cmd_lat((unsigned)num(argv[4]), (double)num(argv[5]));
	if (strcmp(argv[1], "idle") == 0 && argc == 5)
		return cmd_idle((unsigned)num(argv[4]));
	if (strcmp(argv[1], "slowhead") == 0 && argc == 6)
		return cmd_slowhead((unsigned)num(argv[4]), (size_t)num(argv[5]));
	if (strcmp(argv[1], "halfclose") == 0 && argc == 4)
		return cmd_halfclose();
	usage();
	return 2;
}
