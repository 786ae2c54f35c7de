/*
 * tests/bench/bridge-load.c: the load server and client of
 * tests/bench/bench-bridge.sh.  The same client measures every path (direct
 * TCP, direct UNIX socket, postern-bridge, socat) against the same server,
 * so that only the relay in between differs.  tests/bench/bench-capture.sh
 * uses it too (tps, dns-a and dns, SOCKS5 tunnels), for the ways out of a
 * bridge sandbox.
 *
 *   bridge-load serve UNIXPATH TCPPORTFILE
 *       Serve on UNIXPATH and on 127.0.0.1:<free port> (written to
 *       TCPPORTFILE).  The first byte of a connection picks what it does:
 *       'E' echo, 'S' sink (read to EOF, answer the 8-byte count),
 *       'G' + 8-byte count: send that many bytes and close;
 *       'P' + 8-byte count: the same with the bytes of a fixed pattern
 *       (a pseudo-random table of a prime length, repeated), which the
 *       client checks byte for byte; 'U' + 8-byte count: read that many
 *       bytes, answer the 8-byte count, close (an upload that needs no
 *       half-close).
 *   bridge-load up|down ADDR BYTES       one bulk stream; prints "MB/s"
 *   bridge-load upc ADDR BYTES           up, announcing the count ('U')
 *                                        instead of shutting down the
 *                                        write side: for a relay that does
 *                                        not carry a half-close
 *   bridge-load cps ADDR CONNS SECONDS   connect+64-byte echo+close loops
 *   bridge-load lat ADDR CONNS SECONDS   64-byte ping-pong; p50/p99 in us
 *   bridge-load idle ADDR CONNS          open CONNS echo connections, print
 *                                        "ready", hold them until stdin EOF
 *   bridge-load tps ADDR CONNS SECONDS   CONNS processes, each looping on a
 *                                        blocking dial (tunnel included) +
 *                                        64-byte echo + close; prints /s
 *   bridge-load dl ADDR CONNS BYTES SECONDS
 *                                        open CONNS tunnels, then download
 *                                        BYTES of the pattern on all of
 *                                        them at once, checking every byte;
 *                                        prints "OK SHORT WRONG FAILED":
 *                                        complete and right, cut short (EOF,
 *                                        reset or not done in SECONDS),
 *                                        complete with a wrong or extra
 *                                        byte, tunnel not opened
 *   bridge-load dns-a ADDR NAME          one A query to the DNS server at
 *                                        ADDR (tcp: syntax, sent over UDP);
 *                                        prints the first address
 *   bridge-load dns ADDR NAME CLIENTS SECONDS [FIRST COUNT]
 *                                        CLIENTS processes, each asking the
 *                                        A record of NAME, one query in
 *                                        flight; prints answers/s.  With
 *                                        FIRST and COUNT, a "%u" in NAME is
 *                                        each of FIRST..FIRST+COUNT-1 once
 *                                        (distinct names), spread over the
 *                                        clients
 *
 * With BRIDGE_LOAD_CONNECT=HOST:PORT, up, down, lat and tps go through an
 * HTTP CONNECT tunnel to HOST:PORT opened at ADDR (postern-proxy); with
 * BRIDGE_LOAD_SOCKS=HOST:PORT, through a SOCKS5 CONNECT to that name
 * (ATYP 0x03, no authentication) instead.  BRIDGE_LOAD_AUTH, when set, is
 * the value of a Proxy-Authorization field sent with the CONNECT (a proxy
 * that wants credentials: sandbox-runtime's, in bench-sandbox.sh).
 *
 * ADDR is tcp:HOST:PORT or unix:PATH.  Loopback only.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/unix.h"

#define BUF (1 << 20)
#define MSG 64

static char buf[BUF];

/*
 * The 'P' stream: byte i is pat[i % PAT_LEN].  A prime length, so that a
 * lost, repeated or reordered piece of any power-of-two size does not land
 * on the same bytes again.
 */
#define PAT_LEN 1048573u
static unsigned char pat[PAT_LEN];

static void
pat_init(void)
{
	uint32_t x = 2463534242u;
	size_t i;

	for (i = 0; i < PAT_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		pat[i] = (unsigned char)(x >> 24);
	}
}

/*
 * In dl, a tunnel that is not opened is a counted failure, not the end
 * of the tool.
 */
static bool soft_tunnel;

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
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Parse ADDR into a sockaddr; returns its length. */
static socklen_t
parse_addr(const char *spec, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strncmp(spec, "unix:", 5) == 0) {
		socklen_t len;

		if (bs_unix_addr((struct sockaddr_un *)ss, &len, spec + 5) < 0)
			die("path too long");
		return len;
	}
	if (strncmp(spec, "tcp:", 4) == 0) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		char host[64];
		const char *colon = strrchr(spec + 4, ':');

		if (colon == NULL || (size_t)(colon - spec - 4) >= sizeof(host))
			die("bad tcp address");
		memcpy(host, spec + 4, (size_t)(colon - spec - 4));
		host[colon - spec - 4] = '\0';
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)strtoul(colon + 1, NULL, 10));
		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			die("bad tcp host");
		return sizeof(*sin);
	}
	fprintf(stderr, "ADDR is tcp:HOST:PORT or unix:PATH\n");
	exit(2);
}

static void
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t k;

	while (n > 0) {
		k = write(fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		c += k;
		n -= (size_t)k;
	}
}

static void
read_all(int fd, void *p, size_t n)
{
	char *c = p;
	ssize_t k;

	while (n > 0) {
		k = read(fd, c, n);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			fprintf(stderr, "read: %s\n", k == 0 ? "EOF" : strerror(errno));
			exit(1);
		}
		c += k;
		n -= (size_t)k;
	}
}

/*
 * With BRIDGE_LOAD_CONNECT=HOST:PORT set, every blocking dial first asks
 * the far end (postern-proxy, through a relay or directly) for a CONNECT
 * tunnel to HOST:PORT, so the same tests run through the whole chain.
 */
static void
socks(int fd, const char *target)
{
	unsigned char req[300], rep[22];
	const char *colon = strrchr(target, ':');
	size_t hl;
	uint16_t port;

	if (colon == NULL || (hl = (size_t)(colon - target)) == 0 || hl > 255)
		die("BRIDGE_LOAD_SOCKS is HOST:PORT");
	port = (uint16_t)strtoul(colon + 1, NULL, 10);
	/* Greeting and request in one write: the proxy takes them in pieces
	 * of any size, and a client that waits for the method reply costs a
	 * round trip the HTTP CONNECT path does not pay either. */
	memcpy(req, "\x05\x01\x00\x05\x01\x00\x03", 7);
	req[7] = (unsigned char)hl;
	memcpy(req + 8, target, hl);
	req[8 + hl] = (unsigned char)(port >> 8);
	req[9 + hl] = (unsigned char)port;
	write_all(fd, req, 10 + hl);
	read_all(fd, rep, 2);
	if (rep[0] != 5 || rep[1] != 0) {
		fprintf(stderr, "SOCKS5: method refused\n");
		exit(1);
	}
	read_all(fd, rep, 4);
	if (rep[1] != 0) {
		fprintf(stderr, "SOCKS5 CONNECT refused: reply %u\n", rep[1]);
		exit(1);
	}
	/* The bound address: IPv4 or IPv6, then the port. */
	read_all(fd, rep, rep[3] == 4 ? 18 : 6);
}

/* 0, or -1 when soft_tunnel is set and the tunnel was not opened. */
static int
tunnel(int fd)
{
	const char *target = getenv("BRIDGE_LOAD_CONNECT");
	const char *starget = getenv("BRIDGE_LOAD_SOCKS");
	const char *auth = getenv("BRIDGE_LOAD_AUTH");
	char req[1024], head[4096];
	size_t got = 0;
	ssize_t n;
	int len;

	if (starget != NULL && *starget != '\0') {
		socks(fd, starget);
		return 0;
	}
	if (target == NULL || *target == '\0')
		return 0;
	if (auth != NULL && *auth != '\0')
		len = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n"
		    "Proxy-Authorization: %s\r\n\r\n", target, target, auth);
	else
		len = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
		    target, target);
	if (len < 0 || (size_t)len >= sizeof(req))
		die("CONNECT request too long");
	write_all(fd, req, (size_t)len);
	/* Byte by byte: nothing after the head may be consumed here. */
	while (got < sizeof(head) - 1) {
		n = read(fd, head + got, 1);
		if (n <= 0) {
			if (soft_tunnel) {
				fprintf(stderr, "CONNECT: no answer\n");
				return -1;
			}
			die("CONNECT: no answer");
		}
		got++;
		if (got >= 4 && memcmp(head + got - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	head[got] = '\0';
	if (strncmp(head, "HTTP/1.1 200", 12) != 0) {
		fprintf(stderr, "CONNECT refused: %.200s\n", head);
		if (soft_tunnel)
			return -1;
		exit(1);
	}
	return 0;
}

static int
dial(const struct sockaddr_storage *ss, socklen_t len, bool nb)
{
	int fd, one = 1;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | (nb ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		die("socket");
	if (ss->ss_family == AF_INET)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	if (!nb && tunnel(fd) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* --- server --- */

struct sconn {
	int fd;
	char mode;       /* 0 until the first byte */
	uint64_t count;  /* S: bytes read; G, P: bytes left to send */
	uint64_t sent;   /* P: bytes sent; U: bytes read */
	unsigned char hdr[8];
	size_t hdrlen;
	char *pend;      /* E: what could not be written back yet */
	size_t pendlen;
};

static void
sclose(struct sconn *c)
{
	close(c->fd);
	free(c->pend);
	free(c);
}

static void
serve_event(int ep, struct sconn *c, uint32_t ev)
{
	struct epoll_event e;
	ssize_t n, w;

	for (;;) {
		if ((c->mode == 'G' || c->mode == 'P') && c->hdrlen == 8) {
			while (c->count > 0) {
				size_t k = c->count < BUF ? (size_t)c->count : BUF;
				const char *from = buf;

				if (c->mode == 'P') {
					size_t off = (size_t)(c->sent % PAT_LEN);

					from = (const char *)pat + off;
					if (k > PAT_LEN - off)
						k = PAT_LEN - off;
				}
				w = write(c->fd, from, k);
				if (w < 0) {
					if (errno == EAGAIN) {
						e.events = EPOLLOUT;
						e.data.ptr = c;
						epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
						return;
					}
					sclose(c);
					return;
				}
				c->count -= (uint64_t)w;
				c->sent += (uint64_t)w;
			}
			shutdown(c->fd, SHUT_WR);
			sclose(c);
			return;
		}
		if (c->mode == 'E' && c->pendlen > 0) {
			w = write(c->fd, c->pend, c->pendlen);
			if (w < 0 && errno == EAGAIN) {
				e.events = EPOLLOUT;
				e.data.ptr = c;
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
				return;
			}
			if (w < 0) {
				sclose(c);
				return;
			}
			memmove(c->pend, c->pend + w, c->pendlen - (size_t)w);
			c->pendlen -= (size_t)w;
			if (c->pendlen > 0)
				continue;
			e.events = EPOLLIN;
			e.data.ptr = c;
			epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
		}
		n = read(c->fd, buf, BUF);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			if (n == 0 && c->mode == 'S') {
				uint64_t v = c->count;

				/* The answer is 8 bytes into an idle socket. */
				(void)!write(c->fd, &v, sizeof(v));
			}
			sclose(c);
			return;
		}
		{
			char *p = buf;
			size_t len = (size_t)n;

			if (c->mode == 0) {
				c->mode = *p++;
				len--;
			}
			if (c->mode == 'G' || c->mode == 'P' || c->mode == 'U') {
				while (len > 0 && c->hdrlen < 8) {
					c->hdr[c->hdrlen++] = (unsigned char)*p++;
					len--;
				}
				if (c->hdrlen == 8)
					memcpy(&c->count, c->hdr, 8);
				if (c->mode != 'U' || c->hdrlen < 8)
					continue;
				c->sent += len;
				if (c->sent >= c->count) {
					uint64_t v = c->sent;

					/* 8 bytes into an idle socket. */
					(void)!write(c->fd, &v, sizeof(v));
					sclose(c);
					return;
				}
				continue;
			}
			if (c->mode == 'S') {
				c->count += len;
				continue;
			}
			if (c->mode == 'E' && len > 0) {
				w = write(c->fd, p, len);
				if (w < 0 && errno != EAGAIN) {
					sclose(c);
					return;
				}
				if (w < 0)
					w = 0;
				if ((size_t)w < len) {
					c->pend = realloc(c->pend, c->pendlen + len - (size_t)w);
					memcpy(c->pend + c->pendlen, p + w, len - (size_t)w);
					c->pendlen += len - (size_t)w;
				}
				continue;
			}
			if (c->mode != 'E') {
				sclose(c);
				return;
			}
		}
	}
	(void)ev;
}

static _Noreturn void
serve(const char *upath, const char *portfile)
{
	struct sockaddr_un sun;
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	struct epoll_event e, evs[256];
	int ep, lu, lt, one = 1, i, n, fd;
	FILE *f;

	raise_nofile();
	pat_init();
	ep = epoll_create1(0);
	lu = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", upath);
	unlink(upath);
	if (bind(lu, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(lu, 4096) < 0)
		die("unix listen");
	lt = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(lt, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lt, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lt, 4096) < 0)
		die("tcp listen");
	getsockname(lt, (struct sockaddr *)&sin, &slen);
	f = fopen(portfile, "w");
	if (f == NULL)
		die(portfile);
	fprintf(f, "%u\n", ntohs(sin.sin_port));
	fclose(f);
	e.events = EPOLLIN;
	e.data.ptr = &lu;
	epoll_ctl(ep, EPOLL_CTL_ADD, lu, &e);
	e.data.ptr = &lt;
	epoll_ctl(ep, EPOLL_CTL_ADD, lt, &e);
	for (;;) {
		n = epoll_wait(ep, evs, 256, -1);
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == &lu || evs[i].data.ptr == &lt) {
				int l = *(int *)evs[i].data.ptr;

				while ((fd = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct sconn *c = calloc(1, sizeof(*c));

					if (l == lt)
						setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					c->fd = fd;
					e.events = EPOLLIN;
					e.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
				}
				continue;
			}
			serve_event(ep, evs[i].data.ptr, evs[i].events);
		}
	}
}

/* --- clients --- */

static int
bulk(const char *spec, bool up, bool counted, uint64_t bytes)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(spec, &ss);
	uint64_t got = 0, left = bytes;
	double t0, t;
	ssize_t n;
	int fd;

	memset(buf, 'x', BUF);
	t0 = now();
	fd = dial(&ss, len, false);
	if (fd < 0)
		die("connect");
	if (up) {
		unsigned char req[9];

		req[0] = counted ? 'U' : 'S';
		memcpy(req + 1, &bytes, 8);
		write_all(fd, req, counted ? 9 : 1);
		while (left > 0) {
			size_t k = left < BUF ? left : BUF;

			write_all(fd, buf, k);
			left -= k;
		}
		if (!counted)
			shutdown(fd, SHUT_WR);
		read_all(fd, &got, sizeof(got));
	} else {
		unsigned char req[9];

		req[0] = 'G';
		memcpy(req + 1, &bytes, 8);
		write_all(fd, req, 9);
		while ((n = read(fd, buf, BUF)) > 0)
			got += (uint64_t)n;
	}
	t = now() - t0;
	close(fd);
	if (got != bytes) {
		fprintf(stderr, "%s: %llu of %llu bytes\n", up ? "up" : "down",
		    (unsigned long long)got, (unsigned long long)bytes);
		return 1;
	}
	printf("%.1f\n", (double)bytes / t / 1e6);
	return 0;
}

enum { W_CONNECT, W_SEND, W_RECV };

struct worker {
	int fd;
	int state;
	size_t got;
	double t0;
};

static int
cps(const char *spec, int conns, double secs)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(spec, &ss);
	struct worker *w = calloc((size_t)conns, sizeof(*w));
	struct epoll_event e, evs[256];
	unsigned long done = 0, failed = 0;
	double t0, tend;
	char msg[MSG + 1];
	int ep, i, n;

	raise_nofile();
	memset(msg, 'p', sizeof(msg));
	msg[0] = 'E';
	ep = epoll_create1(0);
	t0 = now();
	tend = t0 + secs;
	for (i = 0; i < conns; i++) {
		w[i].fd = dial(&ss, len, true);
		if (w[i].fd < 0)
			die("connect");
		w[i].state = W_CONNECT;
		e.events = EPOLLOUT;
		e.data.ptr = &w[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, w[i].fd, &e);
	}
	while (now() < tend) {
		n = epoll_wait(ep, evs, 256, 100);
		for (i = 0; i < n; i++) {
			struct worker *k = evs[i].data.ptr;
			ssize_t r;

			if (k->state == W_CONNECT) {
				if (evs[i].events & (EPOLLERR | EPOLLHUP))
					goto again;
				if (write(k->fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
					goto again;
				k->state = W_RECV;
				k->got = 0;
				e.events = EPOLLIN;
				e.data.ptr = k;
				epoll_ctl(ep, EPOLL_CTL_MOD, k->fd, &e);
				continue;
			}
			r = read(k->fd, buf, MSG - k->got);
			if (r < 0 && errno == EAGAIN)
				continue;
			if (r <= 0)
				goto again;
			k->got += (size_t)r;
			if (k->got < MSG)
				continue;
			done++;
			close(k->fd);
			goto fresh;
again:
			failed++;
			close(k->fd);
fresh:
			k->fd = dial(&ss, len, true);
			if (k->fd < 0) {
				failed++;
				continue;
			}
			k->state = W_CONNECT;
			e.events = EPOLLOUT;
			e.data.ptr = k;
			epoll_ctl(ep, EPOLL_CTL_ADD, k->fd, &e);
		}
	}
	printf("%.0f\n", (double)done / (now() - t0));
	if (failed > 0)
		fprintf(stderr, "cps: %lu failed\n", failed);
	return 0;
}

/*
 * Tunnels per second: CONNS processes, each dialling blocking (so that
 * the tunnel's handshake, HTTP or SOCKS5, is part of what is timed),
 * echoing 64 bytes and closing, until SECONDS are up.
 */
static int
tps(const char *spec, int conns, double secs)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(spec, &ss);
	unsigned long total = 0, failed = 0, v[2];
	double t0 = now();
	int p[2], i;

	if (pipe(p) < 0)
		die("pipe");
	for (i = 0; i < conns; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			char msg[MSG + 1];
			unsigned long done = 0, bad = 0;
			double tend = t0 + secs;

			close(p[0]);
			memset(msg, 'p', sizeof(msg));
			msg[0] = 'E';
			while (now() < tend) {
				int fd = dial(&ss, len, false);

				if (fd < 0) {
					bad++;
					continue;
				}
				write_all(fd, msg, sizeof(msg));
				read_all(fd, buf, MSG);
				close(fd);
				done++;
			}
			v[0] = done;
			v[1] = bad;
			write_all(p[1], v, sizeof(v));
			_exit(0);
		}
	}
	close(p[1]);
	for (i = 0; i < conns; i++) {
		if (read(p[0], v, sizeof(v)) != (ssize_t)sizeof(v))
			break;
		total += v[0];
		failed += v[1];
	}
	while (wait(NULL) > 0)
		;
	if (i < conns) {
		fprintf(stderr, "tps: %d of %d clients died\n", conns - i, conns);
		return 1;
	}
	printf("%.0f\n", (double)total / (now() - t0));
	if (failed > 0)
		fprintf(stderr, "tps: %lu failed\n", failed);
	return 0;
}

/* An A query for NAME with ID into q; returns its length. */
static size_t
dns_query(unsigned char *q, size_t cap, const char *name, uint16_t id)
{
	size_t n = 12;
	const char *l = name;

	memset(q, 0, 12);
	q[0] = (unsigned char)(id >> 8);
	q[1] = (unsigned char)id;
	q[2] = 0x01;		/* RD */
	q[5] = 1;		/* QDCOUNT */
	while (*l != '\0') {
		const char *dot = strchr(l, '.');
		size_t k = dot ? (size_t)(dot - l) : strlen(l);

		if (k == 0 || k > 63 || n + k + 6 > cap)
			die("bad name");
		q[n++] = (unsigned char)k;
		memcpy(q + n, l, k);
		n += k;
		l += k;
		if (*l == '.')
			l++;
	}
	q[n++] = 0;
	memcpy(q + n, "\x00\x01\x00\x01", 4);	/* A, IN */
	return n + 4;
}

/*
 * Is r (n bytes) a NOERROR answer to ID with at least one record?  Its
 * first A record's address into a, when a is not NULL.
 */
static bool
dns_answer(const unsigned char *r, size_t n, uint16_t id, struct in_addr *a)
{
	size_t off = 12;
	unsigned an;

	if (n < 12 || ((r[0] << 8) | r[1]) != id || (r[3] & 0x0f) != 0)
		return false;
	an = (unsigned)((r[6] << 8) | r[7]);
	if (an == 0)
		return false;
	if (a == NULL)
		return true;
	/* Skip the question, then the first record's name (a pointer or
	 * labels), type, class, TTL and length. */
	while (off < n && r[off] != 0)
		off += (size_t)r[off] + 1;
	off += 5;
	if (off + 2 > n)
		return false;
	if ((r[off] & 0xc0) == 0xc0)
		off += 2;
	else {
		while (off < n && r[off] != 0)
			off += (size_t)r[off] + 1;
		off++;
	}
	if (off + 14 > n || r[off] != 0 || r[off + 1] != 1 || r[off + 9] != 4)
		return false;
	memcpy(a, r + off + 10, 4);
	return true;
}

static int
dns_socket(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(spec, &ss);
	struct timeval tv = { 1, 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		die("connect");
	return fd;
}

static int
dns_a(const char *spec, const char *name)
{
	unsigned char q[512], r[512];
	struct in_addr a;
	char text[INET_ADDRSTRLEN];
	int fd = dns_socket(spec), try;
	size_t qn = dns_query(q, sizeof(q), name, 0x4242);
	ssize_t n;

	for (try = 0; try < 3; try++) {
		write_all(fd, q, qn);
		n = recv(fd, r, sizeof(r), 0);
		if (n > 0 && dns_answer(r, (size_t)n, 0x4242, &a)) {
			printf("%s\n", inet_ntop(AF_INET, &a, text, sizeof(text)));
			return 0;
		}
	}
	fprintf(stderr, "dns-a: no A record for %s\n", name);
	return 1;
}

/*
 * DNS answers per second: CLIENTS processes, each with its own UDP
 * socket and one query in flight at a time (a resolver's stub resolver
 * asking again and again), counting the NOERROR answers with a record.
 */
/* NAME with its "%u" (if any) replaced by IDX, into out. */
static void
dns_name(char *out, size_t cap, const char *name, unsigned long idx)
{
	const char *pct = strstr(name, "%u");

	if (pct == NULL)
		snprintf(out, cap, "%s", name);
	else
		snprintf(out, cap, "%.*s%lu%s", (int)(pct - name), name, idx, pct + 2);
}

static int
dns_rate(const char *spec, const char *name, int clients, double secs,
    unsigned long first, unsigned long count)
{
	unsigned long total = 0, failed = 0, v[2];
	double t0 = now();
	int p[2], i;

	if (pipe(p) < 0)
		die("pipe");
	for (i = 0; i < clients; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			unsigned char q[512], r[512];
			unsigned long done = 0, bad = 0;
			uint16_t id = (uint16_t)(i * 4099);
			double tend = t0 + secs;
			int fd = dns_socket(spec);
			unsigned long k = (unsigned long)i;
			char nm[256];

			close(p[0]);
			dns_name(nm, sizeof(nm), name, first);
			while (now() < tend) {
				size_t qn;
				ssize_t n;

				if (count > 0) {
					if (k >= count)
						break;
					dns_name(nm, sizeof(nm), name, first + k);
					k += (unsigned long)clients;
				}
				qn = dns_query(q, sizeof(q), nm, ++id);

				write_all(fd, q, qn);
				n = recv(fd, r, sizeof(r), 0);
				if (n > 0 && dns_answer(r, (size_t)n, id, NULL))
					done++;
				else
					bad++;
			}
			v[0] = done;
			v[1] = bad;
			write_all(p[1], v, sizeof(v));
			_exit(0);
		}
	}
	close(p[1]);
	for (i = 0; i < clients; i++) {
		if (read(p[0], v, sizeof(v)) != (ssize_t)sizeof(v))
			break;
		total += v[0];
		failed += v[1];
	}
	while (wait(NULL) > 0)
		;
	if (i < clients) {
		fprintf(stderr, "dns: %d of %d clients died\n", clients - i, clients);
		return 1;
	}
	printf("%.0f\n", (double)total / (now() - t0));
	if (failed > 0)
		fprintf(stderr, "dns: %lu queries without an answer\n", failed);
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
lat(const char *spec, int conns, double secs)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(spec, &ss);
	struct worker *w = calloc((size_t)conns, sizeof(*w));
	size_t cap = 4 << 20, ns = 0;
	double *samples = malloc(cap * sizeof(double));
	struct epoll_event e, evs[256];
	double tend;
	char msg[MSG];
	int ep, i, n;

	raise_nofile();
	memset(msg, 'q', sizeof(msg));
	ep = epoll_create1(0);
	for (i = 0; i < conns; i++) {
		w[i].fd = dial(&ss, len, false);
		if (w[i].fd < 0)
			die("connect");
		write_all(w[i].fd, "E", 1);
		nonblock(w[i].fd);
		e.events = EPOLLIN;
		e.data.ptr = &w[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, w[i].fd, &e);
	}
	/* Warm-up round trip on each, not measured. */
	for (i = 0; i < conns; i++) {
		size_t got = 0;
		ssize_t r;

		write_all(w[i].fd, msg, MSG);
		while (got < MSG) {
			r = read(w[i].fd, buf, MSG - got);
			if (r > 0)
				got += (size_t)r;
			else if (r == 0)
				die("warm-up EOF");
		}
	}
	tend = now() + secs;
	for (i = 0; i < conns; i++) {
		w[i].t0 = now();
		w[i].got = 0;
		write_all(w[i].fd, msg, MSG);
	}
	while (now() < tend) {
		n = epoll_wait(ep, evs, 256, 100);
		for (i = 0; i < n; i++) {
			struct worker *k = evs[i].data.ptr;
			ssize_t r = read(k->fd, buf, MSG - k->got);
			double t;

			if (r <= 0)
				continue;
			k->got += (size_t)r;
			if (k->got < MSG)
				continue;
			t = now();
			if (ns < cap)
				samples[ns++] = (t - k->t0) * 1e6;
			k->got = 0;
			k->t0 = t;
			write_all(k->fd, msg, MSG);
		}
	}
	if (ns == 0) {
		fprintf(stderr, "lat: no samples\n");
		return 1;
	}
	qsort(samples, ns, sizeof(double), cmp_double);
	printf("%.1f %.1f %zu\n", samples[ns / 2], samples[(size_t)((double)ns * 0.99)], ns);
	return 0;
}

static int
idle(const char *spec, int conns)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(spec, &ss);
	int *fds = calloc((size_t)conns, sizeof(int));
	char c;
	int i;

	raise_nofile();
	for (i = 0; i < conns; i++) {
		fds[i] = dial(&ss, len, false);
		if (fds[i] < 0)
			die("connect");
		/* One echo end to end: the relay's far side is connected too. */
		write_all(fds[i], "Ei", 2);
		read_all(fds[i], &c, 1);
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	for (i = 0; i < conns; i++)
		close(fds[i]);
	return 0;
}

/*
 * CONNS downloads at once: every tunnel is opened first (blocking, one
 * after the other), then every request is sent, then all are read
 * together, so that the relays carry CONNS streams at the same time.  A
 * download is right when it ends (EOF) after exactly BYTES bytes, each the
 * pattern's; what ends early, is reset or is not done within SECONDS is
 * short; what has a wrong byte or more than BYTES is wrong.
 */
struct dlconn {
	int fd;
	uint64_t got;
	bool bad;
	bool done;
};

static int
dl(const char *spec, int conns, uint64_t bytes, double secs)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(spec, &ss);
	struct dlconn *d = calloc((size_t)conns, sizeof(*d));
	struct epoll_event e, evs[256];
	unsigned long ok = 0, shrt = 0, wrong = 0, failed = 0;
	unsigned long s_eof = 0, s_err = 0, s_late = 0;
	uint64_t s_min = UINT64_MAX, s_max = 0;
	int ep, i, n, open_ = 0;
	unsigned char req[9];
	double tend;

	if (d == NULL)
		die("calloc");
	raise_nofile();
	pat_init();
	soft_tunnel = true;
	ep = epoll_create1(0);
	for (i = 0; i < conns; i++) {
		d[i].fd = dial(&ss, len, false);
		if (d[i].fd < 0) {
			failed++;
			d[i].done = true;
		}
	}
	req[0] = 'P';
	memcpy(req + 1, &bytes, 8);
	for (i = 0; i < conns; i++) {
		if (d[i].done)
			continue;
		write_all(d[i].fd, req, sizeof(req));
		nonblock(d[i].fd);
		e.events = EPOLLIN;
		e.data.ptr = &d[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, d[i].fd, &e);
		open_++;
	}
	tend = now() + secs;
	while (open_ > 0 && now() < tend) {
		n = epoll_wait(ep, evs, 256, 100);
		for (i = 0; i < n; i++) {
			struct dlconn *k = evs[i].data.ptr;
			ssize_t r = read(k->fd, buf, BUF);

			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r > 0) {
				size_t at = 0;

				while (at < (size_t)r && !k->bad) {
					size_t off = (size_t)((k->got + at) % PAT_LEN);
					size_t m = (size_t)r - at;

					if (m > PAT_LEN - off)
						m = PAT_LEN - off;
					if (k->got + at + m > bytes ||
					    memcmp(buf + at, pat + off, m) != 0)
						k->bad = true;
					at += m;
				}
				k->got += (uint64_t)r;
				continue;
			}
			/* EOF or an error (a reset): the end of this one. */
			if (k->bad)
				wrong++;
			else if (r == 0 && k->got == bytes)
				ok++;
			else {
				shrt++;
				if (r == 0)
					s_eof++;
				else
					s_err++;
				s_min = k->got < s_min ? k->got : s_min;
				s_max = k->got > s_max ? k->got : s_max;
			}
			k->done = true;
			close(k->fd);
			open_--;
		}
	}
	for (i = 0; i < conns; i++) {
		if (d[i].done)
			continue;
		/* Still open at the deadline: not delivered in time. */
		if (d[i].bad)
			wrong++;
		else {
			shrt++;
			s_late++;
			s_min = d[i].got < s_min ? d[i].got : s_min;
			s_max = d[i].got > s_max ? d[i].got : s_max;
		}
		close(d[i].fd);
	}
	if (shrt > 0)
		fprintf(stderr, "dl: %lu of %d cut short (%lu by EOF, %lu by an error, "
		    "%lu still open after %.0fs), after %llu to %llu of %llu bytes\n",
		    shrt, conns, s_eof, s_err, s_late, secs, (unsigned long long)s_min,
		    (unsigned long long)s_max, (unsigned long long)bytes);
	if (wrong > 0)
		fprintf(stderr, "dl: %lu of %d with a wrong byte\n", wrong, conns);
	printf("%lu %lu %lu %lu\n", ok, shrt, wrong, failed);
	free(d);
	return 0;
}

int
main(int argc, char **argv)
{
	/* A peer that went away is a failed exchange, not a dead tool. */
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 4 && strcmp(argv[1], "serve") == 0)
		serve(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "up") == 0)
		return bulk(argv[2], true, false, strtoull(argv[3], NULL, 10));
	if (argc >= 4 && strcmp(argv[1], "upc") == 0)
		return bulk(argv[2], true, true, strtoull(argv[3], NULL, 10));
	if (argc >= 4 && strcmp(argv[1], "down") == 0)
		return bulk(argv[2], false, false, strtoull(argv[3], NULL, 10));
	if (argc >= 5 && strcmp(argv[1], "cps") == 0)
		return cps(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc >= 5 && strcmp(argv[1], "lat") == 0)
		return lat(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc >= 4 && strcmp(argv[1], "idle") == 0)
		return idle(argv[2], atoi(argv[3]));
	if (argc >= 5 && strcmp(argv[1], "tps") == 0)
		return tps(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc >= 6 && strcmp(argv[1], "dl") == 0)
		return dl(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10), atof(argv[5]));
	if (argc >= 4 && strcmp(argv[1], "dns-a") == 0)
		return dns_a(argv[2], argv[3]);
	if (argc >= 8 && strcmp(argv[1], "dns") == 0)
		return dns_rate(argv[2], argv[3], atoi(argv[4]), atof(argv[5]),
		    strtoul(argv[6], NULL, 10), strtoul(argv[7], NULL, 10));
	if (argc >= 6 && strcmp(argv[1], "dns") == 0)
		return dns_rate(argv[2], argv[3], atoi(argv[4]), atof(argv[5]), 0, 0);
	fprintf(stderr, "usage: see tests/bench/bridge-load.c\n");
	return 2;
}
